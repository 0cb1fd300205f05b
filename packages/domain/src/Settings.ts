import { Schema } from "effect"
import { strict } from "./Common.js"
import { ReportingCurrency } from "./Currency.js"

export const Countries = ["US", "SG", "DE"] as const
export const Country = Schema.Literal(...Countries).annotations({
  identifier: "Country",
  description: "The country rule: US (income taxable, long-term after one year, basis per wallet), SG (no capital-gains tax), DE (FIFO, basis per account)."
})
export type Country = typeof Country.Type

export const LotScope = Schema.Literal("wallet", "account")
export type LotScope = typeof LotScope.Type

export const lotScopeOf = (country: Country): LotScope => (country === "DE" ? "account" : "wallet")

export const Settings = Schema.Struct({
  country: Country,
  reportingCurrency: ReportingCurrency,
  lotMatching: Schema.Literal("fifo"),
  lotScope: LotScope
}).annotations({ identifier: "Settings" })
export type Settings = typeof Settings.Type

/** Fields left out keep their current value. Currency codes are matched case-insensitively. */
export const UpdateSettings = Schema.Struct({
  country: Schema.optional(Schema.String),
  reportingCurrency: Schema.optional(Schema.String)
}).annotations({ identifier: "UpdateSettings", ...strict })
