import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { anyCaseOf, DATE_FORM, IsoDate, PositiveDecimal, TextAccepted } from "./Basic.js"
import { ReportingCurrencies } from "./Currency.js"
import { InvalidDateError, NotFoundError, UnsupportedCurrencyError } from "./Errors.js"
import { FxQuote, FxSource } from "./fx/Schemas.js"

/**
 * SPEC "Exchange-rate quote" (`quote`, `date`, `rate`, `source`, `carriedForward`) plus `derivation` and `perEur`
 * (the ECB numbers behind the rate) and `stale`.
 */
export const ExchangeRateQuote = Schema.Struct({
  ...FxQuote.fields,
  stale: Schema.Boolean.annotations({
    description:
      "True when the stored rates are stale (more than 2 TARGET business days behind today) and a business day " +
      "after the newest stored publication lies on or before `date`: its ECB rates exist but have not been fetched."
  })
}).annotations({
  identifier: "ExchangeRateQuote",
  description:
    "Units of `quote` per 1 USD on the ECB publication day `date`, a cross rate through EUR. `rate` keeps 20 " +
    "significant digits; round only for display."
})
export type ExchangeRateQuote = typeof ExchangeRateQuote.Type

/**
 * What every converted figure carries: the rate (units of the reporting currency per 1 USD), its source, the ECB
 * publication day it comes from, and whether that day is earlier than the figure's own date.
 */
export const RateProvenance = Schema.Struct({
  rate: PositiveDecimal,
  source: FxSource,
  rateDate: IsoDate,
  carriedForward: Schema.Boolean
}).annotations({ identifier: "RateProvenance" })
export type RateProvenance = typeof RateProvenance.Type

export const FxQuotePath = Schema.Struct({
  currency: TextAccepted(
    "USD or one of the 20 reference currencies, any letter case.",
    anyCaseOf(ReportingCurrencies)
  ),
  date: TextAccepted("A calendar date YYYY-MM-DD, from 1999-01-04 to today (UTC).", DATE_FORM)
})

export class FxGroup extends HttpApiGroup.make("fx")
  .add(
    HttpApiEndpoint.get("quote", "/fx/:currency/:date")
      .setPath(FxQuotePath)
      .addSuccess(ExchangeRateQuote)
      .addError(UnsupportedCurrencyError)
      .addError(InvalidDateError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get the ECB reference rate on a date")
      .annotate(
        OpenApi.Description,
        "The ECB reference rate of a currency against USD on a date: (EUR→X)/(EUR→USD), 1/(EUR→USD) for EUR. " +
          "Rates exist on TARGET business days only; another date answers the last publication before it with " +
          "`carriedForward: true`. A date before the currency's first ECB publication answers 404 `not_found`."
      )
  )
  .annotate(OpenApi.Title, "Exchange rates")
  .annotate(OpenApi.Description, "ECB reference rates against USD (cross rates through EUR), with provenance.")
{}
