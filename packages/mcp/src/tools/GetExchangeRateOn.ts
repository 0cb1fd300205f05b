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

/**
 * No rate can be given for valid arguments: the currency's ECB history starts after `date` (`no_rate_before`,
 * REST 404), or no rates are loaded yet (`rates_not_loaded`, REST 503). A tool answers nulls and a `status` for
 * what cannot be established, not a tool error (DECISIONS "MCP").
 */
const unestablished = (
  currency: string,
  status: "no_rate_before" | "rates_not_loaded",
  message: string,
  firstAvailable?: string
) => ({
  quote: currency.toUpperCase(),
  date: null,
  rate: null,
  source: null,
  carriedForward: null,
  derivation: null,
  perEur: null,
  stale: null,
  status,
  message,
  ...(firstAvailable === undefined ? {} : { firstAvailable }),
  evidence: { rates: [] }
})

/** `get_exchange_rate_on`: the REST twin is `GET /v1/fx/{currency}/{date}`. */
export const GetExchangeRateOn = Effect.map(FxReads, (fx) =>
  tool({
    name: "get_exchange_rate_on",
    title: "Exchange rate on a date",
    description:
      "The ECB reference rate of a currency per 1 USD on a date (a cross rate through EUR), its source, the ECB " +
      "publication day used, and whether that day was carried forward over a weekend or holiday. Where no rate " +
      "exists (a date before the currency's first ECB rate, `status: no_rate_before` with `firstAvailable`; rates " +
      "not loaded yet, `status: rates_not_loaded`) the rate and its provenance are null.",
    input: Input,
    run: ({ currency, date }) =>
      fx.quote(currency, date).pipe(
        Effect.map((quote) => ({
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
        })),
        Effect.catchIf(
          (error) => error._tag === "NotFound" || (error._tag === "ServiceUnavailable" && isNotLoaded(error.details)),
          (error) =>
            Effect.succeed(
              error._tag === "NotFound"
                ? unestablished(currency, "no_rate_before", error.message, firstAvailableOf(error.details))
                : unestablished(currency, "rates_not_loaded", error.message)
            )
        )
      )
  }))

const isNotLoaded = (details: unknown) =>
  typeof details === "object" && details !== null && (details as { reason?: unknown }).reason === "rates_not_loaded"

const firstAvailableOf = (details: unknown) => {
  const first = typeof details === "object" && details !== null
    ? (details as { firstAvailable?: unknown }).firstAvailable
    : undefined
  return typeof first === "string" ? first : undefined
}
