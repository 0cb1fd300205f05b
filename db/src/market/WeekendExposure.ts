import { utcDateOf } from "@scaledger/domain/CalendarDates"
import type { ReportingCurrency } from "@scaledger/domain/Currency"
import { NotFound } from "@scaledger/domain/Errors"
import { MAX_CARRY_FORWARD_DAYS } from "@scaledger/domain/ledger/Convert"
import { isOpen, lastCloseBefore, nextOpen } from "@scaledger/domain/market/UsMarketCalendar"
import { ratesBehind, type WeekendExposure } from "@scaledger/domain/MarketApi"
import { BigNumber } from "bignumber.js"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { FxRates } from "../FxRates.js"
import { LedgerStore } from "../ledger/LedgerStore.js"
import type { PositionRow } from "../reads/LedgerViews.js"
import { positionsOf, settledLedger } from "./AccountLedger.js"
import { MarketReads, type PauseState, type StoredRound } from "./MarketReads.js"

/** A feed's heartbeat (DOMAIN.md §1: 86,400 s): a round older than this at the close is no close price. */
export const FEED_HEARTBEAT_SECONDS = 86_400

const PRICE_DECIMALS = 8

const MAX_RATE_AGE_MS = MAX_CARRY_FORWARD_DAYS * 86_400_000

const roundView = (round: StoredRound) => ({
  feed: round.feed,
  roundId: round.roundId,
  updatedAt: round.updatedAt.toISOString(),
  answer: new BigNumber(round.answer.toString()).shiftedBy(-PRICE_DECIMALS).toFixed()
})

const pauseView = (pause: PauseState) => ({
  paused: pause.paused,
  since: pause.since === null ? null : pause.since.toISOString(),
  block: pause.block,
  provisional: pause.provisional
})

/** The chain whose pauses and price rounds the reads look at (the workers' `CHAIN_ID`). */
export interface MarketReadOptions {
  readonly chainId: number
}

export const makeWeekendExposure = ({ chainId }: MarketReadOptions) =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const reads = yield* MarketReads
    const fx = yield* FxRates

    const rateFor = (currency: ReportingCurrency, date: string) =>
      Effect.gen(function*() {
        if (currency === "USD") {
          return { currency, rate: "1", source: "identity", rateDate: date, carriedForward: false }
        }
        const quote = Option.flatten(Option.fromNullable((yield* fx.ratesOn(currency, [date])).get(date)))
        // A rate published more than 7 days before is not used (as the ledger's figures): no converted drift.
        const fresh = Option.filter(quote, (q) => Date.parse(date) - Date.parse(q.rateDate) <= MAX_RATE_AGE_MS)
        return Option.match(fresh, { onNone: () => null, onSome: (q) => ({ currency, ...q }) })
      })

    const exposure = Effect.fn("WeekendExposureReads.exposure")((
      accountId: string,
      params: { readonly symbol?: string | undefined }
    ) =>
      Effect.gen(function*() {
        const built = yield* settledLedger(store, accountId)
        // The account's reporting currency is the build's, held or not (not the first position's: there may be none).
        const report = built
          ? Option.map(yield* store.report(accountId), (r) => r as { readonly currency: ReportingCurrency })
          : Option.none()
        const now = new Date(yield* Clock.currentTimeMillis)
        const marketOpen = isOpen(now)
        const close = lastCloseBefore(now)
        const positions = (yield* positionsOf(store, accountId)).filter((p) => BigInt(p.raw) > 0n)
        const byToken = new Map<string, Array<PositionRow>>()
        for (const p of positions) {
          const list = byToken.get(p.tokenAddress.toLowerCase()) ?? []
          list.push(p)
          byToken.set(p.tokenAddress.toLowerCase(), list)
        }
        let groups = [...byToken.values()]
        if (params.symbol !== undefined) {
          const wanted = params.symbol.toUpperCase()
          groups = groups.filter((g) => g[0]!.token.toUpperCase() === wanted)
          if (groups.length === 0) return yield* new NotFound({ message: `The account holds no ${params.symbol}.` })
        }
        groups.sort((a, b) => (a[0]!.token < b[0]!.token ? -1 : 1))
        const currency = Option.match(report, { onNone: () => "USD" as const, onSome: (r) => r.currency })
        const rate = yield* rateFor(currency, utcDateOf(now.getTime()))
        const rounds: Array<string> = []
        const tokens = yield* Effect.forEach(groups, (group) =>
          Effect.gen(function*() {
            const first = group[0]!
            const balance = group.reduce((sum, p) => sum.plus(p.balance), new BigNumber(0))
            const shares = group.reduce((sum, p) => sum.plus(p.sharesEquivalent), new BigNumber(0))
            const pauses = yield* reads.pauses(chainId, first.tokenAddress, now)
            const base = {
              symbol: first.token,
              tokenAddress: first.tokenAddress,
              balance: balance.toFixed(),
              sharesEquivalent: shares.toFixed(),
              paused: pauseView(pauses.token),
              oraclePaused: pauseView(pauses.oracle)
            }
            const nothing = { current: null, driftPercent: null, driftUsd: null, drift: null }
            if (!(yield* reads.hasFeed(chainId, first.tokenAddress))) {
              return {
                ...base,
                ...nothing,
                status: "no_feed" as const,
                lastClose: { at: close.toISOString(), round: null }
              }
            }
            const atClose = yield* reads.roundAt(chainId, first.tokenAddress, close)
            const current = yield* reads.roundAt(chainId, first.tokenAddress, now)
            for (const r of [atClose, current]) if (Option.isSome(r)) rounds.push(`${r.value.feed}:${r.value.roundId}`)
            const lastClose = {
              at: close.toISOString(),
              round: Option.match(atClose, { onNone: () => null, onSome: roundView })
            }
            const currentView = Option.match(current, { onNone: () => null, onSome: roundView })
            if (Option.isNone(atClose) || Option.isNone(current)) {
              return { ...base, ...nothing, current: currentView, status: "no_round_at_close" as const, lastClose }
            }
            const stale = close.getTime() - atClose.value.updatedAt.getTime() > FEED_HEARTBEAT_SECONDS * 1000
            if (stale) {
              return { ...base, ...nothing, current: currentView, status: "feed_stale" as const, lastClose }
            }
            // A round answering zero or less is no price (the feed's fault, not a fall to nothing).
            if (atClose.value.answer <= 0n || current.value.answer <= 0n) {
              return { ...base, ...nothing, current: currentView, status: "no_price" as const, lastClose }
            }
            const closePrice = new BigNumber(atClose.value.answer.toString()).shiftedBy(-PRICE_DECIMALS)
            const currentPrice = new BigNumber(current.value.answer.toString()).shiftedBy(-PRICE_DECIMALS)
            const driftUsd = balance.times(currentPrice.minus(closePrice))
            const driftPercent = closePrice.isZero()
              ? null
              : currentPrice.div(closePrice).minus(1).times(100).decimalPlaces(4, BigNumber.ROUND_HALF_EVEN).toFixed()
            return {
              ...base,
              status: pauses.token.paused
                ? "token_paused" as const
                : marketOpen
                ? "market_open" as const
                : "ok" as const,
              lastClose,
              current: currentView,
              driftPercent,
              driftUsd: driftUsd.decimalPlaces(18, BigNumber.ROUND_HALF_EVEN).toFixed(),
              drift: rate === null
                ? null
                : driftUsd.times(rate.rate).decimalPlaces(18, BigNumber.ROUND_HALF_EVEN).toFixed()
            }
          }))
        const answer: WeekendExposure = {
          asOf: now.toISOString(),
          marketOpen,
          lastClose: close.toISOString(),
          nextOpen: nextOpen(now).toISOString(),
          currency,
          rate,
          tokens,
          evidence: { rounds: [...new Set(rounds)], rates: ratesBehind(rate) }
        }
        return answer
      })
    )

    return { exposure } as const
  })

/** get_weekend_exposure (`GET /v1/exposure/weekend` and the MCP tool). */
export class WeekendExposureReads extends Context.Tag("@scaledger/db/market/WeekendExposureReads")<
  WeekendExposureReads,
  Effect.Effect.Success<ReturnType<typeof makeWeekendExposure>>
>() {
  static readonly layer = (options: MarketReadOptions) =>
    Layer.effect(WeekendExposureReads, makeWeekendExposure(options)).pipe(
      Layer.provide([LedgerStore.Default, MarketReads.Default, FxRates.Default])
    )
}
