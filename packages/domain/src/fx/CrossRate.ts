import { BigNumber } from "bignumber.js"
import { Option } from "effect"
import { isPositiveDecimal } from "../Basic.js"
import type { ReportingCurrency } from "../Currency.js"

/**
 * Significant digits kept in a cross rate. The ECB publishes at most 6 significant digits, so 20 digits carry the
 * quotient well past any amount Scaledger converts; results are correctly rounded (ROUND_HALF_EVEN) to this many.
 */
export const CROSS_RATE_SIGNIFICANT_DIGITS = 20

const INTERMEDIATE_DECIMAL_PLACES = 60

const Truncating = BigNumber.clone({
  DECIMAL_PLACES: INTERMEDIATE_DECIMAL_PLACES,
  ROUNDING_MODE: BigNumber.ROUND_DOWN,
  EXPONENTIAL_AT: 1e9
})

const nudge = new Truncating(1).shiftedBy(-(INTERMEDIATE_DECIMAL_PLACES + 1))

/**
 * `numerator / denominator`, correctly rounded half-even to `CROSS_RATE_SIGNIFICANT_DIGITS` significant digits,
 * as a plain decimal string (no exponent, no trailing zeros). Both arguments are positive decimal strings.
 */
export const divideRates = (numerator: string, denominator: string): string => {
  if (!isPositiveDecimal(numerator) || !isPositiveDecimal(denominator)) {
    throw new RangeError(`divideRates: rates must be positive decimals, got ${numerator} / ${denominator}`)
  }
  const n = new Truncating(numerator)
  const d = new Truncating(denominator)
  const truncated = n.div(d)
  // A truncated quotient that sits exactly on a rounding midpoint would be mistaken for a tie: the true quotient
  // lies strictly above it unless the division was exact, so lift it by less than one unit of the last place.
  const quotient = truncated.times(d).eq(n) ? truncated : truncated.plus(nudge)
  return quotient.precision(CROSS_RATE_SIGNIFICANT_DIGITS, BigNumber.ROUND_HALF_EVEN).toFixed()
}

/** How a quote is derived from the ECB's per-euro rates, for `FxQuote.derivation`. */
export const derivationOf = (quote: ReportingCurrency): string =>
  quote === "USD"
    ? "identity: USD per USD = 1"
    : quote === "EUR"
    ? "cross rate through EUR: 1/(EUR→USD)"
    : `cross rate through EUR: (EUR→${quote})/(EUR→USD)`

/** The ECB codes a quote needs from one publication day (`USD`, plus the currency unless it is EUR or USD). */
export const inputsNeeded = (quote: ReportingCurrency): ReadonlyArray<string> =>
  quote === "USD" || quote === "EUR" ? ["USD"] : [quote, "USD"]

/**
 * Units of `quote` per 1 USD from one day's per-euro rates: (EUR→X)/(EUR→USD), 1/(EUR→USD) for EUR, 1 for USD.
 * `None` when the day lacks USD or the currency.
 */
export const usdCrossRate = (
  quote: ReportingCurrency,
  perEur: Readonly<Record<string, string>>
): Option.Option<string> => {
  const usd = perEur["USD"]
  if (usd === undefined) return Option.none()
  if (quote === "USD") return Option.some("1")
  if (quote === "EUR") return Option.some(divideRates("1", usd))
  const other = perEur[quote]
  return other === undefined ? Option.none() : Option.some(divideRates(other, usd))
}

/**
 * A rate rounded for display only (never store or compute with the result): `significantDigits` significant
 * digits, half-even, trailing zeros kept so columns line up. `displayRate("0.75337717739068610025") === "0.753377"`.
 */
export const displayRate = (rate: string, significantDigits = 6): string => {
  const rounded = new Truncating(rate).precision(significantDigits, BigNumber.ROUND_HALF_EVEN)
  const exponent = rounded.e ?? 0
  return rounded.toFixed(Math.max(0, significantDigits - exponent - 1))
}
