import type { SqlError } from "@effect/sql/SqlError"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { FxRates } from "@scaledger/db/FxRates"
import {
  type AccountLedgerInputs,
  LedgerInputs,
  type LedgerToken,
  type LoadSince,
  type RecordedTransfer,
  type TransfersSeen
} from "@scaledger/db/ledger/LedgerInputs"
import { type DisposalRecord, LedgerStore, type RowSink } from "@scaledger/db/ledger/LedgerStore"
import { utcDateOf } from "@scaledger/domain/CalendarDates"
import { durationSetting, nonNegativeInteger, positiveInteger } from "@scaledger/domain/ConfigValues"
import type { ReportingCurrency } from "@scaledger/domain/Currency"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { MultiplierEvent, PriceTable, RateTable } from "@scaledger/domain/ledger/LedgerInput"
import type { LedgerReport } from "@scaledger/domain/ledger/LedgerReport"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import { Clock, Config, Context, Data, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { ChainConfig } from "../chain/ChainConfig.js"
import { keepingLease } from "../LeaseKeeper.js"
import { chainOrdered, mergeInto } from "./ChainOrder.js"
import { cursorTime, historyKey, type LedgerCheckpoint, multiplierIds, settingsKey } from "./Checkpoint.js"
import { planLotRows, planStepRows } from "./LotPlan.js"
import { planPositionRows } from "./PositionPlan.js"
import { makePriceHistory } from "./PriceHistory.js"

export type { LedgerCheckpoint } from "./Checkpoint.js"

/** Where a build finds prices: the feed rounds recorded per token (keyed by the ledger's token symbol). */
export class LedgerPrices extends Context.Tag("@scaledger/workers/ledger/LedgerPrices")<LedgerPrices, {
  readonly pricesFor: (chainId: number, tokens: ReadonlyArray<LedgerToken>) => Effect.Effect<PriceTable, SqlError>
}>() {
  /** No prices recorded: every figure that needs one is null (never zero). */
  static readonly None = Layer.succeed(LedgerPrices, { pricesFor: () => Effect.succeed({}) })
}

export const LedgerBuilderConfig = Config.all({
  poll: durationSetting("LEDGER_POLL_MS", "millis", 500, { positive: true }),
  /** Chain data arrives in small steps: an account is rebuilt for it at most this often. Replays do not wait. */
  minInterval: durationSetting("LEDGER_MIN_INTERVAL_MS", "millis", 2_000),
  /** A build older than this is made again: "now" moves the year's figures and the current value. */
  maxAge: durationSetting("LEDGER_MAX_AGE_SECONDS", "seconds", 3_600, { positive: true }),
  concurrency: positiveInteger("LEDGER_CONCURRENCY", 2),
  lease: durationSetting("LEDGER_LEASE_SECONDS", "seconds", 60, { positive: true }),
  /** How many accounts' checkpoints (the ledger state of the last build) a worker keeps to build incrementally. */
  checkpoints: nonNegativeInteger("LEDGER_CHECKPOINTS", 16),
  /** The most events the kept checkpoints may hold together (a state costs memory per event applied). */
  checkpointEvents: nonNegativeInteger("LEDGER_CHECKPOINT_EVENTS", 2_000_000),
  /**
   * The most open lots the kept checkpoints may hold together: what a checkpoint's memory grows with (a lot, its
   * figures and its stored row's place, about 0.7 KB). The checkpoint of the account built last is kept whatever it
   * holds, so one large account always builds incrementally.
   */
  checkpointLots: nonNegativeInteger("LEDGER_CHECKPOINT_LOTS", 40_000),
  /**
   * The most final events a checkpoint is held behind while a transfer waits for its classification (applied on
   * top at each build); past it the checkpoint moves on, and the classification landing later forces a full build.
   */
  holdEvents: nonNegativeInteger("LEDGER_HOLD_EVENTS", 10_000)
})
export type LedgerBuilderConfig = Config.Config.Success<typeof LedgerBuilderConfig>

/** The ledger worker's settings as a plain record (`WorkersLive.layer` hands it over; `Live` reads them). */
export class LedgerBuilderSettings extends Context.Tag("@scaledger/workers/ledger/LedgerBuilderSettings")<
  LedgerBuilderSettings,
  LedgerBuilderConfig
>() {
  static readonly Live = Layer.effect(LedgerBuilderSettings, LedgerBuilderConfig)
}

/**
 * A ledger cursor's log index as a query bound: a cursor on a multiplier event (or on nothing yet) sorts before
 * every transfer of its block with `-Infinity`, which is `-1` to the database.
 */
const sqlLogIndex = (logIndex: number) => Number.isFinite(logIndex) ? logIndex : -1

/** What a build applies: the chain record's transfers and the multiplier changes between them. */
type BuildEvent = RecordedTransfer | MultiplierEvent

/** The rates of the reporting currency on every date a figure can fall on (USD needs none). */
const rateTable = (currency: string, dates: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (currency === "USD") return undefined
    const quotes = yield* (yield* FxRates).ratesOn(currency as ReportingCurrency, dates)
    const rates = [...quotes.entries()].flatMap(([date, quote]) =>
      Option.match(quote, {
        onNone: () => [],
        onSome: (
          q
        ) => [{ date, rate: q.rate, source: q.source, rateDate: q.rateDate, carriedForward: q.carriedForward }]
      })
    )
    return { currency: currency as ReportingCurrency, rates } satisfies RateTable
  })

/**
 * The report without the per-event lists and the rows stored in their own tables. A token's lot ids are left out:
 * they are its lot rows' ids (`ledger_lots`, in `ord` order), and no reader takes them from the summary.
 */
const summaryOf = (report: LedgerReport) => {
  const { disposals: _d, income: _i, lots: _l, movements: _m, positions: _p, splits: _s, ...summary } = report
  return { ...summary, tokens: summary.tokens.map(({ lotIds: _ids, ...token }) => token) }
}

/**
 * Builds one account's ledger from the chain record: its settings, the transfers of its addresses in chain order
 * (streamed a page at a time), the multiplier changes of the tokens involved, the recorded prices and the
 * reporting currency's rates on every date concerned.
 *
 * Given a checkpoint that still holds (same settings, same multiplier changes and the same number of transfers up
 * to its cursor), only the events after it are read and applied, with the newest prices and rates; `since` then
 * says from which stored rows on the build's rows replace the stored ones. Returns the new checkpoint: the state
 * before the first provisional block and before the first transfer still waiting for its classification (at most
 * `holdEvents` final events behind), so a classification landing later resumes from it.
 */
export const buildLedgerFrom = <E = never, R = never, EE = never>(
  accountId: string,
  chainId: number,
  asOf: number,
  checkpoint: LedgerCheckpoint | undefined,
  stillWanted?: Effect.Effect<boolean, E, R>,
  holdEvents = 10_000,
  emit?: RowEmitter<EE>
) =>
  Effect.gen(function*() {
    const ledgerInputs = yield* LedgerInputs
    const pricing = yield* LedgerPrices
    // Taken before anything is read: a transfer this build may miss is recorded at or above it.
    const watermark = yield* ledgerInputs.recordedWatermark
    /** The inputs besides the transfers; given a checkpoint, from its tokens and dates and the transfers after it. */
    const loadInputs = (since: LoadSince | undefined) =>
      Effect.gen(function*() {
        const inputs: AccountLedgerInputs = yield* ledgerInputs.load(accountId, chainId, since)
        const rates = yield* rateTable(inputs.currency, [...inputs.dates, utcDateOf(asOf * 1000)])
        const prices = yield* pricing.pricesFor(chainId, inputs.tokens)
        return { inputs, rates, prices }
      })
    let { inputs, prices, rates } = yield* loadInputs(
      checkpoint === undefined ? undefined : {
        block: checkpoint.state.cursor.block,
        logIndex: sqlLogIndex(checkpoint.state.cursor.logIndex),
        tokenKeys: checkpoint.tokenKeys,
        dates: checkpoint.dates
      }
    )
    let resumed: LedgerCheckpoint | undefined
    let boundary: number | null | undefined
    if (checkpoint !== undefined && checkpoint.key === settingsKey(inputs, checkpoint.state)) {
      const { cursor } = checkpoint.state
      if (
        multiplierIds(inputs.multiplierEvents, cursor.block) === checkpoint.multipliers &&
        historyKey(prices, rates, cursorTime(checkpoint.state)) === checkpoint.history
      ) {
        const check = yield* ledgerInputs.resumeCheck(
          accountId,
          chainId,
          checkpoint.watermark,
          { block: cursor.block, logIndex: sqlLogIndex(cursor.logIndex) },
          checkpoint.lastTransfer
        )
        if (
          !check.changed &&
          (checkpoint.lastTransfer === null ||
            (checkpoint.lastTransfer.blockHash !== null && check.lastHash === checkpoint.lastTransfer.blockHash))
        ) {
          resumed = checkpoint
          boundary = check.provisionalFrom
        }
      }
    }
    // A checkpoint that does not hold: the tokens and dates of the whole history, read again.
    if (checkpoint !== undefined && resumed === undefined) ({ inputs, prices, rates } = yield* loadInputs(undefined))
    if (resumed === undefined) boundary = yield* ledgerInputs.provisionalFrom(accountId, chainId)
    const provisionalFrom = boundary ?? Number.POSITIVE_INFINITY
    /** A full build gives its rows to `emit` as it goes, and keeps none of its records. */
    const streamed = emit !== undefined && resumed === undefined
    const newer = { prices, initialMultipliers: inputs.initialMultipliers, rates }
    let final = resumed === undefined
      ? yield* Ledger.empty({
        wallets: inputs.wallets,
        country: inputs.country,
        labels: inputs.labels,
        prices,
        initialMultipliers: inputs.initialMultipliers,
        ...(rates === undefined ? {} : { rates })
      })
      : yield* Ledger.withInputs(resumed.state, newer)
    const tail: Array<BuildEvent> = []
    /** Final events from the first transfer waiting for its classification on (applied on top, like the tail). */
    let held: Array<BuildEvent> = []
    const seen: TransfersSeen = { waiting: new Set() }
    let lastTransfer: RecordedTransfer | null = null
    /** The last final transfer so far (the checkpoint's). */
    const settle = (transfer: RecordedTransfer) => {
      lastTransfer = transfer
    }
    /**
     * Final events go into the checkpoint state, from the first transfer waiting for its classification on into
     * `held` (given to the state when more than `holdEvents` pile up); from the first provisional block on, into
     * the tail.
     */
    const take = (events: ReadonlyArray<BuildEvent>) => {
      const batch: Array<BuildEvent> = []
      for (const event of events) {
        if (tail.length === 0 && event.block < provisionalFrom) {
          if (held.length > 0 || (event.kind === "transfer" && seen.waiting.has(event.id))) {
            held.push(event)
            if (held.length <= holdEvents) continue
            for (const kept of held) {
              batch.push(kept)
              if (kept.kind === "transfer") settle(kept)
            }
            held = []
          } else {
            batch.push(event)
            if (event.kind === "transfer") settle(event)
          }
        } else {
          tail.push(event)
        }
      }
      // Each batch gives the state before it up (nothing else holds it: a resumed checkpoint left the cache).
      return batch.length === 0 ? Effect.void : Effect.gen(function*() {
        const next = yield* Ledger.apply(final, batch, { consume: true })
        final = streamed ? yield* emit!(next) : next
      })
    }
    /** Fails when the build is no longer wanted; asked before each chunk of transfers. */
    const wanted: Effect.Effect<void, E | LedgerBuildSuperseded, R> = stillWanted === undefined
      ? Effect.void
      : Effect.flatMap(
        stillWanted,
        (yes) => yes ? Effect.void : Effect.fail(new LedgerBuildSuperseded({ accountId }))
      )
    const cursor = resumed?.state.cursor
    const pending = inputs.multiplierEvents.filter((event) => cursor === undefined || event.block > cursor.block)
    yield* ledgerInputs.transfers(
      accountId,
      chainId,
      inputs.tokens,
      cursor === undefined || cursor.block < 0 ? undefined : [cursor.block, sqlLogIndex(cursor.logIndex)],
      seen
    ).pipe(
      Stream.chunks,
      Stream.runForEach((chunk) =>
        Effect.zipRight(wanted, Effect.suspend(() => take(mergeInto(pending, [...chunk], false))))
      )
    )
    if (pending.length > 0) yield* take(mergeInto(pending, [], true))
    const onTop = held.length === 0 ? tail : [...held, ...tail]
    let state = onTop.length === 0 ? final : yield* Ledger.apply(final, onTop)
    if (streamed && state !== final) state = yield* emit!(state)
    const rows = Ledger.rowCounts(final)
    // Set by `take` (a closure the compiler does not follow).
    const last = lastTransfer as RecordedTransfer | null
    const figures = resumed?.figures ?? new Ledger.FiguresCache()
    const next: LedgerCheckpoint = {
      state: final,
      key: settingsKey(inputs, final),
      watermark,
      // Its block hash as the build read it: a re-org since then makes the next build full.
      lastTransfer: last === null ? (resumed?.lastTransfer ?? null) : {
        txHash: last.txHash,
        logIndex: last.logIndex,
        blockHash: last.blockHash
      },
      // Of the final transfers only (provisional ones may be reorged away; a transfer gives its book a holder).
      tokenKeys: inputs.tokens.filter((token) => (final.books.get(token.symbol)?.holders.size ?? 0) > 0)
        .map((token) => token.key),
      dates: inputs.dates.filter((date) => cursorTime(final) >= 0 && date <= utcDateOf(cursorTime(final) * 1000)),
      multipliers: multiplierIds(inputs.multiplierEvents, final.cursor.block),
      history: historyKey(prices, rates, cursorTime(final)),
      rows,
      eventRows: rows.movements + rows.income + rows.splits,
      version: 0,
      figures
    }
    return {
      state,
      checkpoint: next,
      /** The rows of the checkpoint the build resumed from (kept as stored); undefined for a full build. */
      since: resumed,
      /** Whether every row was given to `emit` (a full build given one): the state holds none. */
      streamed
    }
  })

/**
 * Given the state after a chunk of events, writes the rows of the records added since its last call and returns
 * the state without them (`Ledger.release`).
 */
export type RowEmitter<E> = (state: LedgerState) => Effect.Effect<LedgerState, E>

/** Event and disposal rows to `sink`, in the order and form `store` writes them. */
export const emitRows = (sink: RowSink): RowEmitter<SqlError> => {
  let written: Ledger.RowCounts = { movements: 0, disposals: 0, income: 0, splits: 0 }
  return (state) =>
    Effect.gen(function*() {
      yield* sink.events(chainOrdered(state, written))
      const gains: Array<Ledger.DisposalGains> = []
      yield* sink.disposals(disposalRecords(state, written.disposals, gains))
      written = Ledger.rowCounts(state)
      return Ledger.release(state, gains)
    })
}

function* disposalRecords(
  state: LedgerState,
  from?: number,
  gains?: Array<Ledger.DisposalGains>
): Generator<DisposalRecord> {
  for (const row of Ledger.storedDisposalRows(state, from, gains)) yield { ...Ledger.storedDisposalKeys(row), row }
}

/** A newer replay of the account was asked for while this one ran: it stops at its next chunk, storing nothing. */
export class LedgerBuildSuperseded extends Data.TaggedError("LedgerBuildSuperseded")<{ readonly accountId: string }> {}

/** A full build of one account's ledger (no checkpoint). */
export const buildLedger = (accountId: string, chainId: number, asOf: number) =>
  Effect.map(buildLedgerFrom(accountId, chainId, asOf, undefined), ({ state }) => ({
    state,
    report: Ledger.report(state, asOf, { rows: false })
  }))

/** The open lots a checkpoint holds (those its stored lot rows were made for). */
const lotsHeld = (checkpoint: LedgerCheckpoint): number => {
  let lots = 0
  for (const pool of checkpoint.lots?.values() ?? []) lots += pool.ords.size
  return lots
}

/**
 * The ledger worker: keeps every account's derived records current. Each poll interval it asks again for builds
 * that have grown old; each of its `concurrency` slots leases the most urgent due build (replays first, then those of
 * accounts whose own addresses moved) and makes it. A build is stored whole in one transaction, and a build that
 * cannot be made is recorded as failed with its reason. Leases make a crashed build due again; a running build's
 * lease is extended every third of it (`keepingLease`), and the build stops if it was lost.
 */
export const makeLedgerBuilder = Effect.gen(function*() {
  const store = yield* LedgerStore
  const config = yield* LedgerBuilderSettings
  const { chainId } = yield* ChainConfig
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`

  /** Checkpoints of the accounts built last (least recently built first), to build them incrementally. */
  const checkpoints = new Map<string, LedgerCheckpoint>()
  /** How many builds were stored, and how many of them were incremental. */
  const stats = { full: 0, incremental: 0 }

  const buildOne = (accountId: string, version: number, replay = true) =>
    Effect.gen(function*() {
      const asOf = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const cached = checkpoints.get(accountId)
      checkpoints.delete(accountId)
      // A checkpoint holds only if the stored build is the one made from it (another worker may have built since).
      const stored = yield* store.state(accountId)
      const usable = !replay && cached !== undefined && Option.isSome(stored) && stored.value.status === "ready" &&
          stored.value.builtVersion === cached.version
        ? cached
        : undefined
      // A replay gives way to a newer replay of the account (a label confirmed, the country changed again).
      const stillWanted = replay
        ? Effect.map(store.state(accountId), (now) => Option.isNone(now) || now.value.replayVersion <= version)
        : undefined
      // Made and stored in one transaction: a full build writes its rows as it makes them (`emitRows`).
      const made = yield* store.storeBuild(accountId, owner, version, (sink) =>
        Effect.gen(function*() {
          const { checkpoint, since, state, streamed } = yield* buildLedgerFrom(
            accountId,
            chainId,
            asOf,
            usable,
            stillWanted,
            config.holdEvents,
            emitRows(sink)
          )
          // Without the lots: rows are made only for the lots that changed (`planLotRows`).
          const report = Ledger.report(state, asOf, { rows: false, lots: false, cache: checkpoint.figures })
          const lotPlan = planLotRows(state, usable?.lots, checkpoint.figures)
          const stepPlan = planStepRows(state, usable?.steps)
          const positionPlan = planPositionRows(report.positions, usable?.positions)
          return {
            build: {
              report: summaryOf(report),
              positions: positionPlan.rows.map((row) => ({ token: row.token, wallet: row.wallet, row })),
              positionOrds: positionPlan.ords,
              lots: [],
              lotWrites: lotPlan.writes,
              stepWrites: stepPlan.writes,
              disposals: streamed ? [] : disposalRecords(state, since?.rows.disposals),
              events: streamed ? [] : chainOrdered(state, since?.rows)
            },
            rows: streamed
              ? "streamed" as const
              : since === undefined
              ? undefined
              : { events: since.eventRows, disposals: since.rows.disposals },
            checkpoint,
            since,
            lotPlan,
            stepPlan,
            positionPlan
          }
        }))
      if (Option.isNone(made)) return { incremental: false }
      const { checkpoint, lotPlan, positionPlan, since, stepPlan } = made.value
      stats[since === undefined ? "full" : "incremental"]++
      if (config.checkpoints > 0) {
        const built = yield* store.state(accountId)
        if (Option.isSome(built)) {
          // Its rows are stored now: the checkpoint keeps only lots, holdings and year sums (Ledger.release).
          checkpoints.set(accountId, {
            ...checkpoint,
            state: Ledger.release(checkpoint.state),
            version: built.value.builtVersion,
            lots: lotPlan.stored,
            steps: stepPlan.stored,
            positions: positionPlan.stored
          })
          // Least recently built first out, until the count, the events and the lots held are within bounds; this
          // account's (built last, so last in the map) stays.
          let events = 0
          let lots = 0
          for (const kept of checkpoints.values()) {
            events += kept.state.eventCount
            lots += lotsHeld(kept)
          }
          for (const [key, kept] of checkpoints) {
            if (key === accountId) break
            if (
              checkpoints.size <= config.checkpoints && events <= config.checkpointEvents &&
              lots <= config.checkpointLots
            ) break
            checkpoints.delete(key)
            events -= kept.state.eventCount
            lots -= lotsHeld(kept)
          }
        }
      }
      return { incremental: since !== undefined }
    }).pipe(
      // A build may outlast its lease: extended while it runs, so no other worker is given it meanwhile.
      keepingLease(
        `ledger build of ${accountId}`,
        config.lease,
        store.renew(accountId, owner, Duration.toSeconds(config.lease))
      ),
      Effect.catchTags({
        LeaseLost: () => Effect.logWarning(`ledger build of ${accountId}: lease lost to another worker; stopped`),
        LedgerBuildSuperseded: () =>
          Effect.zipRight(
            Effect.logInfo(`ledger build of ${accountId} (version ${version}) gave way to a newer replay`),
            store.release(accountId, owner)
          ),
        LedgerEventsOutOfOrder: (error) => store.fail(accountId, owner, version, error.message),
        LedgerInvalidEvent: (error) => store.fail(accountId, owner, version, error.message),
        LedgerInvalidSettings: (error) => store.fail(accountId, owner, version, error.message)
      }),
      Effect.tapErrorCause((cause) =>
        Effect.zipRight(
          Effect.logWarning(`ledger build of ${accountId} failed; retrying later`, cause),
          Effect.ignore(store.release(accountId, owner))
        )
      )
    )

  /** One round at once (tests): old builds asked for again, then up to `concurrency` due builds made. */
  const poll = Effect.gen(function*() {
    yield* store.expireOlderThan(Duration.toSeconds(config.maxAge))
    const due = yield* store.claim(
      owner,
      config.concurrency,
      Duration.toSeconds(config.lease),
      Duration.toMillis(config.minInterval)
    )
    yield* Effect.forEach(due, (build) => Effect.ignore(buildOne(build.accountId, build.version, build.replay)), {
      concurrency: config.concurrency,
      discard: true
    })
  })

  /**
   * One of `concurrency` build slots: it claims the most urgent due build as soon as its last one is stored (not
   * when a whole poll's batch is), so a block's build waits for at most one build ahead of it.
   */
  const slot = Effect.gen(function*() {
    const due = yield* store.claim(owner, 1, Duration.toSeconds(config.lease), Duration.toMillis(config.minInterval))
    if (due.length === 0) return yield* Effect.sleep(config.poll)
    for (const build of due) yield* Effect.ignore(buildOne(build.accountId, build.version, build.replay))
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.zipRight(Effect.logWarning("ledger builder: claiming a build failed", cause), Effect.sleep(config.poll))
    ),
    Effect.forever
  )

  const expire = store.expireOlderThan(Duration.toSeconds(config.maxAge)).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("ledger builder: asking again for old builds failed", cause)),
    Effect.repeat(Schedule.spaced(config.poll))
  )

  const run = Effect.all([expire, ...Array.from({ length: config.concurrency }, () => slot)], {
    concurrency: "unbounded",
    discard: true
  })
  return { run, poll, buildOne, stats } as const
})

export const LedgerBuilderLayer = Layer.scopedDiscard(
  Effect.flatMap(makeLedgerBuilder, (builder) => Effect.forkScoped(builder.run))
).pipe(Layer.provide(Layer.mergeAll(LedgerStore.Default, LedgerInputs.Default, FxRates.Default)))

/** `LedgerBuilderLayer` with its settings read from the environment (tests, embedders). */
export const LedgerBuilderLive = LedgerBuilderLayer.pipe(Layer.provide(LedgerBuilderSettings.Live))

/** Prices from the feed rounds the price recorder stores, kept between builds (only new rounds are read). */
export const LedgerPricesLive = Layer.effect(LedgerPrices, Effect.flatMap(PriceRounds, makePriceHistory)).pipe(
  Layer.provide(PriceRounds.Default)
)
