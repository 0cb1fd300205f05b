import { Schema } from "effect"

export const LedgerCountry = Schema.Literal("US", "SG", "DE").annotations({
  description: "The country whose rule decides what is taxable and how lots are pooled."
})
export type LedgerCountry = typeof LedgerCountry.Type

export const LotScope = Schema.Literal("wallet", "account").annotations({
  description:
    "wallet: each address has its own lots (US since 2025); account: one pool per token across own addresses."
})
export type LotScope = typeof LotScope.Type

export const CountryRule = Schema.Struct({
  country: LedgerCountry,
  /** Whether income from a dividend step is taxable income. It is added to basis either way. */
  incomeTaxable: Schema.Boolean,
  /** Whether a disposal is a taxable event (capital gains). */
  disposalsTaxable: Schema.Boolean,
  lotMatching: Schema.Literal("fifo"),
  lotScope: LotScope,
  /** Always the US calendar rule: shown everywhere, whatever the country taxes. */
  holdingPeriodRule: Schema.Literal("us-calendar")
}).annotations({ identifier: "CountryRule" })
export type CountryRule = typeof CountryRule.Type

export const countryRules: Readonly<Record<LedgerCountry, CountryRule>> = {
  US: {
    country: "US",
    incomeTaxable: true,
    disposalsTaxable: true,
    lotMatching: "fifo",
    lotScope: "wallet",
    holdingPeriodRule: "us-calendar"
  },
  // Singapore: no capital-gains tax; foreign-sourced dividends received by individuals are exempt. The income is
  // still recorded and still added to basis (the token's value includes it), with taxable false.
  SG: {
    country: "SG",
    incomeTaxable: false,
    disposalsTaxable: false,
    lotMatching: "fifo",
    lotScope: "wallet",
    holdingPeriodRule: "us-calendar"
  },
  DE: {
    country: "DE",
    incomeTaxable: true,
    disposalsTaxable: true,
    lotMatching: "fifo",
    lotScope: "account",
    holdingPeriodRule: "us-calendar"
  }
}

export const countryRule = (country: LedgerCountry): CountryRule => countryRules[country]
