import { formatMoney, type ReportingCurrency } from "@scaledger/domain/Currency"
import type { Converted } from "@scaledger/domain/ledger/Convert"
import type {
  Disposal,
  IncomeEvent,
  LedgerReport,
  Lot,
  Movement,
  Position,
  PriceProvenance,
  SplitEvent,
  Total
} from "@scaledger/domain/ledger/LedgerReport"
import type { EventView, PositionView } from "@scaledger/domain/LedgerApi"
import type { RateInUse } from "@scaledger/domain/MarketApi"
import { BigNumber } from "bignumber.js"

/** The stored summary of a build: the report without the rows kept in their own tables (nor tokens' lot ids). */
export type StoredReport =
  & Omit<LedgerReport, "disposals" | "income" | "lots" | "movements" | "positions" | "splits" | "tokens">
  & { readonly tokens: ReadonlyArray<Omit<LedgerReport["tokens"][number], "lotIds">> }

/**
 * A position as its row is stored (`ledger_positions`): without its lots' ids, which `ledger_lots` holds in order (a
 * large holding has thousands, and every build that changes the position would write them all again).
 */
export type PositionRow = Omit<Position, "lotIds">

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString()

const money = (amount: string | null | undefined, currency: ReportingCurrency) =>
  amount === null || amount === undefined ? null : formatMoney(amount, currency)

/** Σ of decimal strings, null as soon as one is null (unknown never becomes zero). */
const sumOrNull = (values: ReadonlyArray<string | null>): string | null => {
  let total = new BigNumber(0)
  for (const value of values) {
    if (value === null) return null
    total = total.plus(value)
  }
  return total.toFixed()
}

export const priceView = (price: PriceProvenance | null) =>
  price === null
    ? null
    : { feed: price.feed, roundId: price.roundId, updatedAt: iso(price.updatedAt), answer: price.answer }

/** A position's figures: the view without what is read beside the build (`paused`). */
export type PositionFigures = Omit<PositionView, "paused">

/** The provenance of a converted figure's rate (`RateInUse`), null when the figure was not converted. */
const rateOf = (converted: Converted | null): typeof RateInUse.Type | null =>
  converted === null
    ? null
    : {
      currency: converted.currency,
      rate: converted.rate,
      source: converted.source,
      rateDate: converted.rateDate,
      carriedForward: converted.carriedForward
    }

/**
 * The rate a value of the build's valuation date (`asOfDate`) is converted at, with its provenance, as
 * `GET /v1/portfolio/summary` gives it: for USD accounts the identity of that date even when the value is unknown (no
 * price); otherwise null when the value was not converted (no price, or no usable rate).
 */
export const valuationRate = (
  converted: Converted | null,
  currency: ReportingCurrency,
  asOfDate: string
): typeof RateInUse.Type | null =>
  converted === null && currency === "USD"
    ? { currency, rate: "1", source: "identity", rateDate: asOfDate, carriedForward: false }
    : rateOf(converted)

/** The valuation rate of positions valued on `asOfDate`: all are converted at that date's rate (the first known). */
export const positionsValuationRate = (
  positions: ReadonlyArray<PositionRow>,
  currency: ReportingCurrency,
  asOfDate: string
): typeof RateInUse.Type | null =>
  valuationRate(positions.find((p) => p.value.converted !== null)?.value.converted ?? null, currency, asOfDate)

/** `asOfDate`: the build's valuation date (UTC), the date its values are converted at. */
export const positionView = (position: PositionRow, asOfDate: string): PositionFigures => ({
  token: position.token,
  wallet: position.wallet,
  holdings: position.holdings.map((holding) => ({ wallet: holding.wallet, balance: holding.balance })),
  balance: position.balance,
  multiplier: position.multiplier,
  sharesEquivalent: position.sharesEquivalent,
  currency: position.currency,
  costBasis: position.costBasis,
  costBasisAmount: position.costBasisConverted,
  unreportedIncome: position.unreportedIncome,
  unreportedIncomeAmount: position.unreportedIncomeConverted,
  encumbered: position.encumbered,
  value: money(position.value.converted?.amount, position.currency),
  valueAmount: position.value.converted?.amount ?? null,
  valueUsd: position.value.usd,
  price: priceView(position.value.price),
  rate: valuationRate(position.value.converted, position.currency, asOfDate),
  unrealisedGain: position.unrealisedGainConverted,
  unknownBecause: position.nullReasons,
  issues: position.issues
})

/**
 * One address's own holding within an account-scope (pooled) position, for `GET /v1/positions?wallet=`: its
 * balance, shares, value and income, with its pro rata share of the pool's basis. Positions stored before the
 * per-address figures existed fall back to the pooled view.
 */
export const holdingPositionView = (position: PositionRow, wallet: string, asOfDate: string): PositionFigures => {
  const pooled = positionView(position, asOfDate)
  const key = wallet.toLowerCase()
  const holding = position.holdings.find((h) => h.wallet.toLowerCase() === key)
  const figures = holding?.figures
  if (holding === undefined || figures === undefined) return pooled
  return {
    ...pooled,
    wallet: holding.wallet,
    holdings: [{ wallet: holding.wallet, balance: holding.balance }],
    balance: holding.balance,
    sharesEquivalent: figures.sharesEquivalent,
    costBasis: figures.costBasis,
    costBasisAmount: figures.costBasisConverted,
    unreportedIncome: figures.unreportedIncome,
    unreportedIncomeAmount: figures.unreportedIncomeConverted,
    encumbered: holding.encumbered,
    value: money(figures.value.converted?.amount, position.currency),
    valueAmount: figures.value.converted?.amount ?? null,
    valueUsd: figures.value.usd,
    rate: valuationRate(figures.value.converted, position.currency, asOfDate),
    unrealisedGain: figures.unrealisedGainConverted
  }
}

export const lotView = (lot: Lot) => {
  const acquisition = lot.components.find((component) => component.kind === "acquisition")
  const income = lot.components.filter((component) => component.kind === "income")
  return {
    id: lot.id,
    acquired: lot.acquired,
    qty: lot.qty,
    basis: lot.basis,
    rate: lot.rate,
    rateDate: acquisition?.converted?.rateDate ?? null,
    source: acquisition?.converted?.source ?? null,
    carriedForward: acquisition?.converted?.carriedForward ?? false,
    basisUsd: lot.basisUsd,
    incomeAddedUsd: sumOrNull(income.map((component) => component.usd)),
    wallet: lot.wallet,
    location: lot.location,
    multiplierAtAcquisition: lot.multiplierAtAcquisition,
    shares: lot.shares,
    unknownBecause: lot.nullReasons
  }
}

export const disposalView = (disposal: Disposal) => ({
  id: disposal.id,
  eventId: disposal.eventId,
  date: disposal.date,
  type: disposal.type,
  wallet: disposal.wallet,
  counterparty: disposal.counterparty,
  qty: disposal.qty,
  shares: disposal.shares,
  lotId: disposal.lotId,
  acquired: disposal.acquired,
  holdingPeriod: disposal.holdingPeriod,
  currency: disposal.currency,
  proceeds: disposal.proceeds?.amount ?? null,
  basis: disposal.basis,
  gain: disposal.gain,
  proceedsUsd: disposal.proceedsUsd,
  basisUsd: disposal.basisUsd,
  gainUsd: disposal.gainUsd,
  rate: disposal.proceeds?.rate ?? null,
  rateDate: disposal.proceeds?.rateDate ?? null,
  source: disposal.proceeds?.source ?? null,
  carriedForward: disposal.proceeds?.carriedForward ?? false,
  taxable: disposal.taxable,
  needsReview: disposal.needsReview,
  txHash: disposal.walletTransaction.txHash,
  unknownBecause: disposal.nullReasons
})

/**
 * The realised gains of disposals given one at a time: Σ gain, Σ by holding period and Σ gain in USD, each null as
 * soon as one part is unknown (unknown never becomes zero); a disposal whose holding period is unknown could be
 * either, so it makes both period sums unknown.
 */
export class GainsSum {
  private total: BigNumber | null = new BigNumber(0)
  private shortTerm: BigNumber | null = new BigNumber(0)
  private longTerm: BigNumber | null = new BigNumber(0)
  private totalUsd: BigNumber | null = new BigNumber(0)
  private unknownCount = 0

  add(disposal: Disposal): void {
    const { gain, gainUsd, holdingPeriod } = disposal
    if (gain === null) this.unknownCount++
    this.total = gain === null || this.total === null ? null : this.total.plus(gain)
    this.totalUsd = gainUsd === null || this.totalUsd === null ? null : this.totalUsd.plus(gainUsd)
    if (holdingPeriod === null) {
      this.shortTerm = null
      this.longTerm = null
    } else if (holdingPeriod === "short") {
      this.shortTerm = gain === null || this.shortTerm === null ? null : this.shortTerm.plus(gain)
    } else {
      this.longTerm = gain === null || this.longTerm === null ? null : this.longTerm.plus(gain)
    }
  }

  view() {
    return {
      total: this.total?.toFixed() ?? null,
      shortTerm: this.shortTerm?.toFixed() ?? null,
      longTerm: this.longTerm?.toFixed() ?? null,
      totalUsd: this.totalUsd?.toFixed() ?? null,
      unknownCount: this.unknownCount
    }
  }
}

export const realisedGains = (disposals: ReadonlyArray<Disposal>) => {
  const sum = new GainsSum()
  for (const disposal of disposals) sum.add(disposal)
  return sum.view()
}

/**
 * `{ usd, <code>: converted, rate, rateDate, source, carriedForward }`; for USD accounts the code is `usd` itself,
 * and the rate the identity of the event's own date even when the amount is unknown (no price).
 */
const incomeView = (usd: string | null, converted: Converted | null, currency: ReportingCurrency, date: string) => {
  const identity = currency === "USD" && converted === null
  return {
    usd,
    [currency.toLowerCase()]: currency === "USD" ? usd : converted?.amount ?? null,
    rate: identity ? "1" : converted?.rate ?? null,
    rateDate: identity ? date : converted?.rateDate ?? null,
    source: identity ? "identity" : converted?.source ?? null,
    carriedForward: converted?.carriedForward ?? false
  }
}

type EventRow = Movement | IncomeEvent | SplitEvent

export const eventView = (row: EventRow): EventView => {
  switch (row.type) {
    case "income.multiplier_increase":
      return {
        id: row.id,
        block: row.block,
        date: row.date,
        type: row.type,
        eventId: row.eventId,
        token: row.token,
        wallet: row.wallet,
        from: row.from,
        to: row.to,
        income: incomeView(row.incomeUsd, row.income, row.currency, row.date),
        // Income rows stored before their reasons were kept have none.
        unknownBecause: row.nullReasons ?? [],
        walletTransaction: null,
        taxable: row.taxable,
        needsReview: row.needsReview
      }
    case "split":
      return {
        id: row.id,
        block: row.block,
        date: row.date,
        type: row.type,
        eventId: row.eventId,
        token: row.token,
        wallet: row.wallet,
        from: row.from,
        to: row.to,
        walletTransaction: null,
        taxable: row.taxable,
        needsReview: false
      }
    default:
      return {
        id: row.id,
        block: row.walletTransaction.block,
        date: row.date,
        type: row.type,
        token: row.token,
        wallet: row.wallet,
        walletTransaction: row.walletTransaction,
        counterparty: row.counterparty,
        relationship: row.relationship,
        classifiedBy: row.classifiedBy,
        qty: row.qty,
        valueUsd: row.valueUsd,
        taxable: row.taxable,
        needsReview: row.needsReview
      }
  }
}

/**
 * A total in the reporting currency: `knownAmount` sums the items known in it, `unknownCount` counts the others (an
 * unknown USD figure, or a known one with no usable rate on its date).
 */
export const totalView = (total: Total, currency: ReportingCurrency) => ({
  amount: total.converted,
  formatted: money(total.converted, currency),
  usd: total.usd,
  knownAmount: total.knownConverted,
  unknownCount: total.unknownCount + total.unconvertedCount
})
