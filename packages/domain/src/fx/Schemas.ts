import { Schema } from "effect"
import { IsoDate, PositiveDecimal } from "../Basic.js"
import { ReportingCurrency } from "../Currency.js"

export const CurrencyCode = Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/)).annotations({
  identifier: "CurrencyCode",
  description: "An ISO 4217 code as the ECB writes it."
})

/** Where a day's numbers came from: always the ECB's reference rates, fetched from its own files or a mirror. */
export const FxSource = Schema.Literal("ecb-via-eurofxref", "ecb-via-frankfurter").annotations({
  identifier: "FxSource"
})
export type FxSource = typeof FxSource.Type

/**
 * One ECB publication day as published: units of each currency per 1 EUR, only the currencies published that day.
 * What providers produce and the store keeps.
 */
export const DayRates = Schema.Struct({
  date: IsoDate,
  perEur: Schema.Record({ key: CurrencyCode, value: PositiveDecimal })
}).annotations({ identifier: "DayRates" })
export type DayRates = typeof DayRates.Type

/** A stored publication day with the source it was fetched from. */
export const StoredDay = Schema.Struct({ ...DayRates.fields, source: FxSource }).annotations({
  identifier: "StoredDay"
})
export type StoredDay = typeof StoredDay.Type

/** What a provider returns: publication days, oldest first, and the source that produced them. */
export interface ProviderRates {
  readonly source: FxSource
  readonly days: ReadonlyArray<DayRates>
}

/**
 * SPEC "Exchange-rate quote": units of `quote` per 1 USD on the ECB publication day `date`.
 * `carriedForward` is true when the requested date had no publication for the pair and `date` is the last
 * publication day before it. `derivation` states the cross rate through EUR, e.g.
 * `"cross rate through EUR: (EUR→SGD)/(EUR→USD)"`; `perEur` holds the ECB numbers it was computed from.
 */
export const FxQuote = Schema.Struct({
  quote: ReportingCurrency,
  date: IsoDate,
  rate: PositiveDecimal,
  source: FxSource,
  carriedForward: Schema.Boolean,
  derivation: Schema.String,
  perEur: Schema.Record({ key: CurrencyCode, value: PositiveDecimal })
}).annotations({ identifier: "FxQuote", description: "Units of the quote currency per 1 USD (ECB cross rate)." })
export type FxQuote = typeof FxQuote.Type

/** The first ECB publication day. */
export const FIRST_ECB_DAY = "1999-01-04"
