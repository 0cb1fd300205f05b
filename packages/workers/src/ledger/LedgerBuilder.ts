import type { SqlError } from "@effect/sql/SqlError"
import {
  type AccountLedgerInputs,
  type EventRecord,
  LedgerInputs,
  LedgerStore,
  type LedgerToken,
  PriceRounds
} from "@scaledger/db"
import { FxRates } from "@scaledger/db/FxRates"
import type { ReportingCurrency } from "@scaledger/domain"
import { utcDateOf } from "@scaledger/domain/fx/IsoDate"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, MultiplierEvent, PriceTable, RateTable } from "@scaledger/domain/ledger/LedgerInput"
import type { LedgerReport } from "@scaledger/domain/ledger/LedgerReport"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import { Clock, Config, Context, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import { randomBytes } from "node:crypto"
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
  pollMs: Config.integer("LEDGER_POLL_MS").pipe(Config.withDefault(500)),
  /** Chain data arrives in small steps: an account is rebuilt for it at most this often. Replays do not wait. */
  minIntervalMs: Config.integer("LEDGER_MIN_INTERVAL_MS").pipe(Config.withDefault(2_000)),
  /** A build older than this is made again: "now" moves the year's figures and the current value. */
  maxAgeSeconds: Config.integer("LEDGER_MAX_AGE_SECONDS").pipe(Config.withDefault(3_600)),
  concurrency: Config.integer("LEDGER_CONCURRENCY").pipe(Config.withDefault(2)),
  leaseSeconds: Config.integer("LEDGER_LEASE_SECONDS").pipe(Config.withDefault(300))
})

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

/** Movements, income and splits in one chain-ordered sequence (each generator is already in chain order). */
function* chainOrdered(state: LedgerState): Generator<EventRecord> {
  const sources = [
    Ledger.movementRows(state),
    Ledger.incomeRows(state),
    Ledger.splitRows(state)
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

/** The report without the per-event lists and the rows stored in their own tables. */
const summaryOf = (report: LedgerReport) => {
  const { disposals: _d, income: _i, lots: _l, movements: _m, positions: _p, splits: _s, ...summary } = report
  return summary
}

/**
 * Builds one account's ledger from the chain record: its settings, the transfers of its addresses in chain order
 * (streamed a page at a time), the multiplier changes of the tokens involved, the recorded prices and the
 * reporting currency's rates on every date concerned.
 */
export const buildLedger = (accountId: string, chainId: number, asOf: number) =>
  Effect.gen(function*() {
    const inputs: AccountLedgerInputs = yield* (yield* LedgerInputs).load(accountId, chainId)
    const rates = yield* rateTable(inputs.currency, [...inputs.dates, utcDateOf(asOf * 1000)])
    const prices = yield* (yield* LedgerPrices).pricesFor(chainId, inputs.tokens)
    let state = yield* Ledger.empty({
      wallets: inputs.wallets,
      country: inputs.country,
      prices,
      initialMultipliers: inputs.initialMultipliers,
      ...(rates === undefined ? {} : { rates })
    })
    const pending = [...inputs.multiplierEvents]
    yield* (yield* LedgerInputs).transfers(accountId, chainId, inputs.tokens).pipe(
      Stream.chunks,
      Stream.runForEach((chunk) =>
        Effect.map(Ledger.apply(state, mergeInto(pending, [...chunk], false)), (next) => {
          state = next
        })
      )
    )
    if (pending.length > 0) state = yield* Ledger.apply(state, mergeInto(pending, [], true))
    return { state, report: Ledger.report(state, asOf, { rows: false }) }
  })

/**
 * The ledger worker: keeps every account's derived records current. Each poll it asks again for builds that
 * have grown old, leases due builds (replays first) and makes them; a build is stored whole in one transaction,
 * and a build that cannot be made is recorded as failed with its reason. Leases make a crashed build due again.
 */
export const makeLedgerBuilder = Effect.gen(function*() {
  const store = yield* LedgerStore
  const config = yield* LedgerBuilderConfig
  const { chainId } = yield* ChainConfig
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`

  const buildOne = (accountId: string, version: number) =>
    Effect.gen(function*() {
      const asOf = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const { report, state } = yield* buildLedger(accountId, chainId, asOf)
      yield* store.store(accountId, owner, version, {
        report: summaryOf(report),
        positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
        lots: report.lots.map((row) => ({ token: row.token, row })),
        disposals: (function*() {
          for (const row of Ledger.disposalRows(state)) yield { token: row.token, day: row.date, row }
        })(),
        events: chainOrdered(state)
      })
    }).pipe(
      Effect.catchTags({
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
    yield* store.expireOlderThan(config.maxAgeSeconds)
    const due = yield* store.claim(owner, config.concurrency, config.leaseSeconds, config.minIntervalMs)
    yield* Effect.forEach(due, (build) => Effect.ignore(buildOne(build.accountId, build.version)), {
      concurrency: config.concurrency,
      discard: true
    })
  })

  const run = poll.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("ledger builder: poll failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(config.pollMs)))
  )
  return { run, poll, buildOne } as const
})

export const LedgerBuilderLive = Layer.scopedDiscard(
  Effect.flatMap(makeLedgerBuilder, (builder) => Effect.forkScoped(builder.run))
).pipe(Layer.provide(Layer.mergeAll(LedgerStore.Default, LedgerInputs.Default, FxRates.Default)))

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
