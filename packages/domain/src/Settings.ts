import { Schema } from "effect"
import { anyCaseOf, TextAccepted } from "./Basic.js"
import { strict } from "./Common.js"
import { ReportingCurrencies, ReportingCurrency } from "./Currency.js"
import { countryRule, LedgerCountry, LotScope } from "./ledger/CountryRule.js"

export const Countries = LedgerCountry.literals
export const Country = LedgerCountry.annotations({
  identifier: "Country",
  description:
    "The country rule: US (income taxable, long-term after one year, basis per wallet), SG (no capital-gains tax), DE (FIFO, basis per account)."
})
export type Country = typeof Country.Type

export { LotScope }

export const lotScopeOf = (country: Country): LotScope => countryRule(country).lotScope

export const Settings = Schema.Struct({
  country: Country,
  reportingCurrency: ReportingCurrency,
  lotMatching: Schema.Literal("fifo"),
  lotScope: LotScope
}).annotations({ identifier: "Settings" })
export type Settings = typeof Settings.Type

/** Fields left out keep their current value. Currency codes are matched case-insensitively. */
export const UpdateSettings = Schema.Struct({
  country: Schema.optional(TextAccepted("`US`, `SG` or `DE`, any letter case.", anyCaseOf(LedgerCountry.literals))),
  reportingCurrency: Schema.optional(TextAccepted(
    "USD or one of the 20 ECB reference currencies, any letter case.",
    anyCaseOf(ReportingCurrencies)
  ))
}).annotations({ identifier: "UpdateSettings", ...strict })
