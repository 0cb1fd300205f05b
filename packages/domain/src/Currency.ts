import { BigNumber } from "bignumber.js"
import { Schema } from "effect"

/** The 20 currencies the ECB reference set publishes that Scaledger reports in, besides USD itself. */
export const ReferenceCurrencies = [
  "EUR",
  "GBP",
  "JPY",
  "CHF",
  "CAD",
  "AUD",
  "NZD",
  "SGD",
  "HKD",
  "CNY",
  "KRW",
  "INR",
  "SEK",
  "NOK",
  "DKK",
  "PLN",
  "CZK",
  "MXN",
  "BRL",
  "ZAR"
] as const

export type ReferenceCurrency = (typeof ReferenceCurrencies)[number]

/** Every currency an account can report in: USD and the 20 reference currencies. */
export const ReportingCurrencies = ["USD", ...ReferenceCurrencies] as const

export const ReportingCurrency = Schema.Literal(...ReportingCurrencies).annotations({
  identifier: "ReportingCurrency",
  description: "USD or one of the 20 ECB reference currencies."
})
export type ReportingCurrency = typeof ReportingCurrency.Type

export const isReportingCurrency = (code: string): code is ReportingCurrency =>
  (ReportingCurrencies as ReadonlyArray<string>).includes(code)

export const isReferenceCurrency = (code: string): code is ReferenceCurrency =>
  (ReferenceCurrencies as ReadonlyArray<string>).includes(code)

interface CurrencyDisplay {
  readonly symbol: string
  /** Minor units shown when formatting. */
  readonly decimals: number
}

const display: Record<ReportingCurrency, CurrencyDisplay> = {
  USD: { symbol: "$", decimals: 2 },
  EUR: { symbol: "€", decimals: 2 },
  GBP: { symbol: "£", decimals: 2 },
  JPY: { symbol: "¥", decimals: 0 },
  CHF: { symbol: "CHF ", decimals: 2 },
  CAD: { symbol: "CA$", decimals: 2 },
  AUD: { symbol: "A$", decimals: 2 },
  NZD: { symbol: "NZ$", decimals: 2 },
  SGD: { symbol: "S$", decimals: 2 },
  HKD: { symbol: "HK$", decimals: 2 },
  CNY: { symbol: "CN¥", decimals: 2 },
  KRW: { symbol: "₩", decimals: 0 },
  INR: { symbol: "₹", decimals: 2 },
  SEK: { symbol: "SEK ", decimals: 2 },
  NOK: { symbol: "NOK ", decimals: 2 },
  DKK: { symbol: "DKK ", decimals: 2 },
  PLN: { symbol: "PLN ", decimals: 2 },
  CZK: { symbol: "CZK ", decimals: 2 },
  MXN: { symbol: "MX$", decimals: 2 },
  BRL: { symbol: "R$", decimals: 2 },
  ZAR: { symbol: "ZAR ", decimals: 2 }
}

export const currencySymbol = (currency: ReportingCurrency): string => display[currency].symbol
export const currencyDecimals = (currency: ReportingCurrency): number => display[currency].decimals

/**
 * Formats a decimal string as money in the given currency: symbol prefix, thousands separators, the currency's
 * minor units, half-up rounding. `formatMoney("1234.567", "USD") === "$1,234.57"`,
 * `formatMoney("-5", "SGD") === "-S$5.00"`, `formatMoney("1234.5", "JPY") === "¥1,235"`.
 */
export const formatMoney = (amount: string, currency: ReportingCurrency): string => {
  const { decimals, symbol } = display[currency]
  const value = new BigNumber(amount)
  if (!value.isFinite()) throw new Error(`formatMoney: not a finite decimal: ${amount}`)
  const rounded = value.abs().toFormat(decimals, BigNumber.ROUND_HALF_UP, {
    decimalSeparator: ".",
    groupSeparator: ",",
    groupSize: 3
  })
  const negative = value.isNegative() && !new BigNumber(rounded.replace(/,/g, "")).isZero()
  return `${negative ? "-" : ""}${symbol}${rounded}`
}
