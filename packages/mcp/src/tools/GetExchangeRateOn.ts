import { FxReads } from "@scaledger/db/reads/FxReads"
import { Effect, Schema } from "effect"
import { TEXT_MAX, textArgument, tool } from "../McpTool.js"

const Input = Schema.Struct({
  currency: textArgument(
    TEXT_MAX.currency,
    "USD or one of the 20 ECB reference currencies (EUR, GBP, JPY, CHF, …), any letter case."
  ),
  date: textArgument(TEXT_MAX.date, "A calendar date, YYYY-MM-DD, from 1999-01-04 to today (UTC).")
})

/** `get_exchange_rate_on`: the REST twin is `GET /v1/fx/{currency}/{date}`. */
export const GetExchangeRateOn = Effect.map(FxReads, (fx) =>
  tool({
    name: "get_exchange_rate_on",
    title: "Exchange rate on a date",
    description:
      "The ECB reference rate of a currency per 1 USD on a date (a cross rate through EUR), its source, the ECB " +
      "publication day used, and whether that day was carried forward over a weekend or holiday.",
    input: Input,
    run: ({ currency, date }) =>
      Effect.map(fx.quote(currency, date), (quote) => ({
        ...quote,
        evidence: {
          rates: [{
            currency: quote.quote,
            rate: quote.rate,
            source: quote.source,
            rateDate: quote.date,
            carriedForward: quote.carriedForward,
            ecbPerEur: quote.perEur
          }]
        }
      }))
  }))
