import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import {
  ADDRESS_FORM,
  DATE_FORM,
  DecimalString,
  IntegerFromString,
  IsoDate,
  IsoDateTime,
  maxCharacters,
  NullableDecimal,
  positiveDecimalForm,
  SAFE_TEXT_PATTERN,
  TextAccepted
} from "./Basic.js"
import {
  InvalidAddressError,
  InvalidDateError,
  InvalidRequestError,
  NotFoundError,
  ReplayInProgressError
} from "./Errors.js"

/** A token symbol in a query: 1 to 64 characters (an empty `symbol=` names no token). */
const SymbolParam = (description: string) =>
  Schema.String.pipe(Schema.minLength(1), maxCharacters(64)).annotations({
    message: () => "expected a token symbol of 1 to 64 characters",
    jsonSchema: { type: "string", description, minLength: 1, maxLength: 64, pattern: SAFE_TEXT_PATTERN }
  })

/** How old the EDGAR data behind an answer is. */
const dataAge = {
  dataAsOf: Schema.NullOr(IsoDateTime).annotations({
    description: "When the oldest EDGAR document behind this answer was fetched; null when none was used."
  }),
  dataAgeSeconds: Schema.NullOr(Schema.Int).annotations({ description: "Seconds since `dataAsOf`." })
}

export const EdgarStatus = Schema.Literal(
  "ok",
  "edgar_not_configured",
  "edgar_unavailable",
  "unknown_ticker",
  "no_dividend_data",
  "no_holdings"
).annotations({
  description: "`ok`; `edgar_not_configured` (no `EDGAR_USER_AGENT`: nothing was requested); `edgar_unavailable` " +
    "(EDGAR did not answer and nothing is cached); `unknown_ticker` (EDGAR lists no issuer for the symbol); " +
    "`no_dividend_data` (the issuer files no dividend-per-share facts: ETFs, foreign issuers); `no_holdings` (the " +
    "account holds no token to look up)."
})

export const FilingView = Schema.Struct({
  symbol: Schema.String,
  cik: Schema.Int,
  accessionNumber: Schema.String,
  form: Schema.String,
  filingDate: IsoDate,
  reportDate: Schema.NullOr(Schema.String),
  acceptedAt: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Filing" })

export const FilingIssuer = Schema.Struct({
  symbol: Schema.String,
  cik: Schema.NullOr(Schema.Int),
  name: Schema.NullOr(Schema.String),
  status: EdgarStatus,
  stale: Schema.Boolean.annotations({
    description: "True when EDGAR could not be reached and older cached data is shown."
  }),
  ...dataAge
}).annotations({ identifier: "FilingIssuer" })

export const Filings = Schema.Struct({
  status: EdgarStatus,
  ...dataAge,
  filings: Schema.NullOr(Schema.Array(FilingView)).annotations({
    description: "Newest first across the issuers; null when EDGAR is not configured or unavailable."
  }),
  issuers: Schema.Array(FilingIssuer),
  evidence: Schema.Struct({ accessionNumbers: Schema.Array(Schema.String) })
}).annotations({ identifier: "Filings" })
export type Filings = typeof Filings.Type

export const DeclaredDividendView = Schema.Struct({
  start: IsoDate,
  end: IsoDate,
  period: Schema.Literal("quarter", "half_year", "nine_months", "annual", "other"),
  perShare: DecimalString.annotations({ description: "USD per share, gross, as declared." }),
  form: Schema.String,
  filed: IsoDate,
  accessionNumber: Schema.String,
  fiscalYear: Schema.NullOr(Schema.Int),
  fiscalPeriod: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DeclaredDividend" })

export const WithholdingEstimate = Schema.Struct({
  eventId: Schema.String,
  wallet: Schema.String,
  date: IsoDate,
  from: DecimalString,
  to: DecimalString,
  sharePriceUsd: NullableDecimal,
  paidPerShare: NullableDecimal.annotations({
    description: "USD per share the step paid: (to / from − 1) × share price. Null without a price."
  }),
  declaredPerShare: NullableDecimal,
  declaredPeriod: Schema.NullOr(Schema.Struct({ start: IsoDate, end: IsoDate })),
  matchedBy: Schema.NullOr(Schema.Literal("containing_quarter", "previous_quarter")),
  impliedWithholdingRate: NullableDecimal.annotations({
    description: "1 − paid / declared (0.3 = 30 %); null where either is unknown."
  }),
  accessionNumber: Schema.NullOr(Schema.String).annotations({ description: "The filing of the declared figure." })
}).annotations({ identifier: "WithholdingEstimate" })

export const Dividends = Schema.Struct({
  symbol: Schema.String,
  status: EdgarStatus,
  cik: Schema.NullOr(Schema.Int),
  name: Schema.NullOr(Schema.String),
  concept: Schema.NullOr(Schema.String).annotations({
    description:
      "The XBRL concept read: `CommonStockDividendsPerShareDeclared`, else `CommonStockDividendsPerShareCashPaid`."
  }),
  stale: Schema.Boolean,
  ...dataAge,
  dividends: Schema.NullOr(Schema.Array(DeclaredDividendView)).annotations({
    description: "Quarterly and annual declared dividends, one per period (a 10-K's repeated quarters deduplicated), " +
      "oldest first; null when unknown (not configured, no such concept, unknown ticker)."
  }),
  withholding: Schema.Array(WithholdingEstimate).annotations({
    description: "For each dividend step of the token the account received: declared beside paid per share."
  }),
  evidence: Schema.Struct({ eventIds: Schema.Array(Schema.String), accessionNumbers: Schema.Array(Schema.String) })
}).annotations({ identifier: "Dividends" })
export type Dividends = typeof Dividends.Type

export class MarketGroup extends HttpApiGroup.make("market")
  .add(
    HttpApiEndpoint.get("filings", "/filings")
      .setUrlParams(Schema.Struct({
        symbol: Schema.optional(
          SymbolParam("A token symbol; default: every held token.")
        ),
        limit: Schema.optional(
          IntegerFromString.pipe(Schema.int(), Schema.between(1, 500)).annotations({
            // In the document only: as a `description` of the schema it would name the type in error messages.
            jsonSchema: {
              type: "integer",
              minimum: 1,
              maximum: 500,
              default: 50,
              description: "How many filings, 1 to 500 (default 50), as every list takes."
            }
          })
        )
      }))
      .addSuccess(Filings)
      .addError(ReplayInProgressError)
      .annotate(
        OpenApi.Description,
        "Recent SEC filings of the issuers behind the account's tokens (or of `symbol`), from EDGAR. Answers 200 " +
          "with `status: \"edgar_not_configured\"` and null filings when `EDGAR_USER_AGENT` is not set."
      )
  )
  .add(
    HttpApiEndpoint.get("dividends", "/dividends")
      .setUrlParams(Schema.Struct({ symbol: SymbolParam("A token symbol.") }))
      .addSuccess(Dividends)
      .addError(ReplayInProgressError)
      .annotate(
        OpenApi.Description,
        "Declared dividends per share from the issuer's XBRL facts, and for each dividend step the account received " +
          "the implied withholding rate. `dividends` is null for issuers without the concept (ETFs)."
      )
  )
  .annotate(OpenApi.Title, "Market data")
{}

const TermTotalsView = Schema.Struct({
  shares: DecimalString,
  proceeds: NullableDecimal,
  basis: NullableDecimal,
  gain: NullableDecimal
})

export const RateInUse = Schema.Struct({
  currency: Schema.String,
  rate: DecimalString.annotations({ description: "Units of the reporting currency per USD." }),
  source: Schema.String,
  rateDate: IsoDate,
  carriedForward: Schema.Boolean
}).annotations({ identifier: "RateInUse" })

export type RateInUse = typeof RateInUse.Type

/** The rate an answer's evidence cites: the rate in use, unless there is none or it is USD's own (`identity`). */
export const ratesBehind = (rate: RateInUse | null): ReadonlyArray<RateInUse> =>
  rate === null || rate.source === "identity" ? [] : [rate]

const EVIDENCE_RATES =
  "The exchange rate behind the answer's converted figures (`rate`), with its source and ECB day; " +
  "empty in USD or when there is none."

export const SaleLotView = Schema.Struct({
  lotId: Schema.String,
  acquired: IsoDate,
  wallet: Schema.NullOr(Schema.String),
  raw: Schema.String,
  shares: DecimalString,
  holdingPeriod: Schema.NullOr(Schema.Literal("short", "long")).annotations({
    description: "Null when the lot's acquisition date is unknown (then `shortTerm` and `longTerm` figures are null)."
  }),
  proceeds: NullableDecimal,
  basis: NullableDecimal,
  gain: NullableDecimal,
  proceedsUsd: NullableDecimal,
  basisUsd: NullableDecimal,
  gainUsd: NullableDecimal,
  longTermOn: Schema.NullOr(IsoDate).annotations({
    description: "Short-term lots: the first sale date on which this lot is long-term (US calendar rule)."
  }),
  daysToLongTerm: Schema.NullOr(Schema.Int),
  gainBecomingLongTerm: NullableDecimal.annotations({
    description: "Short-term lots: the gain that would be long-term instead if the sale waited until `longTermOn` " +
      "(at the same price)."
  }),
  unknownBecause: Schema.Array(Schema.Struct({ reason: Schema.String, eventId: Schema.String }))
}).annotations({ identifier: "SaleLot" })

export const SaleEstimateView = Schema.Struct({
  status: Schema.Literal("ok", "no_price", "no_rate").annotations({
    description: "`no_price`: no price given and no feed round known, so proceeds and gains are null; `no_rate`: " +
      "no exchange rate for the date, so converted figures are null (the `…Usd` ones stay)."
  }),
  symbol: Schema.String,
  wallet: Schema.NullOr(Schema.String),
  lotScope: Schema.Literal("wallet", "account"),
  date: IsoDate,
  currency: Schema.String,
  shares: DecimalString,
  raw: Schema.String,
  multiplier: DecimalString,
  price: Schema.Struct({
    usdPerShare: NullableDecimal,
    source: Schema.Literal("given", "feed", "none"),
    round: Schema.NullOr(Schema.Struct({
      feed: Schema.String,
      roundId: Schema.String,
      updatedAt: IsoDateTime,
      answer: DecimalString
    }))
  }),
  rate: Schema.NullOr(RateInUse),
  proceeds: NullableDecimal,
  basis: NullableDecimal,
  gain: NullableDecimal,
  proceedsUsd: NullableDecimal,
  basisUsd: NullableDecimal,
  gainUsd: NullableDecimal,
  shortTerm: TermTotalsView,
  longTerm: TermTotalsView,
  ifWaited: Schema.NullOr(Schema.Struct({ date: IsoDate, gainBecomingLongTerm: NullableDecimal })),
  lots: Schema.Array(SaleLotView),
  evidence: Schema.Struct({
    lotIds: Schema.Array(Schema.String),
    eventIds: Schema.Array(Schema.String),
    rates: Schema.Array(RateInUse).annotations({ description: EVIDENCE_RATES })
  })
}).annotations({ identifier: "SaleEstimate" })
export type SaleEstimateView = typeof SaleEstimateView.Type

export class EstimatesGroup extends HttpApiGroup.make("estimates")
  .add(
    HttpApiEndpoint.get("sale", "/estimates/sale")
      .setUrlParams(Schema.Struct({
        symbol: SymbolParam("Token symbol."),
        shares: TextAccepted(
          "Share units to sell (raw × multiplier), a decimal greater than zero, at most 18 decimals.",
          positiveDecimalForm(18)
        ),
        price: Schema.optional(TextAccepted(
          "USD per share, greater than zero, at most 18 decimals; default the latest feed price of the position.",
          positiveDecimalForm(18)
        )),
        date: Schema.optional(TextAccepted("Sale date, YYYY-MM-DD; default today (UTC).", DATE_FORM)),
        wallet: Schema.optional(TextAccepted(
          "The address selling: its own lots (wallet lot scope), or the account's up to its own balance (account " +
            "lot scope); needed when several wallets hold the token. Mixed case only as a valid EIP-55 checksum.",
          ADDRESS_FORM
        ))
      }))
      .addSuccess(SaleEstimateView)
      .addError(InvalidRequestError)
      .addError(InvalidDateError)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .addError(ReplayInProgressError)
      .annotate(
        OpenApi.Description,
        "What selling `shares` would look like under FIFO: the lots consumed, proceeds, basis and gain in the " +
          "reporting currency (and USD), split into short and long term by the US calendar rule, and for each " +
          "short-term lot the date it turns long-term. Nothing is recorded."
      )
  )
  .annotate(OpenApi.Title, "Estimates")
{}

export const RoundView = Schema.Struct({
  feed: Schema.String,
  roundId: Schema.String,
  updatedAt: IsoDateTime,
  answer: DecimalString.annotations({ description: "USD per token (the multiplier already included)." })
}).annotations({ identifier: "FeedRound" })

export const PauseView = Schema.Struct({
  paused: Schema.Boolean,
  since: Schema.NullOr(IsoDateTime).annotations({ description: "Time of the block of the latest pause event." }),
  block: Schema.NullOr(Schema.Int),
  provisional: Schema.Boolean
}).annotations({ identifier: "PauseState" })

export const ExposureStatus = Schema.Literal(
  "ok",
  "market_open",
  "no_feed",
  "no_round_at_close",
  "feed_stale",
  "no_price",
  "token_paused"
).annotations({
  description: "`ok`: the market is closed and both prices are known; `market_open`: a regular session is under way " +
    "(the drift is the session's move so far); `no_feed`: no price feed is recorded for the token (every figure " +
    "null); `no_round_at_close`: the feed's recorded history starts after the last close; `feed_stale`: the round " +
    "in force at the close is more than a heartbeat (24 h) older than the close, so it is no close price (drift " +
    "null); `no_price`: the round at the close or the current one answers zero or less, which is no price (drift " +
    "null); `token_paused`: the issuer paused the token (figures shown, trading halted). Without a rate published " +
    "within 7 days, `rate` and every `drift` are null."
})

export const TokenExposure = Schema.Struct({
  symbol: Schema.String,
  tokenAddress: Schema.String,
  balance: DecimalString.annotations({ description: "Tokens held over all own wallets." }),
  sharesEquivalent: DecimalString,
  status: ExposureStatus,
  lastClose: Schema.Struct({ at: IsoDateTime, round: Schema.NullOr(RoundView) }),
  current: Schema.NullOr(RoundView),
  driftPercent: NullableDecimal.annotations({ description: "(current / close − 1) × 100, 4 decimals." }),
  driftUsd: NullableDecimal.annotations({ description: "balance × (current − close)." }),
  drift: NullableDecimal.annotations({ description: "`driftUsd` in the reporting currency." }),
  paused: PauseView,
  oraclePaused: PauseView
}).annotations({ identifier: "TokenExposure" })

export const WeekendExposure = Schema.Struct({
  asOf: IsoDateTime,
  marketOpen: Schema.Boolean,
  lastClose: IsoDateTime.annotations({ description: "The last regular NYSE close at or before `asOf`." }),
  nextOpen: IsoDateTime,
  currency: Schema.String,
  rate: Schema.NullOr(RateInUse),
  tokens: Schema.Array(TokenExposure),
  evidence: Schema.Struct({
    rounds: Schema.Array(Schema.String),
    rates: Schema.Array(RateInUse).annotations({ description: EVIDENCE_RATES })
  })
}).annotations({ identifier: "WeekendExposure" })
export type WeekendExposure = typeof WeekendExposure.Type

export class ExposureGroup extends HttpApiGroup.make("exposure")
  .add(
    HttpApiEndpoint.get("weekend", "/exposure/weekend")
      .setUrlParams(Schema.Struct({
        symbol: Schema.optional(
          SymbolParam("A token symbol; default: every held token.")
        )
      }))
      .addSuccess(WeekendExposure)
      .addError(NotFoundError)
      .addError(ReplayInProgressError)
      .annotate(
        OpenApi.Description,
        "Per held token: the archived last close (the feed round in force at the last regular NYSE close), the " +
          "current price (latest round), and the drift in % and in money for the holding, each price with its round " +
          "as evidence; `status` explains any missing figure."
      )
  )
  .annotate(OpenApi.Title, "Exposure")
{}

export const SummaryTotal = Schema.Struct({
  amount: NullableDecimal.annotations({ description: "Reporting currency; null as soon as one item is unknown." }),
  formatted: Schema.NullOr(Schema.String),
  usd: NullableDecimal,
  knownAmount: DecimalString.annotations({ description: "The sum of the items known in the reporting currency." }),
  unknownCount: Schema.Int.annotations({
    description: "How many items `knownAmount` leaves out: unknown, or with no usable rate on their date."
  })
}).annotations({ identifier: "SummaryTotal" })

export const PortfolioSummary = Schema.Struct({
  asOf: IsoDateTime.annotations({ description: "When the ledger build behind the figures was made." }),
  currency: Schema.String,
  value: SummaryTotal,
  costBasis: SummaryTotal,
  unrealisedGain: SummaryTotal,
  accruedDividendIncome: SummaryTotal.annotations({
    description: "Income from dividend steps (multiplier growth) this calendar year, which no wallet transaction shows."
  }),
  rate: Schema.NullOr(RateInUse).annotations({
    description: "The rate the current value is converted at, with its provenance (identity for USD)."
  }),
  marketOpen: Schema.Boolean.annotations({ description: "Whether a regular NYSE session is under way now." }),
  lastClose: IsoDateTime,
  nextOpen: IsoDateTime,
  positionCount: Schema.Int,
  pausedTokens: Schema.Array(
    Schema.Struct({ symbol: Schema.String, since: Schema.NullOr(IsoDateTime), block: Schema.NullOr(Schema.Int) })
  ),
  evidence: Schema.Struct({
    rounds: Schema.Array(Schema.String),
    incomeEventIds: Schema.Array(Schema.String),
    rates: Schema.Array(RateInUse).annotations({ description: EVIDENCE_RATES })
  })
}).annotations({ identifier: "PortfolioSummary" })
export type PortfolioSummary = typeof PortfolioSummary.Type

export class SummaryGroup extends HttpApiGroup.make("summary")
  .add(
    HttpApiEndpoint.get("summary", "/portfolio/summary")
      .addSuccess(PortfolioSummary)
      .addError(ReplayInProgressError)
      .annotate(
        OpenApi.Description,
        "The portfolio in one answer (the MCP tool get_portfolio_summary): value, cost basis, unrealised gain, " +
          "accrued dividend income, the rate in use with its provenance, paused tokens, and whether US markets are open."
      )
  )
  .annotate(OpenApi.Title, "Portfolio summary")
{}
