import { BigNumber } from "bignumber.js"
import { Schema } from "effect"
import { ReportingCurrency } from "../Currency.js"
import { divRound, formatWad, parseCivil, unixOfCivil } from "./Fixed.js"
import type { RateEntry, RateTable } from "./LedgerInput.js"

/** A USD figure in the reporting currency, with the rate behind it. */
export const Converted = Schema.Struct({
  currency: ReportingCurrency,
  amount: Schema.String,
  /** Units of `currency` per USD. */
  rate: Schema.String,
  /** The day the rate was published for (may be before the figure's date when carried forward). */
  rateDate: Schema.String,
  source: Schema.String,
  carriedForward: Schema.Boolean
}).annotations({ identifier: "Converted" })
export type Converted = typeof Converted.Type

/** How far back a missing date may borrow the last published rate (covers ECB weekends and holiday runs). */
export const MAX_CARRY_FORWARD_DAYS = 7

const Money = BigNumber.clone({ DECIMAL_PLACES: 18, ROUNDING_MODE: BigNumber.ROUND_HALF_EVEN, EXPONENTIAL_AT: 1e9 })

interface RateLookup {
  readonly byDate: Map<string, RateEntry>
  readonly dates: ReadonlyArray<string>
}

const lookups = new WeakMap<RateTable, RateLookup>()

const lookupOf = (rates: RateTable): RateLookup => {
  let lookup = lookups.get(rates)
  if (lookup === undefined) {
    const byDate = new Map<string, RateEntry>()
    for (const entry of rates.rates) byDate.set(entry.date, entry)
    lookup = { byDate, dates: [...byDate.keys()].sort() }
    lookups.set(rates, lookup)
  }
  return lookup
}

const entryOn = (lookup: RateLookup, date: string): { entry: RateEntry; borrowed: boolean } | null => {
  const exact = lookup.byDate.get(date)
  if (exact !== undefined) return { entry: exact, borrowed: false }
  const { dates } = lookup
  let lo = 0
  let hi = dates.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (dates[mid]! < date) lo = mid + 1
    else hi = mid
  }
  if (lo === 0) return null
  const previous = dates[lo - 1]!
  const gapDays = (unixOfCivil(parseCivil(date)) - unixOfCivil(parseCivil(previous))) / 86_400
  return gapDays <= MAX_CARRY_FORWARD_DAYS ? { entry: lookup.byDate.get(previous)!, borrowed: true } : null
}

const daysBetween = (earlier: string, later: string): number =>
  (unixOfCivil(parseCivil(later)) - unixOfCivil(parseCivil(earlier))) / 86_400

const isStale = (entry: RateEntry, date: string): boolean =>
  entry.rateDate !== date && /^\d{4}-\d{2}-\d{2}$/.test(entry.rateDate) &&
  daysBetween(entry.rateDate, date) > MAX_CARRY_FORWARD_DAYS

/**
 * Whether the table's rate for `date` is missing only because the newest rate before it was published more than
 * {@link MAX_CARRY_FORWARD_DAYS} days earlier (a stale reference, not an absent one).
 */
export const staleRateOn = (date: string, rates: RateTable | undefined): boolean => {
  if (rates === undefined || rates.currency === "USD") return false
  const lookup = lookupOf(rates)
  const exact = lookup.byDate.get(date)
  if (exact !== undefined) return isStale(exact, date)
  const { dates } = lookup
  let lo = 0
  let hi = dates.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (dates[mid]! < date) lo = mid + 1
    else hi = mid
  }
  return lo > 0
}

/** The rate a figure of some date is converted at, with its provenance. */
export interface RateQuote {
  readonly currency: ReportingCurrency
  readonly rate: string
  readonly rateDate: string
  readonly source: string
  readonly carriedForward: boolean
  /** `rate` as units / scale. */
  readonly units: bigint
  readonly scale: bigint
}

const parsedRates = new WeakMap<RateEntry, { readonly units: bigint; readonly scale: bigint }>()

const parsedRate = (entry: RateEntry): { readonly units: bigint; readonly scale: bigint } => {
  let parsed = parsedRates.get(entry)
  if (parsed === undefined) {
    const [whole, fraction = ""] = entry.rate.split(".")
    parsed = { units: BigInt(whole! + fraction), scale: 10n ** BigInt(fraction.length) }
    parsedRates.set(entry, parsed)
  }
  return parsed
}

/**
 * The rate for figures dated `date` (the figure's own date, never today's for history). With no table, or a USD
 * table, it is the identity. A date missing from the table borrows the last earlier rate within
 * {@link MAX_CARRY_FORWARD_DAYS} days (carriedForward true); otherwise there is none (null).
 */
export const rateOn = (date: string, rates: RateTable | undefined): RateQuote | null => {
  if (rates === undefined || rates.currency === "USD") {
    return {
      currency: "USD",
      rate: "1",
      rateDate: date,
      source: "identity",
      carriedForward: false,
      units: 1n,
      scale: 1n
    }
  }
  const found = entryOn(lookupOf(rates), date)
  if (found === null) return null
  const { entry } = found
  // The table's own entries may be carried forward already (the rate service fills every date): a rate published
  // more than MAX_CARRY_FORWARD_DAYS before the figure's date is not used.
  if (isStale(entry, date)) return null
  return {
    currency: rates.currency,
    rate: entry.rate,
    rateDate: entry.rateDate,
    source: entry.source,
    carriedForward: entry.carriedForward || found.borrowed,
    ...parsedRate(entry)
  }
}

/** A fixed-point amount (× 1e18) at a quoted rate, rounded half to even at 18 decimal places. */
export const applyRate = (usd: bigint, quote: RateQuote): bigint =>
  quote.scale === 1n ? usd * quote.units : divRound(usd * quote.units, quote.scale)

export const convertedOf = (amount: bigint, quote: RateQuote): Converted => ({
  currency: quote.currency,
  amount: formatWad(amount),
  rate: quote.rate,
  rateDate: quote.rateDate,
  source: quote.source,
  carriedForward: quote.carriedForward
})

/**
 * Converts a USD amount (a decimal string) at the rate of `date`, with the rate's provenance; null when the table
 * has no rate for that date. The amount is rounded half to even at 18 decimal places.
 */
export const convert = (usdAmount: string, date: string, rates: RateTable | undefined): Converted | null => {
  const quote = rateOn(date, rates)
  if (quote === null) return null
  if (quote.currency === "USD") return { ...convertedOf(0n, quote), amount: usdAmount }
  return {
    ...convertedOf(0n, quote),
    amount: new Money(usdAmount).times(quote.rate).decimalPlaces(18, BigNumber.ROUND_HALF_EVEN).toFixed()
  }
}

/** The reporting currency a rate table reports in (USD without one). */
export const reportingCurrencyOf = (rates: RateTable | undefined): ReportingCurrency =>
  rates === undefined ? "USD" : rates.currency
