import { SqlClient } from "@effect/sql"
import { Backfills } from "@scaledger/db/chain/Backfills"
import type { AnnouncementRow, BlockRow, ChangeRow, GapRow, PauseRow } from "@scaledger/db/chain/ChainRows"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { PauseReads } from "@scaledger/db/chain/PauseReads"
import {
  type BlockHeader,
  ChainClient,
  type StockEvent,
  StockLifecycleTopics
} from "@scaledger/domain/chain/ChainClient"
import { multiplierKind } from "@scaledger/domain/chain/MultiplierKind"
import { Cause, Chunk, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { ReadHealth } from "../chain/ReadHealth.js"
import { asSingleton } from "../Singleton.js"
import { activate, announcementRow, pendingChange } from "./Activation.js"
import { IngestConfig } from "./IngestConfig.js"
import { PauseChecks } from "./PauseChecks.js"
import { TokenCatalog } from "./TokenCatalog.js"
import { scanTransfers } from "./TransferScan.js"

export const RECORDER = "recorder"

const headerRow = (header: BlockHeader): BlockRow => ({
  number: header.number,
  hash: header.hash,
  parentHash: header.parentHash,
  time: new Date(header.timestamp * 1000)
})

/**
 * Warns, once, when the node serves another chain than the configured `CHAIN_ID` (an `RPC_URL` of another network,
 * or a local node left at its own id): records are stored under the configured id, so reads and the token list's
 * chain disagree with the node's. Says nothing when the node cannot be asked; the reads report that themselves.
 */
export const warnOnOtherChain = Effect.gen(function*() {
  const chain = yield* ChainClient
  const served = yield* chain.nodeChainId.pipe(Effect.option)
  if (Option.isSome(served) && served.value !== chain.chainId) {
    yield* Effect.logWarning(
      `recorder: the node serves chain ${served.value}, but CHAIN_ID is ${chain.chainId}. Records are stored as ` +
        `chain ${chain.chainId}'s: set CHAIN_ID=${served.value} for this node, or point RPC_URL at chain ` +
        `${chain.chainId}.`
    )
  }
})

/**
 * The live recorder: from the block after its persisted cursor to the head, every multiplier announcement and
 * pause of every known stock token, every stock-token transfer of every watched address, and the silent
 * activation of announced changes (read from chain storage at the first block at or after `effectiveAt`). It
 * starts, on its first run, at the head ("from the next block"), extending every backfill that ended below that head
 * to it (`Backfills.extendTo`: the blocks between would be nobody's), and on every later start catches up from its
 * cursor, so a change that activated while the service was down is still read where the node keeps that state.
 * A re-org below the cursor (its block hash changed) rolls the record back to the common ancestor first.
 * `paused()` of every token is read at the first block it reaches after each start and after each outage (until
 * such a read goes through), and of a token at the block of each of its Paused/Unpaused logs (see `PauseChecks`). A step whose chain reads fail past the retry budget turns
 * the `recorder` reader degraded (`ReadHealth`: one log line, the `degraded-read` alert); its next success ends it.
 */
export const makeRecorder = Effect.gen(function*() {
  const chain = yield* ChainClient
  const store = yield* ChainStore
  const catalog = yield* TokenCatalog
  const sql = yield* SqlClient.SqlClient
  const { finalityDepth } = yield* ChainConfig
  const config = yield* IngestConfig
  const pauseChecks = yield* PauseChecks
  const pauseReads = yield* PauseReads
  const health = yield* ReadHealth
  const backfills = yield* Backfills
  const chainId = chain.chainId
  /** Whether this process has read every token's `paused()` yet (since its start or the last outage). */
  let pausesReadSinceStart = false
  const readAllPauses = (tokens: ReadonlyArray<string>, block: number, time: Date) =>
    Effect.gen(function*() {
      yield* pauseChecks.check(tokens, block, time)
      const state = yield* health.state("pauses")
      pausesReadSinceStart = Option.isNone(state) || state.value.status === "ok"
    })

  /** On the very first run: the cursor at the head, and changes already scheduled but not yet in force. */
  const begin = (head: BlockHeader) =>
    Effect.gen(function*() {
      const tokens = yield* catalog.stockTokens
      const states = yield* Effect.forEach(tokens, (token) =>
        Effect.all([
          chain.uiMultiplier(token, head.number),
          chain.newUIMultiplier(token, head.number),
          chain.effectiveAt(token, head.number)
        ]).pipe(
          Effect.map(([inForce, next, effectiveAt]) => Option.some({ token, inForce, next, effectiveAt })),
          // A contract that does not answer as a `Stock` does is passed over. A node that cannot be reached fails the
          // step (retried): a change staged now shows only in this state, and would be lost for good.
          Effect.catchIf(
            (error) =>
              error._tag === "ContractReverted" || error._tag === "ChainDecodeError" || error._tag === "RpcError",
            (error) =>
              Effect.as(
                Effect.logWarning(`could not read the multiplier state of ${token}: ${error.message}`),
                Option.none()
              )
          )
        ), { concurrency: 4 })
      const known = states.flatMap(Option.toArray)
      const scheduled = known
        .filter((state) => state.next !== state.inForce && state.effectiveAt > head.timestamp)
        .map((state): ChangeRow => ({
          token: state.token,
          effectiveAt: new Date(state.effectiveAt * 1000),
          oldMultiplier: state.inForce,
          newMultiplier: state.next,
          kind: multiplierKind(state.inForce, state.next),
          status: "pending",
          source: null,
          block: null,
          blockTime: null,
          announcedAt: null,
          announcedBlock: null
        }))
      const inForce = new Map(known.map((state) => [state.token, state.inForce]))
      const fromTime = new Date(head.timestamp * 1000)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* backfills.lockRanges
        // Backfills that ended below the head would leave the blocks up to it to nobody. (Their rows are locked
        // before any block row, as a backfill's checkpoint does.)
        yield* backfills.extendTo(chainId, head.number)
        yield* store.writeBatch(chainId, {
          blocks: [headerRow(head)],
          changes: scheduled,
          coverage: tokens.map((token) => {
            const multiplier = inForce.get(token)
            return { token, fromBlock: head.number + 1, fromTime, ...(multiplier === undefined ? {} : { multiplier }) }
          })
        })
        yield* store.setCursor(chainId, RECORDER, headerRow(head))
      }))
      yield* Effect.logInfo(`recorder: watching chain ${chainId} from block ${head.number + 1}`)
      yield* readAllPauses(tokens, head.number, fromTime)
    })

  /** The block the stored cursor and the chain still agree on; the cursor's own block when nothing changed. */
  const commonAncestor = (cursorBlock: number, cursorHash: string) =>
    Effect.gen(function*() {
      const onChain = yield* chain.block(cursorBlock)
      if (onChain.hash === cursorHash) return cursorBlock
      const stored = yield* store.storedBlocksBelow(chainId, cursorBlock - 1, finalityDepth + 1)
      for (const block of stored) {
        const current = yield* chain.block(block.number)
        if (current.hash === block.hash) return block.number
      }
      return Math.max(0, cursorBlock - finalityDepth - 1)
    })

  const rollBackIfReorged = Effect.gen(function*() {
    const cursor = yield* store.cursor(chainId, RECORDER)
    if (Option.isNone(cursor)) return
    const fork = yield* commonAncestor(cursor.value.block, cursor.value.hash)
    if (fork === cursor.value.block) return
    const forkHeader = yield* chain.block(fork)
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* store.rollbackAbove(chainId, fork)
      yield* pauseReads.rollbackAbove(chainId, fork)
      yield* store.undateWatchBlocksAbove(fork)
      yield* store.writeBatch(chainId, { blocks: [headerRow(forkHeader)] })
      yield* store.setCursor(chainId, RECORDER, headerRow(forkHeader))
    }))
    yield* Effect.logWarning(`recorder: re-org below block ${cursor.value.block}; record rolled back to block ${fork}`)
  })

  /** Records `[from, to]` and moves the cursor to `to`, all in one transaction. */
  const record = (from: number, to: BlockHeader, startedBlock: number) =>
    Effect.gen(function*() {
      const wallets = yield* store.watchedAddresses
      const before = new Set(yield* catalog.stockTokens)
      // First the transfers: a token no list names that one of them reveals is watched from this span on, its
      // announcements and pauses in it included.
      const scan = yield* scanTransfers(wallets, from, to.number)
      const tokens = yield* catalog.stockTokens
      const revealed = tokens.filter((token) => !before.has(token))
      const events: Array<StockEvent> = tokens.length === 0 ? [] : yield* chain
        .stockEvents({ tokens, fromBlock: from, toBlock: to.number, topics: StockLifecycleTopics })
        .pipe(Stream.runCollect, Effect.map((chunks) => Chunk.toReadonlyArray(chunks).flatMap((chunk) => chunk.events)))
      // Their record starts at this span, from the value in force just before it (unknown if it cannot be read).
      const fromTime = revealed.length === 0 ? to.timestamp : yield* chain.blockTimestamp(from)
      const coverage = yield* Effect.forEach(revealed, (token) =>
        chain.uiMultiplier(token, from - 1).pipe(
          Effect.map((multiplier) => ({ token, fromBlock: from, fromTime: new Date(fromTime * 1000), multiplier })),
          Effect.orElseSucceed(() => ({ token, fromBlock: from, fromTime: new Date(fromTime * 1000) }))
        ))

      const timeOf = (block: number) => chain.blockTimestamp(block)
      const announcements: Array<AnnouncementRow> = []
      const pauses: Array<PauseRow> = []
      for (const event of events) {
        if (event._tag === "MultiplierAnnouncement") {
          announcements.push(announcementRow(event, yield* timeOf(event.block)))
        }
        if (event._tag === "Pause") {
          pauses.push({
            txHash: event.txHash,
            logIndex: event.logIndex,
            block: event.block,
            time: new Date((yield* timeOf(event.block)) * 1000),
            token: event.token,
            kind: event.kind
          })
        }
      }
      const newChanges = announcements.map(pendingChange)

      // Changes announced in this span may already be in force within it (an immediate update, a short lead).
      const pending = [...(yield* store.pendingChanges(chainId)), ...newChanges]
      const activations: Array<ChangeRow> = []
      const gaps: Array<GapRow> = []
      const done = new Set<string>()
      for (const change of pending) {
        const id = `${change.token}:${change.effectiveAt.getTime()}`
        if (done.has(id)) continue
        done.add(id)
        // Not due by the span's last block: no block of it can be the first at or after effectiveAt.
        if (change.effectiveAt.getTime() > to.timestamp * 1000) continue
        const activation = yield* activate(change, { searchFrom: startedBlock, head: to.number, walletId: null })
        if (Option.isSome(activation)) {
          activations.push(activation.value.change)
          if (Option.isSome(activation.value.gap)) gaps.push(activation.value.gap.value)
        }
      }

      // Blocks of this span recorded already (a backfill ran ahead of the recorder) under a hash the chain no longer
      // has: a re-org replaced them, and what they held goes.
      const recorded = yield* store.recordedBlockHashes(chainId, from, to.number)
      const canonical = new Map<number, string>([
        ...scan.blocks.map((block) => [block.number, block.hash] as const),
        ...events.map((event) => [event.block, event.blockHash] as const),
        [to.number, to.hash]
      ])
      const unread = [...new Set(recorded.map((row) => row.block).filter((block) => !canonical.has(block)))]
      for (const header of yield* Effect.forEach(unread, (block) => chain.block(block), { concurrency: 4 })) {
        canonical.set(header.number, header.hash)
      }
      const stale = recorded.filter((row) => canonical.get(row.block) !== row.hash)

      // `watchingFrom` names a block; its date is that block's, filled in once the block is recorded.
      const undated = yield* store.undatedWatchBlocks(from, to.number)
      const watchTimes = yield* Effect.forEach(undated, (block) =>
        Effect.map(
          block === to.number ? Effect.succeed(to.timestamp) : chain.blockTimestamp(block),
          (time) => ({ block, time: new Date(time * 1000) })
        ))

      yield* sql.withTransaction(Effect.gen(function*() {
        // First: the lock it takes comes before any wallet row this transaction locks (a removal waits on both).
        const transfers = yield* store.stillWatched(scan.transfers)
        yield* sql`UPDATE wallets SET watching_from_block = ${from} WHERE watching_from_block IS NULL`
        yield* store.dateWatchBlocks(watchTimes)
        yield* store.dropReplacedBlocks(chainId, stale)
        yield* store.writeBatch(chainId, {
          blocks: [...scan.blocks, headerRow(to)],
          transfers,
          announcements,
          pauses,
          changes: newChanges,
          activations,
          gaps,
          coverage,
          finalizedThrough: to.number - finalityDepth
        })
        yield* store.setCursor(chainId, RECORDER, headerRow(to))
      }))

      // A Paused/Unpaused log says what `tokenPaused()` became; `paused()` at its block says whether the token is.
      const pauseBlocks = new Map<string, PauseRow>()
      for (const pause of pauses) {
        if (pause.kind === "Paused" || pause.kind === "Unpaused") {
          pauseBlocks.set(`${pause.token}:${pause.block}`, pause)
        }
      }
      for (const pause of pauseBlocks.values()) yield* pauseChecks.check([pause.token], pause.block, pause.time)
    })

  /** Brings the record up to `head`, in spans of at most `recorderMaxSpan` blocks. */
  const step = (head: BlockHeader) =>
    Effect.gen(function*() {
      yield* rollBackIfReorged
      const cursor = yield* store.cursor(chainId, RECORDER)
      if (Option.isNone(cursor)) return yield* begin(head)
      let from = cursor.value.block + 1
      while (from <= head.number) {
        const to = Math.min(head.number, from + config.recorderMaxSpan - 1)
        const header = to === head.number ? head : yield* chain.block(to)
        yield* record(from, header, cursor.value.startedBlock)
        from = to + 1
      }
      if (!pausesReadSinceStart) {
        yield* readAllPauses(yield* catalog.stockTokens, head.number, new Date(head.timestamp * 1000))
      }
    })

  const retry = Schedule.exponential(Duration.millis(500), 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.minutes(1)))
  )

  /**
   * Steps on new heads (gathered for `recorderBatchMs`), forever; a failed step is retried with backoff. A chain
   * read past the retry budget is reported to `ReadHealth` (logged once per outage), anything else logged per try.
   */
  const run = Effect.gen(function*() {
    yield* Effect.fork(Effect.provideService(warnOnOtherChain, ChainClient, chain))
    yield* chain.newHeads.pipe(
      Stream.groupedWithin(10_000, Duration.millis(config.recorderBatchMs)),
      Stream.filterMap(Chunk.last),
      Stream.mapEffect((head) =>
        step(head).pipe(
          Effect.tap(() => health.succeeded("recorder")),
          Effect.tapError((error) =>
            Effect.flatMap(health.failed("recorder", error), (reported) => {
              // After an outage every token's `paused()` is read again.
              if (reported) pausesReadSinceStart = false
              return reported
                ? Effect.void
                : Effect.logWarning(`recorder: step to block ${head.number} failed, retrying: ${error.message}`)
            })
          ),
          Effect.retry(retry)
        )
      ),
      Stream.runDrain,
      Effect.tapErrorCause((cause) =>
        Effect.flatMap(
          health.failed("recorder", Option.getOrUndefined(Cause.failureOption(cause))),
          (reported) => {
            if (reported) pausesReadSinceStart = false
            return reported
              ? Effect.void
              : Effect.logWarning("recorder: head subscription failed; resubscribing", cause)
          }
        )
      ),
      Effect.retry(retry)
    )
  })

  return { step, run } as const
})

/**
 * The recorder as a fiber owned by the layer's scope (shutdown interrupts it), run by one worker process of the
 * deployment at a time.
 */
export const RecorderLive = Layer.scopedDiscard(
  Effect.flatMap(makeRecorder, (recorder) => Effect.forkScoped(asSingleton(RECORDER)(recorder.run)))
)
