import type { SqlError } from "@effect/sql/SqlError"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { FxRates } from "@scaledger/db/FxRates"
import { type AccountLedgerInputs, LedgerInputs, type LedgerToken } from "@scaledger/db/ledger/LedgerInputs"
import { type EventRecord, LedgerStore, type LotWrites } from "@scaledger/db/ledger/LedgerStore"
import { utcDateOf } from "@scaledger/domain/CalendarDates"
import { durationSetting, nonNegativeInteger, positiveInteger } from "@scaledger/domain/ConfigValues"
import type { ReportingCurrency } from "@scaledger/domain/Currency"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, MultiplierEvent, PriceTable, RateTable } from "@scaledger/domain/ledger/LedgerInput"
import type { LedgerReport } from "@scaledger/domain/ledger/LedgerReport"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import { Clock, Config, Context, Data, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { ChainConfig } from "../chain/ChainConfig.js"

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
  lease: durationSetting("LEDGER_LEASE_SECONDS", "seconds", 300, { positive: true }),
  /** How many accounts' checkpoints (the ledger state of the last build) a worker keeps to build incrementally. */
  checkpoints: nonNegativeInteger("LEDGER_CHECKPOINTS", 16),
  /** The most events the kept checkpoints may hold together (a state costs memory per event applied). */
  checkpointEvents: nonNegativeInteger("LEDGER_CHECKPOINT_EVENTS", 2_000_000)
})
export type LedgerBuilderConfig = Config.Config.Success<typeof LedgerBuilderConfig>

/** The ledger worker's settings as a plain record (`WorkersLive.layer` hands it over; `Live` reads them). */
export class LedgerBuilderSettings extends Context.Tag("@scaledger/workers/ledger/LedgerBuilderSettings")<
  LedgerBuilderSettings,
  LedgerBuilderConfig
>() {
  static readonly Live = Layer.effect(LedgerBuilderSettings, LedgerBuilderConfig)
}

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

/** Merges multiplier events into a chain-ordered page of transfers: (block, logIndex), multipliers at logIndex -1. */
const mergeInto = (
  pending: Array<MultiplierEvent>,
  page: ReadonlyArray<LedgerEvent>,
  last: boolean
): Array<LedgerEvent> => {
  const lastTransfer = page[page.length - 1]
  const merged: Array<LedgerEvent> = []
  let i = 0
  for (const event of page) {
    while (i < pending.length && pending[i]!.block <= event.block) merged.push(pending[i++]!)
    merged.push(event)
  }
  while (i < pending.length && (last || lastTransfer === undefined || pending[i]!.block <= lastTransfer.block)) {
    merged.push(pending[i++]!)
  }
  pending.splice(0, i)
  return merged
}

const eventKey = (row: { readonly block: number; readonly logIndex: number }) => row.block * 1_000_000 + row.logIndex

/**
 * Movements, income and splits in one chain-ordered sequence (each generator is already in chain order); with
 * `from`, only the rows after those counts (the rows an incremental build adds after its checkpoint).
 */
function* chainOrdered(state: LedgerState, from?: Ledger.RowCounts): Generator<EventRecord> {
  const sources = [
    Ledger.movementRows(state, from?.movements),
    Ledger.incomeRows(state, from?.income),
    Ledger.splitRows(state, from?.splits)
  ].map((rows) => {
    const iterator = rows[Symbol.iterator]() as Iterator<any>
    return { iterator, head: iterator.next() }
  })
  const position = (row: any) =>
    row.walletTransaction === null
      ? eventKey({ block: row.block, logIndex: -1 })
      : eventKey({ block: row.walletTransaction.block, logIndex: row.walletTransaction.logIndex })
  for (;;) {
    let best: (typeof sources)[number] | undefined
    for (const source of sources) {
      if (source.head.done) continue
      if (best === undefined || position(source.head.value) < position(best.head.value)) best = source
    }
    if (best === undefined) return
    const row = best.head.value
    best.head = best.iterator.next()
    yield {
      id: row.id,
      type: row.type,
      token: row.token,
      day: row.date,
      needsReview: row.needsReview ?? false,
      row
    }
  }
}

/**
 * What the stored lot rows are: per lot (token and id), its `ord` and a digest of its JSON (a checkpoint keeps
 * this for every open lot, so not the JSON itself).
 */
export type StoredLots = ReadonlyMap<string, { readonly ord: number; readonly digest: string }>

const digestOf = (json: string) => createHash("sha1").update(json).digest("base64")

/**
 * What tells whether a lot row changed, without writing out its per-step basis components (a lot holds one per
 * dividend step since it was acquired, so formatting them all at every build is most of a small build's time): the
 * row without them, their count, the first and the last. A component between them changes only with the lot's raw
 * (in the row) or a late price or rate (which changes `basisUsd` or `basis`, both in the row).
 */
const signatureOf = (row: { readonly components?: ReadonlyArray<unknown> }): string => {
  const components = row.components
  if (components === undefined) return JSON.stringify(row)
  return JSON.stringify([
    { ...row, components: undefined },
    components.length,
    components[0],
    components[components.length - 1]
  ])
}

const MAX_ORD = 2_147_483_647
/** Room left between stored lots for lots that arrive later (`ledger_lots.ord` is an integer). */
const LOT_GAP = 1_024

/**
 * The lot rows to write: when the stored rows are known, only the lots that changed (a partly consumed lot, a new
 * one) are deleted and inserted, with an `ord` between the unchanged neighbours so the read order stays the
 * ledger's; when that is not possible (no room left, or many lots changed, as after a dividend step), every row is
 * written again with room between them.
 */
export const planLots = (
  lots: ReadonlyArray<
    { readonly token: string; readonly row: { readonly id: string; readonly components?: ReadonlyArray<unknown> } }
  >,
  stored: StoredLots | undefined
): { readonly writes: LotWrites; readonly stored: StoredLots } => {
  const keys = lots.map((lot) => `${lot.token}|${lot.row.id}`)
  const digests = lots.map((lot) => digestOf(signatureOf(lot.row)))
  const jsonAt = (i: number) => JSON.stringify(lots[i]!.row)
  const replaceAll = () => {
    const gap = lots.length * LOT_GAP < MAX_ORD ? LOT_GAP : 1
    const next = new Map<string, { ord: number; digest: string }>()
    const rows = lots.map((lot, i) => {
      next.set(keys[i]!, { ord: i * gap, digest: digests[i]! })
      return { token: lot.token, ord: i * gap, json: jsonAt(i) }
    })
    return { writes: { replace: true, deletes: [], rows }, stored: next }
  }
  if (stored === undefined) return replaceAll()
  // Unchanged lots keep their ord, as long as the kept ones stay in order.
  const kept: Array<number | undefined> = new Array(lots.length)
  let last = -1
  for (let i = 0; i < lots.length; i++) {
    const old = stored.get(keys[i]!)
    if (old !== undefined && old.digest === digests[i] && old.ord > last) {
      kept[i] = old.ord
      last = old.ord
    }
  }
  const nextKept: Array<number> = new Array(lots.length)
  let following = MAX_ORD + 1
  for (let i = lots.length - 1; i >= 0; i--) {
    nextKept[i] = following
    if (kept[i] !== undefined) following = kept[i]!
  }
  const keptOrds = new Set<number>()
  const next = new Map<string, { ord: number; digest: string }>()
  const rows: Array<{ token: string; ord: number; json: string }> = []
  let previous = -1
  for (let i = 0; i < lots.length; i++) {
    let ord = kept[i]
    if (ord === undefined) {
      ord = previous + 1
      if (ord >= nextKept[i]!) return replaceAll()
      rows.push({ token: lots[i]!.token, ord, json: jsonAt(i) })
    } else {
      keptOrds.add(ord)
    }
    next.set(keys[i]!, { ord, digest: digests[i]! })
    previous = ord
  }
  if (rows.length > lots.length / 2) return replaceAll()
  const deletes: Array<number> = []
  for (const { ord } of stored.values()) if (!keptOrds.has(ord)) deletes.push(ord)
  return { writes: { replace: false, deletes, rows }, stored: next }
}

/** The report without the per-event lists and the rows stored in their own tables. */
const summaryOf = (report: LedgerReport) => {
  const { disposals: _d, income: _i, lots: _l, movements: _m, positions: _p, splits: _s, ...summary } = report
  return summary
}

/**
 * What a worker keeps of an account's last build to make the next one incrementally: the ledger state after the
 * account's final events (provisional ones, newer than the finality depth, can still be rewritten by a reorg and
 * are applied on top at each build), with what is needed to tell whether it still holds.
 */
export interface LedgerCheckpoint {
  /** The state after the final events, up to `state.cursor`. */
  readonly state: LedgerState
  /** The settings it was built under (wallets, country, currency, known tokens' initial multipliers). */
  readonly key: string
  /** How many of the account's transfers are at or before the cursor: a backfill of older blocks changes it. */
  readonly transfers: number
  /** The multiplier changes applied (ids, in order). */
  readonly multipliers: string
  /** The price rounds and rates the applied events could use (up to the cursor's time): late ones force a rebuild. */
  readonly history: string
  /** The state's row counts, and its stored event rows (movements + income + splits) and disposal rows. */
  readonly rows: Ledger.RowCounts
  readonly eventRows: number
  /** The build version stored from it; set by the worker once stored. */
  readonly version: number
  /** The lot rows stored by that build (of the state with its provisional events); set by the worker. */
  readonly lots?: StoredLots
}

const ONE = "1000000000000000000"

const settingsKey = (inputs: AccountLedgerInputs, state: LedgerState | undefined): string =>
  JSON.stringify([
    inputs.wallets,
    inputs.country,
    inputs.currency,
    inputs.classificationStamp,
    // The initial multiplier of each token the state already holds (1.0 when none is known): a token first seen
    // later brings its own.
    [...(state?.books.keys() ?? [])].sort().map((token) => [token, inputs.initialMultipliers[token] ?? ONE])
  ])

const multiplierIds = (events: ReadonlyArray<MultiplierEvent>, throughBlock: number): string =>
  events.filter((event) => event.block <= throughBlock).map((event) => event.id).join("|")

/** The time of a state's last applied event (-1 before any). */
const cursorTime = (state: LedgerState): number => {
  const event = state.cursor.event
  return event === null ? -1 : event.kind === "transfer" ? event.timestamp : event.effectiveAt
}

/**
 * What the figures of the events up to `time` were computed from: per token, the price rounds recorded up to then
 * (count, last round), and the rates of the dates up to then. A round or a rate recorded later for an earlier time
 * (the price recorder walks feed history backwards; FX history can arrive late) changes it, and the account is
 * rebuilt fully instead of keeping figures computed without them.
 */
const historyKey = (prices: PriceTable, rates: RateTable | undefined, time: number): string => {
  const parts: Array<string> = []
  for (const token of Object.keys(prices).sort()) {
    let count = 0
    let last = ""
    for (const round of prices[token]!) {
      if (round.updatedAt > time) break
      count++
      last = `${round.roundId}:${round.answer}:${round.updatedAt}`
    }
    parts.push(`${token}=${count}@${last}`)
  }
  if (rates !== undefined) {
    const until = time < 0 ? "" : utcDateOf(time * 1000)
    for (const entry of rates.rates) {
      if (entry.date <= until) parts.push(`${entry.date}=${entry.rate}:${entry.rateDate}:${entry.source}`)
    }
  }
  return parts.join("|")
}

/**
 * Builds one account's ledger from the chain record: its settings, the transfers of its addresses in chain order
 * (streamed a page at a time), the multiplier changes of the tokens involved, the recorded prices and the
 * reporting currency's rates on every date concerned.
 *
 * Given a checkpoint that still holds (same settings, same multiplier changes and the same number of transfers up
 * to its cursor), only the events after it are read and applied, with the newest prices and rates; `since` then
 * says from which stored rows on the build's rows replace the stored ones. Returns the new checkpoint.
 */
export const buildLedgerFrom = <E = never, R = never>(
  accountId: string,
  chainId: number,
  asOf: number,
  checkpoint: LedgerCheckpoint | undefined,
  stillWanted?: Effect.Effect<boolean, E, R>
) =>
  Effect.gen(function*() {
    const ledgerInputs = yield* LedgerInputs
    const inputs: AccountLedgerInputs = yield* ledgerInputs.load(accountId, chainId)
    const rates = yield* rateTable(inputs.currency, [...inputs.dates, utcDateOf(asOf * 1000)])
    const prices = yield* (yield* LedgerPrices).pricesFor(chainId, inputs.tokens)
    const boundary = (yield* ledgerInputs.provisionalFrom(accountId, chainId)) ?? Number.POSITIVE_INFINITY
    let resumed: LedgerCheckpoint | undefined
    if (checkpoint !== undefined && checkpoint.key === settingsKey(inputs, checkpoint.state)) {
      const { cursor } = checkpoint.state
      if (
        multiplierIds(inputs.multiplierEvents, cursor.block) === checkpoint.multipliers &&
        historyKey(prices, rates, cursorTime(checkpoint.state)) === checkpoint.history &&
        (yield* ledgerInputs.countThrough(accountId, chainId, cursor.block, cursor.logIndex)) === checkpoint.transfers
      ) resumed = checkpoint
    }
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
    let transfers = resumed?.transfers ?? 0
    const tail: Array<LedgerEvent> = []
    /** Final events go into the checkpoint state; from the first provisional block on, into the tail. */
    const take = (events: ReadonlyArray<LedgerEvent>) => {
      const batch: Array<LedgerEvent> = []
      for (const event of events) {
        if (tail.length === 0 && event.block < boundary) {
          batch.push(event)
          if (event.kind === "transfer") transfers++
        } else {
          tail.push(event)
        }
      }
      // Each batch gives the state before it up (nothing else holds it: a resumed checkpoint left the cache).
      return batch.length === 0 ? Effect.void : Effect.map(Ledger.apply(final, batch, { consume: true }), (next) => {
        final = next
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
      cursor === undefined || cursor.block < 0 ? undefined : [cursor.block, cursor.logIndex]
    ).pipe(
      Stream.chunks,
      Stream.runForEach((chunk) =>
        Effect.zipRight(wanted, Effect.suspend(() => take(mergeInto(pending, [...chunk], false))))
      )
    )
    if (pending.length > 0) yield* take(mergeInto(pending, [], true))
    const state = tail.length === 0 ? final : yield* Ledger.apply(final, tail)
    const rows = Ledger.rowCounts(final)
    const next: LedgerCheckpoint = {
      state: final,
      key: settingsKey(inputs, final),
      transfers,
      multipliers: multiplierIds(inputs.multiplierEvents, final.cursor.block),
      history: historyKey(prices, rates, cursorTime(final)),
      rows,
      eventRows: rows.movements + rows.income + rows.splits,
      version: 0
    }
    return {
      state,
      report: Ledger.report(state, asOf, { rows: false }),
      checkpoint: next,
      /** The rows of the checkpoint the build resumed from (kept as stored); undefined for a full build. */
      since: resumed
    }
  })

/** A newer replay of the account was asked for while this one ran: it stops at its next chunk, storing nothing. */
export class LedgerBuildSuperseded extends Data.TaggedError("LedgerBuildSuperseded")<{ readonly accountId: string }> {}

/** A full build of one account's ledger (no checkpoint). */
export const buildLedger = (accountId: string, chainId: number, asOf: number) =>
  Effect.map(buildLedgerFrom(accountId, chainId, asOf, undefined), ({ report, state }) => ({ state, report }))

/**
 * The ledger worker: keeps every account's derived records current. Each poll it asks again for builds that
 * have grown old, leases due builds (replays first) and makes them; a build is stored whole in one transaction,
 * and a build that cannot be made is recorded as failed with its reason. Leases make a crashed build due again.
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
      const { checkpoint, report, since, state } = yield* buildLedgerFrom(
        accountId,
        chainId,
        asOf,
        usable,
        stillWanted
      )
      const lots = report.lots.map((row) => ({ token: row.token, row }))
      const lotPlan = planLots(lots, usable?.lots)
      const written = yield* store.store(
        accountId,
        owner,
        version,
        {
          report: summaryOf(report),
          positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
          lots,
          lotWrites: lotPlan.writes,
          disposals: (function*() {
            for (const row of Ledger.disposalRows(state, since?.rows.disposals)) {
              yield { token: row.token, day: row.date, row }
            }
          })(),
          events: chainOrdered(state, since?.rows)
        },
        since === undefined ? undefined : { events: since.eventRows, disposals: since.rows.disposals }
      )
      if (written) stats[since === undefined ? "full" : "incremental"]++
      if (written && config.checkpoints > 0) {
        const built = yield* store.state(accountId)
        if (Option.isSome(built)) {
          // Its rows are stored now: the checkpoint keeps only lots, holdings and year sums (Ledger.release).
          checkpoints.set(accountId, {
            ...checkpoint,
            state: Ledger.release(checkpoint.state),
            version: built.value.builtVersion,
            lots: lotPlan.stored
          })
          // Least recently built first out, until both the count and the events held are within bounds.
          let events = 0
          for (const kept of checkpoints.values()) events += kept.state.eventCount
          for (const [key, kept] of checkpoints) {
            if (checkpoints.size <= config.checkpoints && events <= config.checkpointEvents) break
            checkpoints.delete(key)
            events -= kept.state.eventCount
          }
        }
      }
      return { incremental: since !== undefined }
    }).pipe(
      Effect.catchTags({
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

  const run = poll.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("ledger builder: poll failed", cause)),
    Effect.repeat(Schedule.spaced(config.poll))
  )
  return { run, poll, buildOne, stats } as const
})

export const LedgerBuilderLayer = Layer.scopedDiscard(
  Effect.flatMap(makeLedgerBuilder, (builder) => Effect.forkScoped(builder.run))
).pipe(Layer.provide(Layer.mergeAll(LedgerStore.Default, LedgerInputs.Default, FxRates.Default)))

/** `LedgerBuilderLayer` with its settings read from the environment (tests, embedders). */
export const LedgerBuilderLive = LedgerBuilderLayer.pipe(Layer.provide(LedgerBuilderSettings.Live))

/** Prices from the feed rounds the price recorder stores. */
export const LedgerPricesLive = Layer.effect(
  LedgerPrices,
  Effect.map(PriceRounds, (rounds) => ({
    pricesFor: (chainId: number, tokens: ReadonlyArray<LedgerToken>) =>
      Effect.map(
        rounds.roundsFor(chainId, tokens.map((token) => token.key)),
        (byKey): PriceTable => Object.fromEntries(tokens.map((token) => [token.symbol, byKey[token.key] ?? []]))
      )
  }))
).pipe(Layer.provide(PriceRounds.Default))
