import { type FeedProgress, type PriceRoundRow, PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { ChainClient, type RoundData } from "@scaledger/domain/chain/ChainClient"
import { Cause, Duration, Effect, Layer, Option, Schedule } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { ReadHealth } from "../chain/ReadHealth.js"
import { TokenRegistry } from "../chain/TokenRegistry.js"
import { asSingleton } from "../Singleton.js"
import { IngestConfig } from "./IngestConfig.js"
import { PriceWake } from "./PriceWake.js"

const PHASE_SHIFT = 64n
const AGGREGATOR_MASK = (1n << PHASE_SHIFT) - 1n

/** A proxy's round id is `(phaseId << 64) | aggregatorRoundId`. */
export const phaseOf = (roundId: bigint): bigint => roundId >> PHASE_SHIFT
export const aggregatorRoundOf = (roundId: bigint): bigint => roundId & AGGREGATOR_MASK
export const proxyRoundId = (phase: bigint, aggregatorRound: bigint): bigint => (phase << PHASE_SHIFT) | aggregatorRound

/** Rounds of one phase read at once while walking down. */
const READ_WINDOW = 4

export interface PriceFeedTarget {
  /** Checksummed. */
  readonly feed: string
  readonly token: string
  readonly symbol: string
}

/** `floor`: the walk reached a round already stored; `bound`: a round at or before the time asked for; `start`: no earlier round exists. */
type WalkEnd = "floor" | "bound" | "start"

interface Batch {
  /** Newest first. */
  readonly rounds: ReadonlyArray<RoundData>
  readonly end: WalkEnd | null
  /** Where the walk resumes. */
  readonly next: bigint
}

const retryable = (error: { readonly _tag: string }) => error._tag !== "ContractReverted"

/**
 * Records the price feeds' rounds (`price_rounds`), per feed of a listed token:
 * - **follow**: every `pricePollMs`, `latestRoundData()` read at the last final block (head − finality depth, so
 *   no round a re-org may drop is stored); a round newer than the newest stored is stored, and the rounds between
 *   are walked down with `getRoundData` and stored too (a catch-up after downtime resumes where it stopped);
 * - **history**: from the oldest stored round down with `getRoundData(roundId − 1)` until the round in force at
 *   the token's bound (`PRICE_HISTORY_FROM`, or its earliest stored transfer less `priceHistoryMarginSeconds`,
 *   whichever is earlier; no bound, no history), `priceBatchRounds` rounds per transaction, so a restart resumes.
 * A round that reverts (or has `updatedAt` 0) ends its phase; below a phase's first round the walk goes on at the
 * last round of the nearest earlier phase that has rounds, found by probing `getRoundData` (doubling, then
 * bisecting), and ends where no earlier phase has any.
 */
export const makePriceRecorder = Effect.gen(function*() {
  const chain = yield* ChainClient
  const registry = yield* TokenRegistry
  const rounds = yield* PriceRounds
  const config = yield* IngestConfig
  const { finalityDepth } = yield* ChainConfig
  const health = yield* ReadHealth
  const chainId = chain.chainId

  const targets: ReadonlyArray<PriceFeedTarget> = [
    ...new Map(
      registry.tokens.flatMap((token) =>
        token.feed === undefined
          ? []
          : [
            [token.feed.address.toLowerCase(), {
              feed: token.feed.address,
              token: token.address,
              symbol: token.symbol
            }] as const
          ]
      )
    ).values()
  ]

  const warned = new Set<string>()
  const warnOnce = (id: string, message: string) =>
    Effect.suspend(() => {
      if (warned.has(id)) return Effect.void
      warned.add(id)
      return Effect.logWarning(message)
    })

  const row = (target: PriceFeedTarget, decimals: number, round: RoundData): PriceRoundRow => ({
    feed: target.feed,
    token: target.token,
    roundId: round.roundId,
    answer: round.answer,
    decimals,
    startedAt: round.startedAt,
    updatedAt: round.updatedAt,
    answeredInRound: round.answeredInRound
  })

  /** A round of the feed; none when it does not exist (reverts, or an empty round with `updatedAt` 0). */
  const read = (feed: string, roundId: bigint) =>
    chain.getRoundData(feed, roundId).pipe(
      Effect.map((round) => (round.updatedAt === 0 ? Option.none() : Option.some(round))),
      Effect.catchTag("ContractReverted", () => Effect.succeedNone)
    )

  /** The last round of `phase` above aggregator round `above` (which exists, or is 0); none when there is none. */
  const lastRoundOfPhase = (feed: string, phase: bigint, above: bigint) =>
    Effect.gen(function*() {
      let low = above
      let high = AGGREGATOR_MASK + 1n
      let found = Option.none<RoundData>()
      for (let step = 1n; low + step <= AGGREGATOR_MASK; step *= 2n) {
        const candidate = low + step
        const round = yield* read(feed, proxyRoundId(phase, candidate))
        if (Option.isNone(round)) {
          high = candidate
          break
        }
        low = candidate
        found = round
      }
      while (high - low > 1n) {
        const middle: bigint = low + (high - low) / 2n
        const round = yield* read(feed, proxyRoundId(phase, middle))
        if (Option.isNone(round)) high = middle
        else {
          low = middle
          found = round
        }
      }
      return found
    })

  /** The newest round of the nearest phase below `phase` that has one, not at or below `floor`. */
  const lastRoundBefore = (feed: string, phase: bigint, floor: bigint | null) =>
    Effect.gen(function*() {
      const lowestPhase = floor === null ? 1n : phaseOf(floor)
      for (let earlier = phase - 1n; earlier >= 1n && earlier >= lowestPhase; earlier--) {
        const above = floor !== null && phaseOf(floor) === earlier ? aggregatorRoundOf(floor) : 0n
        const round = yield* lastRoundOfPhase(feed, earlier, above)
        if (Option.isSome(round)) return round
      }
      return Option.none<RoundData>()
    })

  /**
   * Up to `size` rounds from `from` downwards (newest first), stopping above `floor`, after the first round at or
   * before `bound`, or where no earlier round exists.
   */
  const walkDown = (
    feed: string,
    from: bigint,
    limits: { readonly floor: bigint | null; readonly bound: number | null },
    size: number
  ) =>
    Effect.gen(function*() {
      const found: Array<RoundData> = []
      let next = from
      const reachedBound = (round: RoundData) => limits.bound !== null && round.updatedAt <= limits.bound
      while (found.length < size) {
        if (limits.floor !== null && next <= limits.floor) return { rounds: found, end: "floor", next } satisfies Batch
        const phase = phaseOf(next)
        const aggregatorRound = aggregatorRoundOf(next)
        if (aggregatorRound === 0n) {
          const earlier = yield* lastRoundBefore(feed, phase, limits.floor)
          if (Option.isNone(earlier)) {
            // With a floor, nothing exists between it and here.
            return { rounds: found, end: limits.floor === null ? "start" : "floor", next } satisfies Batch
          }
          found.push(earlier.value)
          next = earlier.value.roundId - 1n
          if (reachedBound(earlier.value)) return { rounds: found, end: "bound", next } satisfies Batch
          continue
        }
        let count = BigInt(Math.min(READ_WINDOW, size - found.length))
        if (count > aggregatorRound) count = aggregatorRound
        if (
          limits.floor !== null && phaseOf(limits.floor) === phase &&
          count > aggregatorRound - aggregatorRoundOf(limits.floor)
        ) {
          count = aggregatorRound - aggregatorRoundOf(limits.floor)
        }
        const ids = Array.from({ length: Number(count) }, (_, i) => next - BigInt(i))
        const window = yield* Effect.forEach(ids, (id) => read(feed, id), { concurrency: READ_WINDOW })
        for (let i = 0; i < window.length; i++) {
          const round = window[i]!
          if (Option.isNone(round)) {
            next = proxyRoundId(phase, 0n)
            break
          }
          found.push(round.value)
          next = ids[i]! - 1n
          if (reachedBound(round.value)) return { rounds: found, end: "bound", next } satisfies Batch
        }
      }
      return { rounds: found, end: null, next } satisfies Batch
    })

  /** The feed's first round: its latest, with the decimals read once from the feed. */
  const begin = (target: PriceFeedTarget, latest: RoundData) =>
    Effect.gen(function*() {
      const decimals = yield* chain.feedDecimals(target.feed)
      if (decimals !== 8) {
        yield* Effect.logWarning(
          `prices: feed ${target.feed} (${target.symbol}) has ${decimals} decimals; stored as is, rescaled to 8 for the ledger`
        )
      }
      const progress: FeedProgress = {
        feed: target.feed,
        token: target.token,
        decimals,
        newestRoundId: latest.roundId,
        oldestRoundId: latest.roundId,
        oldestUpdatedAt: latest.updatedAt,
        historyStart: false,
        fill: null
      }
      yield* rounds.store(chainId, [row(target, decimals, latest)], progress)
      yield* Effect.logInfo(
        `prices: recording ${target.symbol} from feed ${target.feed}, round ${latest.roundId} ` +
          `(phase ${phaseOf(latest.roundId)}, round ${aggregatorRoundOf(latest.roundId)})`
      )
      return progress
    })

  /** Stores every round up to `latest` that is newer than the newest stored, walking down from `latest`. */
  const follow = (target: PriceFeedTarget, start: FeedProgress, latest: RoundData) =>
    Effect.gen(function*() {
      let progress = start
      while (true) {
        if (progress.fill === null) {
          if (latest.roundId <= progress.newestRoundId) return progress
          progress = { ...progress, fill: { top: latest.roundId, next: latest.roundId - 1n } }
          yield* rounds.store(chainId, [row(target, progress.decimals, latest)], progress)
        }
        const fill = progress.fill!
        const batch = yield* walkDown(
          target.feed,
          fill.next,
          { floor: progress.newestRoundId, bound: null },
          config.priceBatchRounds
        )
        progress = batch.end === null
          ? { ...progress, fill: { top: fill.top, next: batch.next } }
          : { ...progress, newestRoundId: fill.top, fill: null }
        yield* rounds.store(chainId, batch.rounds.map((round) => row(target, progress.decimals, round)), progress)
      }
    })

  /** One batch of history below the oldest stored round; true when more remains. */
  const walkHistory = (target: PriceFeedTarget, progress: FeedProgress, bound: number | null) =>
    Effect.gen(function*() {
      if (progress.historyStart || bound === null || progress.oldestUpdatedAt <= bound) return false
      const batch = yield* walkDown(
        target.feed,
        progress.oldestRoundId - 1n,
        { floor: null, bound },
        config.priceBatchRounds
      )
      const oldest = batch.rounds.at(-1)
      yield* rounds.store(
        chainId,
        batch.rounds.map((round) => row(target, progress.decimals, round)),
        {
          ...progress,
          ...(oldest === undefined ? {} : { oldestRoundId: oldest.roundId, oldestUpdatedAt: oldest.updatedAt }),
          historyStart: batch.end === "start"
        }
      )
      if (batch.end !== null) {
        const reached = new Date((oldest?.updatedAt ?? progress.oldestUpdatedAt) * 1000).toISOString()
        yield* Effect.logInfo(
          `prices: ${target.symbol}: history walked back to ${reached}${
            batch.end === "start" ? " (the feed's first round)" : ""
          }`
        )
      }
      return batch.end === null
    })

  /** Follow, then one batch of history; true when the feed has more history to walk. */
  const syncFeed = (target: PriceFeedTarget, block: number, bound: number | null) =>
    Effect.gen(function*() {
      const latest = yield* chain.latestRoundData(target.feed, block)
      if (latest.updatedAt === 0) return false
      const stored = yield* rounds.progress(chainId, target.feed)
      const started = Option.isSome(stored) ? stored.value : yield* begin(target, latest)
      const progress = yield* follow(target, started, latest)
      return yield* walkHistory(target, progress, bound)
    })

  /** Per token address (lowercase), the time its history must reach back to; null: none. */
  const bounds = Effect.gen(function*() {
    const firsts = yield* rounds.firstTransfers(chainId, targets.map((t) => t.token))
    return new Map(targets.map((target) => {
      const first = firsts.get(target.token.toLowerCase())
      const candidates = [
        ...(config.priceHistoryFrom === null ? [] : [config.priceHistoryFrom]),
        ...(first === undefined ? [] : [first - config.priceHistoryMarginSeconds])
      ]
      return [target.token.toLowerCase(), candidates.length === 0 ? null : Math.min(...candidates)] as const
    }))
  })

  const retry = Schedule.exponential(Duration.millis(200), 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.seconds(30))),
    Schedule.intersect(Schedule.recurs(5))
  )

  /** One pass over `feeds` at the last final block; answers the feeds that have more history to walk. */
  const tick = (feeds: ReadonlyArray<PriceFeedTarget>) =>
    Effect.gen(function*() {
      if (feeds.length === 0) return []
      let unreachable = false
      const block = Math.max(0, (yield* chain.headNumber) - finalityDepth)
      const boundOf = yield* bounds
      const more = yield* Effect.forEach(feeds, (target) =>
        syncFeed(target, block, boundOf.get(target.token.toLowerCase()) ?? null).pipe(
          Effect.retry({ schedule: retry, while: retryable }),
          Effect.catchAll((error) =>
            error._tag === "ContractReverted"
              ? Effect.as(
                warnOnce(
                  target.feed,
                  `prices: feed ${target.feed} (${target.symbol}) gives no rounds: ${error.message}`
                ),
                false
              )
              : Effect.as(
                Effect.flatMap(health.failed("prices", error), (reported) => {
                  if (reported) {
                    unreachable = true
                  }
                  return reported ? Effect.void : Effect.logWarning(
                    `prices: ${target.symbol} (feed ${target.feed}) failed, next try in the next pass: ${error.message}`
                  )
                }),
                false
              )
          )
        ), { concurrency: config.priceConcurrency })
      if (!unreachable) {
        yield* health.succeeded("prices")
      }
      return feeds.filter((_, i) =>
        more[i]
      )
    })

  /** Every feed up to date and every history walked to its bound. */
  const catchUp = Effect.gen(function*() {
    let pending = yield* tick(targets)
    while (pending.length > 0) pending = yield* tick(pending)
  })

  const wake = yield* Effect.serviceOption(PriceWake)
  const pass = catchUp.pipe(
    Effect.catchAllCause((cause) =>
      Effect.flatMap(
        health.failed("prices", Option.getOrUndefined(Cause.failureOption(cause))),
        (reported) => reported ? Effect.void : Effect.logWarning("prices: pass failed", cause)
      )
    )
  )
  // Every `pricePollMs`, and at once when woken (a backfill ended: its transfers need price history).
  const run = Option.match(wake, {
    onNone: () => Effect.repeat(pass, Schedule.spaced(Duration.millis(config.pricePollMs))),
    onSome: (signal) => Effect.forever(Effect.zipRight(pass, signal.sleep(Duration.millis(config.pricePollMs))))
  })
  /**
   * What a worker process does while another one polls prices: a pass when a backfill of its own ends (the poller
   * would only see those transfers at its next poll), else nothing.
   */
  const standBy = (wait: Duration.Duration) =>
    Option.match(wake, {
      onNone: () => Effect.sleep(wait),
      onSome: (signal) => Effect.flatMap(signal.sleep(wait), (woken) => woken ? pass : Effect.void)
    })

  return { targets, tick, catchUp, run, standBy } as const
})

/**
 * The price recorder as a fiber owned by the layer's scope (shutdown interrupts it): one worker process of the
 * deployment polls; the others only make the pass their own ended backfills ask for.
 */
export const PriceRecorderLive = Layer.scopedDiscard(
  Effect.flatMap(
    makePriceRecorder,
    (recorder) => Effect.forkScoped(asSingleton("price recorder", recorder.standBy)(recorder.run))
  )
)
