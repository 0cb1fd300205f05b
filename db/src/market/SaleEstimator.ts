import * as Address from "@scaledger/domain/Address"
import { isCalendarDate, utcDateOf } from "@scaledger/domain/CalendarDates"
import type { ReportingCurrency } from "@scaledger/domain/Currency"
import { InvalidDate, InvalidRequest, NotFound } from "@scaledger/domain/Errors"
import { parseFixed, rateOn } from "@scaledger/domain/market/LedgerFifo"
import { estimateSale } from "@scaledger/domain/market/SaleEstimate"
import { ratesBehind, type SaleEstimateView } from "@scaledger/domain/MarketApi"
import { shownValue } from "@scaledger/domain/ShownValue"
import { BigNumber } from "bignumber.js"
import { Clock, Context, Effect, Either, Layer, Option } from "effect"
import { FxRates } from "../FxRates.js"
import { LedgerStore } from "../ledger/LedgerStore.js"
import type { PositionRow } from "../reads/LedgerViews.js"
import { lotSourcesOf, positionsOf, settledLedger } from "./AccountLedger.js"

export interface SaleParams {
  readonly symbol: string
  readonly shares: string
  readonly price?: string | undefined
  readonly date?: string | undefined
  readonly wallet?: string | undefined
}

/** Share counts and prices are kept to 18 decimals, as amounts are. */
const amountPattern = /^\d+(\.\d{1,18})?$/

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString()

export const makeSaleEstimator = Effect.gen(function*() {
  const store = yield* LedgerStore
  const fx = yield* FxRates

  /** The selling address's lower-case key; a malformed one is `400 invalid_address`. */
  const walletKeyOf = (wallet: string) => {
    const parsed = Address.parseAddress(wallet)
    return Either.isLeft(parsed)
      ? Effect.fail(Address.invalidAddress(wallet, parsed.left))
      : Effect.succeed(parsed.right.toLowerCase())
  }

  /** The position whose pool sells: the wallet's (wallet lot scope) or the account's (account lot scope). */
  const choosePosition = (positions: ReadonlyArray<PositionRow>, params: SaleParams) =>
    Effect.gen(function*() {
      const symbol = params.symbol.toUpperCase()
      const held = positions.filter((p) => p.token.toUpperCase() === symbol && BigInt(p.raw) > 0n)
      if (held.length === 0) {
        return yield* new NotFound({ message: `The account holds no ${shownValue(params.symbol)}.` })
      }
      const wallet = params.wallet === undefined ? undefined : yield* walletKeyOf(params.wallet)
      if (held[0]!.scope === "account") {
        const position = held[0]!
        if (wallet === undefined) return { position, heldRaw: undefined }
        // The account's pool sells, but the address only its own balance.
        const holding = position.holdings.find((h) => h.wallet.toLowerCase() === wallet)
        const heldRaw = holding === undefined ? 0n : parseFixed(holding.balance, 18)
        if (heldRaw === 0n) {
          return yield* new NotFound({ message: `${params.wallet} holds no ${params.symbol}.` })
        }
        return { position, heldRaw }
      }
      if (wallet !== undefined) {
        const position = held.find((p) => p.wallet?.toLowerCase() === wallet)
        if (position === undefined) {
          return yield* new NotFound({ message: `${params.wallet} holds no ${params.symbol}.` })
        }
        return { position, heldRaw: undefined }
      }
      if (held.length > 1) {
        return yield* new InvalidRequest({
          message: `Several wallets hold ${params.symbol}: say which one sells with \`wallet\`.`,
          details: { field: "wallet", wallets: held.map((p) => p.wallet) }
        })
      }
      return { position: held[0]!, heldRaw: undefined }
    })

  /**
   * The rate of the sale date. A date after today has no rate yet: today's (the newest publication, if it is not
   * stale today) is carried forward to it.
   */
  const rateFor = (currency: ReportingCurrency, date: string, today: string) =>
    Effect.gen(function*() {
      if (currency === "USD") return rateOn(date, undefined)
      const day = date > today ? today : date
      const quotes = yield* fx.ratesOn(currency, [day])
      const quote = Option.flatten(Option.fromNullable(quotes.get(day)))
      if (Option.isNone(quote)) return null
      const rate = rateOn(day, { currency, rates: [{ date: day, ...quote.value }] })
      return rate === null || day === date ? rate : { ...rate, carriedForward: true }
    })

  const estimate = Effect.fn("SaleEstimator.estimate")((accountId: string, params: SaleParams) =>
    Effect.gen(function*() {
      // Checked before the position is looked up: a bad count is 400 whatever the symbol.
      if (!amountPattern.test(params.shares) || new BigNumber(params.shares).lte(0)) {
        return yield* new InvalidRequest({
          message: `shares must be a positive decimal of at most 18 decimals: ${params.shares}`,
          details: { field: "shares" }
        })
      }
      if (params.price !== undefined && (!amountPattern.test(params.price) || new BigNumber(params.price).lte(0))) {
        return yield* new InvalidRequest({
          message: `price must be a positive decimal of at most 18 decimals (USD per share): ${params.price}`,
          details: { field: "price" }
        })
      }
      if (params.date !== undefined && !isCalendarDate(params.date)) {
        return yield* new InvalidDate({
          message: `date must be a date, YYYY-MM-DD: ${params.date}`,
          details: { field: "date", reason: "malformed" }
        })
      }
      if (params.wallet !== undefined) yield* walletKeyOf(params.wallet)
      yield* settledLedger(store, accountId)
      const { heldRaw, position } = yield* choosePosition(yield* positionsOf(store, accountId), params)
      const walletKey = position.wallet?.toLowerCase()
      const lots = (yield* lotSourcesOf(store, accountId, position.token)).filter((lot) =>
        position.scope === "account" ? lot.location === "account" : lot.location === "wallet" &&
          lot.wallet?.toLowerCase() === walletKey
      )
      const today = utcDateOf(yield* Clock.currentTimeMillis)
      const date = params.date ?? today
      const newestAt = lots.reduce((max, lot) => Math.max(max, lot.acquiredAt), Number.NEGATIVE_INFINITY)
      const newest = lots.length === 0 ? "" : utcDateOf(newestAt * 1000)
      if (date < newest) {
        return yield* new InvalidDate({
          message: `date ${date} is before the position's newest lot (${newest}): the estimate sells the holding ` +
            "as it stands, so its date is that lot's or later.",
          details: { field: "date", reason: "before_holdings", earliest: newest }
        })
      }
      const multiplier = position.multiplier.at
      const round = position.value.price
      const priceUsd = params.price !== undefined
        ? params.price
        : round === null
        ? null
        : new BigNumber(round.answer).div(multiplier).decimalPlaces(18, BigNumber.ROUND_HALF_EVEN).toFixed()
      const rate = yield* rateFor(position.currency, date, today)
      const result = estimateSale({ lots, heldRaw, multiplier, shares: params.shares, priceUsd, date, rate })
      if ("error" in result) {
        const error = result.error
        return yield* error._tag === "InvalidShares"
          ? new InvalidRequest({ message: error.message, details: { field: "shares" } })
          : new InvalidRequest({
            message: `The sale exceeds the holding: ${error.requested} shares asked, ${error.held} held.`,
            details: { field: "shares", reason: "exceeds_holding", held: error.held }
          })
      }
      const sale = result.ok
      const rateInUse = rate === null ? null : {
        currency: rate.currency,
        rate: rate.rate,
        source: rate.source,
        rateDate: rate.rateDate,
        carriedForward: rate.carriedForward
      }
      const view: SaleEstimateView = {
        status: priceUsd === null ? "no_price" : rate === null ? "no_rate" : "ok",
        symbol: position.token,
        wallet: position.wallet,
        lotScope: position.scope,
        date,
        currency: position.currency,
        shares: sale.shares,
        raw: sale.raw,
        multiplier,
        price: {
          usdPerShare: priceUsd,
          source: params.price !== undefined ? "given" : round === null ? "none" : "feed",
          round: params.price !== undefined || round === null
            ? null
            : { feed: round.feed, roundId: round.roundId, updatedAt: iso(round.updatedAt), answer: round.answer }
        },
        rate: rateInUse,
        proceeds: sale.proceeds,
        basis: sale.basis,
        gain: sale.gain,
        proceedsUsd: sale.proceedsUsd,
        basisUsd: sale.basisUsd,
        gainUsd: sale.gainUsd,
        shortTerm: sale.shortTerm,
        longTerm: sale.longTerm,
        ifWaited: sale.ifWaited,
        lots: sale.lots.map(({ eventIds: _, ...lot }) => lot),
        evidence: {
          lotIds: sale.lots.map((lot) => lot.lotId),
          eventIds: [...new Set(sale.lots.flatMap((lot) => lot.eventIds))],
          rates: ratesBehind(rateInUse)
        }
      }
      return view
    })
  )

  return { estimate } as const
})

/** estimate_sale (`GET /v1/estimates/sale` and the MCP tool): read-only, from the stored ledger build. */
export class SaleEstimator extends Context.Tag("@scaledger/db/market/SaleEstimator")<
  SaleEstimator,
  Effect.Effect.Success<typeof makeSaleEstimator>
>() {
  static readonly Default = Layer.effect(SaleEstimator, makeSaleEstimator).pipe(
    Layer.provide([LedgerStore.Default, FxRates.Default])
  )
}
