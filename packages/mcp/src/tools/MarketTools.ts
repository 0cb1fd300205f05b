import { EdgarReads } from "@scaledger/db/market/EdgarReads"
import { PortfolioSummaryReads } from "@scaledger/db/market/PortfolioSummary"
import { SaleEstimator } from "@scaledger/db/market/SaleEstimator"
import { WeekendExposureReads } from "@scaledger/db/market/WeekendExposure"
import { Effect, Schema } from "effect"
import { limitArgument, TEXT_MAX, textArgument, tool } from "../McpTool.js"

// Not empty, as the REST twins' `symbol` (an empty one names no token).
const Symbol = textArgument(TEXT_MAX.symbol, "Token symbol, e.g. AAPL (any case).", { nonEmpty: true })
const Decimal = (description: string) =>
  Schema.String.pipe(Schema.maxLength(TEXT_MAX.decimal), Schema.pattern(/^\d+(\.\d+)?$/)).annotations({
    description,
    message: () => `expected an unsigned decimal string such as "10.5" (digits, then an optional fraction)`,
    jsonSchema: { type: "string", maxLength: TEXT_MAX.decimal, pattern: "^\\d+(\\.\\d+)?$", description }
  })
const Day = (description: string) => textArgument(TEXT_MAX.date, `${description}, YYYY-MM-DD.`)

/** `get_portfolio_summary`: the REST twin is `GET /v1/portfolio/summary`. */
export const GetPortfolioSummary = Effect.map(PortfolioSummaryReads, (reads) =>
  tool({
    name: "get_portfolio_summary",
    title: "Portfolio summary",
    description:
      "The account's value, cost basis, unrealised gain and accrued dividend income (from multiplier growth) in the " +
      "reporting currency, the exchange rate in use with its source and ECB date, paused tokens, and whether US " +
      "markets are open now. Unknown figures are null with the reason.",
    input: Schema.Struct({}),
    run: (_, account) => reads.summary(account.id)
  }))

/** `get_weekend_exposure`: the REST twin is `GET /v1/exposure/weekend?symbol=`. */
export const GetWeekendExposure = Effect.map(WeekendExposureReads, (reads) =>
  tool({
    name: "get_weekend_exposure",
    title: "Weekend exposure",
    description:
      "Per held token: the archived last close (the feed round in force at the last regular NYSE close), the current " +
      "price (the latest round), and the drift in % and in money for the holding, each price with its feed round as " +
      "evidence; `status` explains any missing figure (no_feed, feed_stale, token_paused, market_open, …).",
    input: Schema.Struct({ symbol: Schema.optional(Symbol) }),
    run: ({ symbol }, account) => reads.exposure(account.id, { symbol })
  }))

/** `estimate_sale`: the REST twin is `GET /v1/estimates/sale?symbol=&shares=&price=&date=&wallet=`. */
export const EstimateSale = Effect.map(SaleEstimator, (estimator) =>
  tool({
    name: "estimate_sale",
    title: "Estimate a sale",
    description:
      "What selling `shares` share units of a token would look like: the lots FIFO would consume, proceeds, basis and " +
      "gain in the reporting currency with the rate's provenance, split into short and long term by the US one-year " +
      "rule (held more than one year, counted from the day after purchase), and for short-term lots the date each " +
      "turns long-term. A null basis stays null.",
    input: Schema.Struct({
      symbol: Symbol,
      shares: Decimal("Share units to sell (raw × multiplier), a decimal string such as \"10.5\"."),
      price: Schema.optional(Decimal("USD per share; default the latest feed price.")),
      date: Schema.optional(Day("Sale date; default today (UTC)")),
      wallet: Schema.optional(textArgument(
        TEXT_MAX.address,
        "The address selling: its own lots (wallet lot scope), or the account's up to its own balance (account " +
          "lot scope); needed when several wallets hold the token."
      ))
    }),
    run: (args, account) => estimator.estimate(account.id, args)
  }))

/** `get_recent_filings`: the REST twin is `GET /v1/filings?symbol=&limit=`. */
export const GetRecentFilings = Effect.map(EdgarReads, (edgar) =>
  tool({
    name: "get_recent_filings",
    openWorld: true,
    title: "Recent SEC filings",
    description:
      "Recent SEC EDGAR filings (form, date, accession number, document link) of the issuers behind the account's " +
      "tokens, or of one symbol. Says how old the cached data is; `status: edgar_not_configured` when the service " +
      "has no EDGAR_USER_AGENT.",
    input: Schema.Struct({
      symbol: Schema.optional(Symbol),
      limit: limitArgument(500, 50, "1 to 500, default 50.")
    }),
    run: (args, account) => edgar.filings(account.id, args)
  }))

/** `get_dividend_history`: the REST twin is `GET /v1/dividends?symbol=`. */
export const GetDividendHistory = Effect.map(EdgarReads, (edgar) =>
  tool({
    name: "get_dividend_history",
    openWorld: true,
    title: "Declared dividends",
    description:
      "Declared dividends per share from the issuer's XBRL filings (deduplicated by period), and for each dividend " +
      "step the account received the income per share the multiplier paid and the implied withholding rate. Null for " +
      "issuers without the concept (ETFs).",
    input: Schema.Struct({ symbol: Symbol }),
    run: ({ symbol }, account) => edgar.dividends(account.id, symbol)
  }))
