import { SqlClient } from "@effect/sql"
import { type BackfillJob, Backfills } from "@scaledger/db/chain/Backfills"
import {
  type AnnouncementRow,
  type ChangeRow,
  type GapRow,
  key,
  type PauseRow,
  type TransferRow
} from "@scaledger/db/chain/ChainRows"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { utcDateOf } from "@scaledger/domain/CalendarDates"
import { ChainClient, type StockEvent, StockLifecycleTopics } from "@scaledger/domain/chain/ChainClient"
import { Chunk, Data, Effect, Fiber, Option, Stream } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { activate, announcementRow, pendingChange } from "./Activation.js"
import { IngestConfig } from "./IngestConfig.js"
import { PauseChecks } from "./PauseChecks.js"
import { RECORDER } from "./Recorder.js"
import { scanTransfers } from "./TransferScan.js"

/** Blocks of a backfill's first span (see `scanSpan`). */
const FIRST_SPAN_BLOCKS = 1_000
/** The wallet's transfers a span is sized to hold: enough to keep the writes few, few enough to overlap the reads. */
const TRANSFERS_PER_SPAN = 2_000

/**
 * The blocks of the span after one of `blocks` blocks that held `transfers` of the wallet's transfers: as many as
 * should hold about `TRANSFERS_PER_SPAN` at that density, at most four times as many as before and at most `most`.
 */
export const nextSpanBlocks = (blocks: number, transfers: number, most: number): number =>
  Math.max(
    1,
    Math.min(most, blocks * 4, transfers === 0 ? Infinity : Math.floor((blocks * TRANSFERS_PER_SPAN) / transfers))
  )

/** Chain and database reads of the multiplier phase made at once (per token, per change to activate). */
const READS_AT_ONCE = 4

/** A token the wallet touched, and the first block it did (as `ChainStore.tokensOfWallet` lists them). */
interface TouchedToken {
  readonly token: string
  readonly firstBlock: number
}

/** `touched` with the tokens of a span's transfers not yet stored added in, by token. */
const withScanned = (touched: ReadonlyArray<TouchedToken>, transfers: ReadonlyArray<TransferRow>) => {
  const first = new Map(touched.map((t) => [t.token, t.firstBlock]))
  for (const transfer of transfers) {
    const token = key(transfer.token)
    first.set(token, Math.min(first.get(token) ?? transfer.block, transfer.block))
  }
  return [...first.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map((
    [token, firstBlock]
  ): TouchedToken => ({ token, firstBlock }))
}

/** The same tokens with the same first blocks, in any order. */
const sameTokens = (a: ReadonlyArray<TouchedToken>, b: ReadonlyArray<TouchedToken>) => {
  const first = new Map(a.map((t) => [t.token, t.firstBlock]))
  return a.length === b.length && b.every((t) => first.get(t.token) === t.firstBlock)
}

/** The job's row is gone (the wallet was deleted) or another worker holds it: stop without writing. */
export class BackfillAbandoned extends Data.TaggedError("BackfillAbandoned")<{ readonly walletId: string }> {}

/**
 * One wallet's backfill, resumable from its last checkpoint:
 * 1. `transfers`: stock-token transfers to and from the wallet over `[fromBlock, target]` (the head when the job
 *    first ran), with their blocks' times, stored a checkpoint span at a time, each span in one transaction with the
 *    job's progress, so a crash resumes at the span and writes the same rows.
 * 2. `multipliers`: for every token the wallet touched, the announcements over the same range and each change's
 *    activation, confirmed from chain storage where the node still serves it; where it does not, the span of dates
 *    is a coverage gap (`archive_unavailable`), and a read that keeps failing is one too (`rpc_error`).
 * The job ends `complete`, or `partial` when it found gaps; then `paused()` of the tokens it touched is read.
 */
export const runBackfill = (job: BackfillJob, owner: string) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    const store = yield* ChainStore
    const backfills = yield* Backfills
    const sql = yield* SqlClient.SqlClient
    const config = yield* IngestConfig
    const pauseChecks = yield* PauseChecks
    const { finalityDepth } = yield* ChainConfig
    const chainId = job.chainId
    const leaseSeconds = config.backfillLeaseSeconds

    /** The range's end as last read under the row lock: the recorder's first start may extend it (`extendTo`). */
    let storedTarget: number | null = job.targetBlock
    /** Runs `write` in a transaction after checking, under a row lock, that the job is still ours. */
    const checkpoint = <A, E, R>(write: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ target_block: string | null }>`SELECT target_block FROM wallet_backfills
          WHERE wallet_id = ${job.walletId} AND lease_owner = ${owner} FOR UPDATE`
        if (rows.length === 0) return yield* new BackfillAbandoned({ walletId: job.walletId })
        storedTarget = rows[0]!.target_block === null ? null : Number(rows[0]!.target_block)
        return yield* write
      }))

    const renew = Effect.flatMap(backfills.renew(job.walletId, owner, leaseSeconds), (held) =>
      held ? Effect.void : Effect.fail(new BackfillAbandoned({ walletId: job.walletId })))

    let target: number
    let fromBlock = job.fromBlock
    let next = job.nextBlock
    if (job.targetBlock !== null) {
      target = job.targetBlock
    } else {
      const head = yield* chain.headNumber
      // Up to the recorder's cursor at least: it records from the block after it.
      target = yield* sql.withTransaction(Effect.gen(function*() {
        yield* backfills.lockRanges
        const cursor = yield* store.cursor(chainId, RECORDER)
        const end = Option.isSome(cursor) ? Math.max(head, cursor.value.block) : head
        fromBlock = Math.min(config.backfillFromBlock, end)
        yield* checkpoint(backfills.start(job.walletId, fromBlock, end))
        return end
      }))
      next = fromBlock
      yield* Effect.logInfo(`backfill ${job.address}: blocks ${fromBlock} to ${target}`)
    }
    const finalThrough = () =>
      Effect.map(chain.headNumber, (head) => head - finalityDepth)

    /** Whether the range still ends at `target` (read under the row lock of the checkpoint it runs in). */
    const sameRange = (end: number) => Effect.sync(() => storedTarget === end)
    /** Moves on to the multiplier phase unless the range was extended past `end` (inside a checkpoint). */
    const enterMultipliers = (end: number) =>
      Effect.flatMap(sameRange(end), (same) =>
        same ? Effect.as(backfills.enterPhase(job.walletId, "multipliers"), true) : Effect.succeed(false))

    /**
     * The multiplier phase's reads for the tokens the wallet touched (and the first block of each): their
     * announcements and pauses over the range, the changes to activate and the coverage gaps. Reads only.
     */
    const multiplierHistory = (touched: ReadonlyArray<TouchedToken>, fromBlock: number, target: number) =>
      Effect.gen(function*() {
        const tokens = touched.map((t) =>
          t.token
        )
        // The recorder may have passed blocks after `target` without a token the transfers revealed (it watches one
        // no list names from its first span begun after the scan found it): announcements and pauses are read up to
        // the head, where every span begun before that ends.
        const eventsTo = Math.max(target, yield* chain.headNumber)
        const events: Array<StockEvent> = tokens.length === 0 ? [] : yield* chain
          .stockEvents({ tokens, fromBlock, toBlock: eventsTo, topics: StockLifecycleTopics })
          .pipe(
            Stream.runCollect,
            Effect.map((chunks) => Chunk.toReadonlyArray(chunks).flatMap((chunk) => chunk.events)),
            Effect.withSpan("Backfill.lifecycleLogs")
          )
        const announcements: Array<AnnouncementRow> = []
        const pauses: Array<PauseRow> = []
        const eventTimes = yield* chain.blockTimestamps(events.map((event) => event.block))
        for (const event of events) {
          const time = eventTimes.get(event.block)!
          if (event._tag === "MultiplierAnnouncement") announcements.push(announcementRow(event, time))
          if (event._tag === "Pause") {
            pauses.push({
              txHash: event.txHash,
              logIndex: event.logIndex,
              block: event.block,
              time: new Date(time * 1000),
              token: event.token,
              kind: event.kind
            })
          }
        }
        const changes = announcements.map(pendingChange)

        // Where the node keeps no state: the oldest block each token's multiplier can still be read at. A token whose
        // state is readable at the wallet's first transfer of it has no gap.
        // The tokens' reads are independent of each other: made a few at a time, their results taken in order.
        const gaps: Array<GapRow> = []
        const readFloors = new Map<string, number>()
        const floors = yield* Effect.forEach(
          touched,
          ({ firstBlock, token }) => oldestReadableBlock(token, firstBlock, target),
          { concurrency: READS_AT_ONCE }
        )
        for (const [i, { firstBlock, token }] of touched.entries()) {
          const { floor, reason } = floors[i]!
          if (floor === firstBlock) continue
          readFloors.set(token, floor)
          const lastUnreadable = floor - 1
          gaps.push({
            token,
            walletId: job.walletId,
            fromDate: utcDateOf((yield* chain.blockTimestamp(firstBlock)) * 1000),
            toDate: utcDateOf((yield* chain.blockTimestamp(Math.min(lastUnreadable, target))) * 1000),
            reason
          })
        }

        const existing = new Map<string, ChangeRow>()
        const stored = yield* Effect.forEach(tokens, (token) => store.changesOf(chainId, token), {
          concurrency: READS_AT_ONCE
        })
        for (const change of stored.flat()) existing.set(`${change.token}:${change.effectiveAt.getTime()}`, change)
        const toActivate: Array<ChangeRow> = []
        const seen = new Set<string>()
        for (const change of changes) {
          const id = `${change.token}:${change.effectiveAt.getTime()}`
          if (seen.has(id) || existing.get(id)?.status === "active") continue
          seen.add(id)
          toActivate.push(change)
        }
        const activated = yield* Effect.forEach(toActivate, (change) => {
          const floor = readFloors.get(change.token)
          return activate(change, {
            searchFrom: fromBlock,
            head: eventsTo,
            walletId: job.walletId,
            ...(floor === undefined ? {} : { readFloor: floor })
          })
        }, { concurrency: READS_AT_ONCE })
        const activations: Array<ChangeRow> = []
        for (const [i, activation] of activated.entries()) {
          if (Option.isNone(activation)) continue
          activations.push(activation.value.change)
          const floor = readFloors.get(toActivate[i]!.token)
          const gap = activation.value.gap
          // Inside a span already reported as unreadable, the change's own date adds nothing.
          if (Option.isSome(gap) && !(floor !== undefined && gap.value.reason === "archive_unavailable")) {
            gaps.push(gap.value)
          }
        }
        return { tokens, announcements, pauses, changes, activations, gaps }
      })

    /** The multiplier phase's reads begun beside the last span's write (see `multiplierHistory`). */
    let prefetch:
      | {
        readonly touched: ReadonlyArray<TouchedToken>
        readonly fromBlock: number
        readonly target: number
        readonly fiber: Fiber.RuntimeFiber<
          Effect.Effect.Success<ReturnType<typeof multiplierHistory>>,
          Effect.Effect.Error<ReturnType<typeof multiplierHistory>>
        >
      }
      | undefined

    /** A span's blocks: the first `FIRST_SPAN_BLOCKS`, then `nextSpanBlocks` of the span before. */
    let spanBlocks = Math.min(FIRST_SPAN_BLOCKS, config.backfillCheckpointBlocks)
    /** The transfers of `[from, end]` (end at most `to`), and the final block as the scan ended. */
    const scanSpan = (from: number, to: number) =>
      Effect.gen(function*() {
        const spanEnd = Math.min(to, from + spanBlocks - 1)
        const scan = yield* scanTransfers([job.address], from, spanEnd)
        spanBlocks = nextSpanBlocks(spanEnd - from + 1, scan.transfers.length, config.backfillCheckpointBlocks)
        return { spanEnd, scan, finalizedThrough: yield* finalThrough() }
      })

    if (job.phase === "transfers") {
      // Pipelined: while one span is written, the next is read from the chain. Each span is still written in a
      // transaction of its own with the job's progress; the span read ahead is dropped if its write never comes.
      yield* Effect.scoped(Effect.gen(function*() {
        for (;;) {
          let entered = false
          let current = next <= target ? yield* scanSpan(next, target) : undefined
          while (current !== undefined) {
            yield* renew
            const { finalizedThrough, scan, spanEnd } = current
            if (spanEnd === target) {
              // The tokens the wallet will have touched once this span is stored: read their multiplier history
              // while it is written.
              if (prefetch !== undefined) yield* Fiber.interrupt(prefetch.fiber)
              const expected = withScanned(yield* store.tokensOfWallet(chainId, job.address), scan.transfers)
              prefetch = {
                touched: expected,
                fromBlock,
                target,
                fiber: yield* Effect.fork(multiplierHistory(expected, fromBlock, target))
              }
            }
            const ahead = spanEnd < target ? yield* Effect.forkScoped(scanSpan(spanEnd + 1, target)) : undefined
            entered = yield* checkpoint(Effect.gen(function*() {
              // Block rows serve re-org checks: a final block is never replaced, so only the provisional ones go in.
              const blocks = scan.blocks.filter((block) => block.number > finalizedThrough)
              yield* store.writeBatch(chainId, { ...scan, blocks, finalizedThrough })
              yield* backfills.advance(job.walletId, spanEnd + 1, spanEnd - fromBlock + 1)
              // The last span's transaction also enters the next phase: one transaction fewer.
              return spanEnd === target ? yield* enterMultipliers(target) : false
            })).pipe(Effect.withSpan("Backfill.storeTransfers"))
            next = spanEnd + 1
            target = Math.max(target, storedTarget ?? target)
            current = ahead !== undefined
              ? yield* Fiber.join(ahead)
              : next <= target
              ? yield* scanSpan(next, target)
              : undefined
          }
          if (!entered) {
            entered = yield* checkpoint(enterMultipliers(target))
          }
          if (entered) {
            break
          }
          target = Math.max(target, storedTarget ?? target)
        }
      })).pipe(Effect.withSpan("Backfill.transfers"))
    }

    yield* renew
    const touched = yield* store.tokensOfWallet(chainId, job.address)
    // Read while the last span was written, when made for these very tokens and range; else read now.
    const prefetched = prefetch !== undefined && prefetch.target === target && prefetch.fromBlock === fromBlock &&
        sameTokens(prefetch.touched, touched)
      ? prefetch.fiber
      : undefined
    if (prefetched === undefined && prefetch !== undefined) yield* Fiber.interrupt(prefetch.fiber)
    const { activations, announcements, changes, gaps, pauses, tokens } = prefetched === undefined
      ? yield* multiplierHistory(touched, fromBlock, target)
      : yield* Fiber.join(prefetched)

    const finalizedThrough = yield* finalThrough()
    const fromTime = new Date((yield* chain.blockTimestamp(fromBlock)) * 1000)
    const finished = yield* checkpoint(Effect.gen(function*() {
      // Extended meanwhile (and re-opened at the block after `target`): the next claim goes on from there.
      if (!(yield* sameRange(target))) return false
      yield* sql`DELETE FROM coverage_gaps WHERE wallet_id = ${job.walletId}`
      yield* store.writeBatch(chainId, {
        announcements,
        pauses,
        changes,
        activations,
        gaps,
        coverage: tokens.map((token) => ({ token, fromBlock, fromTime })),
        finalizedThrough
      })
      yield* backfills.finish(job.walletId)
      return true
    }))
    if (!finished) {
      return yield* Effect.logInfo(`backfill ${job.address}: range extended to block ${storedTarget}; continues`)
    }
    yield* backfills.summarizeRecorded
    yield* Effect.logInfo(`backfill ${job.address}: done (${touched.length} tokens, ${gaps.length} coverage gaps)`)
    // Whether the tokens it touched are paused now, whatever their (possibly unscanned) events said.
    yield* Effect.flatMap(chain.blockTimestamp(target), (time) =>
      pauseChecks.check(tokens, target, new Date(time * 1000))).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`backfill ${job.address}: pause reads skipped: ${error.message}`)
        )
      )
  })

/**
 * The oldest block in `[from, to]` at which the token's multiplier state can be read: `from` itself on an archive
 * node; otherwise found by binary search (a pruned node serves a contiguous recent window). A block whose read
 * reverts or answers what does not decode (an older implementation, a node answering `0x` for old state) is
 * unreadable as well; `reason` says which kind of gap the blocks before the floor are.
 */
export const oldestReadableBlock = (token: string, from: number, to: number) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    let reason: "archive_unavailable" | "rpc_error" = "archive_unavailable"
    const unreadable = (why: typeof reason) =>
      Effect.sync(() => {
        if (why === "rpc_error") reason = why
        return false
      })
    const readable = (block: number) =>
      chain.uiMultiplier(token, block).pipe(
        Effect.as(true),
        Effect.catchTags({
          StateUnavailable: () => unreadable("archive_unavailable"),
          ContractReverted: () => unreadable("rpc_error"),
          ChainDecodeError: () => unreadable("rpc_error")
        })
      )
    if (yield* readable(from)) return { floor: from, reason }
    let low = from + 1
    let high = to + 1
    while (low < high) {
      const mid = low + Math.floor((high - low) / 2)
      if (yield* readable(mid)) high = mid
      else low = mid + 1
    }
    return { floor: low, reason }
  })
