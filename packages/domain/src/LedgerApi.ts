import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Alert } from "./alerts/Alert.js"
import {
  ADDRESS_FORM,
  DATE_FORM,
  DecimalString,
  IsoDate,
  IsoDateTime,
  NullableDecimal,
  SAFE_TEXT_PATTERN,
  TextAccepted
} from "./Basic.js"
import { PageParams } from "./Common.js"
import { InvalidAddressError, InvalidDateError, NotFoundError, ReplayInProgressError } from "./Errors.js"
import { MovementType } from "./ledger/LedgerInput.js"
import { RateInUse } from "./MarketApi.js"

/** Why a figure is null: unknown, never zero. */
export const UnknownBecause = Schema.Struct({
  reason: Schema.String.annotations({
    description:
      "`missing_price`, `unconfirmed_label`, `incomplete_history`, `bridge_unmatched`, `self_transfer_unmatched`, `collateral_unmatched`, `stale_rate` (the newest rate is more than 7 days older than the figure)."
  }),
  eventId: Schema.String
}).annotations({ identifier: "UnknownBecause" })

export const LedgerIssueView = Schema.Struct({
  kind: Schema.String,
  eventId: Schema.String,
  detail: Schema.String
}).annotations({ identifier: "LedgerIssue" })

/** The feed round behind a price. */
export const PriceView = Schema.Struct({
  feed: Schema.String,
  roundId: Schema.String,
  updatedAt: IsoDateTime,
  answer: DecimalString.annotations({ description: "USD per token (the multiplier already included)." })
}).annotations({ identifier: "PriceRound" })

/**
 * The token's trading pause in force: a `Paused` event or a `paused()` read of true not followed by an `Unpaused`
 * event or a read of false.
 */
export const TokenPauseView = Schema.Struct({
  since: IsoDateTime.annotations({ description: "When the block of the pause's first event or read was made." }),
  block: Schema.Int,
  txHash: Schema.NullOr(Schema.String).annotations({
    description: "The `Paused` event's transaction; null when a `paused()` read (e.g. an issuer-wide pause) showed it."
  }),
  provisional: Schema.Boolean.annotations({ description: "True until the block is final." })
}).annotations({ identifier: "TokenPause" })

export const PositionView = Schema.Struct({
  token: Schema.String,
  wallet: Schema.NullOr(Schema.String).annotations({
    description: "The address holding it; null under account lot scope (DE), where `holdings` splits the balance."
  }),
  holdings: Schema.Array(Schema.Struct({ wallet: Schema.String, balance: DecimalString })),
  balance: DecimalString.annotations({ description: "Tokens owned (raw / 1e18), collateral included." }),
  multiplier: Schema.Struct({
    at: DecimalString.annotations({ description: "In force now." }),
    from: NullableDecimal.annotations({ description: "In force when the oldest open lot was acquired." })
  }),
  sharesEquivalent: DecimalString,
  currency: Schema.String,
  costBasis: Schema.NullOr(Schema.String).annotations({
    description: "Formatted, e.g. \"$1,234.56\"; null when unknown (see `unknownBecause`)."
  }),
  costBasisAmount: NullableDecimal,
  unreportedIncome: Schema.NullOr(Schema.String).annotations({
    description:
      "Income from multiplier growth on this position this calendar year (UTC), which no wallet transaction shows."
  }),
  unreportedIncomeAmount: NullableDecimal,
  encumbered: DecimalString.annotations({ description: "Tokens posted as collateral." }),
  value: Schema.NullOr(Schema.String),
  valueAmount: NullableDecimal,
  valueUsd: NullableDecimal,
  price: Schema.NullOr(PriceView),
  rate: Schema.NullOr(RateInUse).annotations({
    description: "The rate `value` (`valueAmount`) is converted at: the build's valuation date (`asOf`), with its " +
      "source and whether it was carried forward; the identity for USD accounts; null when the value is not " +
      "converted (no price, or no usable rate). Cost basis and income are not converted at this rate: each part is " +
      "converted at the rate of its own date (the lots of `GET /v1/basis` carry those rates, and the income events " +
      "of `GET /v1/events` theirs), and `unrealisedGain` is `valueAmount` − `costBasisAmount`."
  }),
  unrealisedGain: NullableDecimal,
  unknownBecause: Schema.Array(UnknownBecause),
  issues: Schema.Array(LedgerIssueView),
  paused: Schema.NullOr(TokenPauseView).annotations({
    description: "Set while the token is paused (no transfers); null when it is not, as far as the record shows."
  })
}).annotations({ identifier: "Position" })
export type PositionView = typeof PositionView.Type

export const PositionList = Schema.Struct({
  positions: Schema.Array(PositionView),
  currency: Schema.String,
  asOf: IsoDateTime
}).annotations({ identifier: "PositionList" })

export const LotView = Schema.Struct({
  id: Schema.String,
  acquired: IsoDate,
  qty: DecimalString,
  basis: NullableDecimal.annotations({
    description: "In the reporting currency: each part of the basis at the rate of its own date."
  }),
  rate: NullableDecimal.annotations({
    description: "Units of the reporting currency per USD on the acquisition date; null when the acquisition's USD " +
      "figure or its rate is unknown."
  }),
  rateDate: Schema.NullOr(IsoDate).annotations({
    description: "The day `rate` was published for (before the acquisition date when carried forward)."
  }),
  source: Schema.NullOr(Schema.String).annotations({
    description: "Where `rate` comes from, e.g. `ecb-via-frankfurter`; `identity` for USD; null with `rate`."
  }),
  carriedForward: Schema.Boolean.annotations({
    description: "True when the acquisition date had no publication and `rateDate`'s rate was carried forward; " +
      "false when there is no rate."
  }),
  basisUsd: NullableDecimal,
  incomeAddedUsd: NullableDecimal.annotations({ description: "Income from dividend steps added to this lot's basis." }),
  wallet: Schema.NullOr(Schema.String),
  location: Schema.Literal("wallet", "account", "in_transit"),
  multiplierAtAcquisition: DecimalString,
  shares: DecimalString,
  unknownBecause: Schema.Array(UnknownBecause)
}).annotations({ identifier: "Lot" })

export const DisposalView = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  date: IsoDate,
  type: Schema.String,
  wallet: Schema.String,
  counterparty: Schema.String,
  qty: DecimalString,
  shares: DecimalString,
  lotId: Schema.NullOr(Schema.String),
  acquired: Schema.NullOr(IsoDate),
  holdingPeriod: Schema.NullOr(Schema.Literal("short", "long")),
  currency: Schema.String,
  proceeds: NullableDecimal,
  basis: NullableDecimal,
  gain: NullableDecimal,
  proceedsUsd: NullableDecimal,
  basisUsd: NullableDecimal,
  gainUsd: NullableDecimal,
  rate: NullableDecimal.annotations({
    description: "The rate the proceeds were converted at (the disposal's date); null when the proceeds or the rate " +
      "are unknown. The basis is converted part by part at each part's own date (its lot's rates)."
  }),
  rateDate: Schema.NullOr(IsoDate).annotations({
    description: "The day `rate` was published for (before the disposal's date when carried forward)."
  }),
  source: Schema.NullOr(Schema.String).annotations({
    description: "Where `rate` comes from, e.g. `ecb-via-frankfurter`; `identity` for USD; null with `rate`."
  }),
  carriedForward: Schema.Boolean.annotations({
    description: "True when the disposal's date had no publication and `rateDate`'s rate was carried forward; " +
      "false when there is no rate."
  }),
  taxable: Schema.Boolean,
  needsReview: Schema.Boolean,
  txHash: Schema.String,
  unknownBecause: Schema.Array(UnknownBecause)
}).annotations({ identifier: "Disposal" })

export const GainTotals = Schema.Struct({
  total: NullableDecimal,
  shortTerm: NullableDecimal,
  longTerm: NullableDecimal,
  totalUsd: NullableDecimal,
  unknownCount: Schema.Int
}).annotations({ identifier: "RealisedGains", description: "Sums over the disposals; null as soon as one is unknown." })

export const BasisRecord = Schema.Struct({
  token: Schema.String,
  currency: Schema.String,
  lots: Schema.Array(LotView),
  accruedIncomeAddedToBasis: NullableDecimal,
  accruedIncomeAddedToBasisUsd: NullableDecimal,
  lotMatching: Schema.Literal("fifo"),
  lotScope: Schema.Literal("wallet", "account"),
  disposals: Schema.Array(DisposalView),
  realisedGains: GainTotals
}).annotations({ identifier: "BasisRecord" })

export const BasisRecords = Schema.Struct({
  currency: Schema.String,
  lotMatching: Schema.Literal("fifo"),
  lotScope: Schema.Literal("wallet", "account"),
  records: Schema.Array(BasisRecord)
}).annotations({
  identifier: "BasisRecords",
  description: "Every token's basis record (GET /v1/basis without `token`)."
})

export const IncomeView = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "Income",
  description:
    "`usd`, the converted amount keyed by the lowercase currency code (e.g. `sgd`; for USD accounts `usd` itself), " +
    "`rate` (currency per USD), `rateDate`, `source` and `carriedForward`. Amounts are null when unknown."
})

export const WalletTransactionView = Schema.Struct({
  txHash: Schema.String,
  block: Schema.Int,
  logIndex: Schema.Int
})

/** A dividend step's income per share beside the issuer's declared dividend (the one `GET /v1/dividends` shows). */
export const IncomeWithholdingView = Schema.Struct({
  sharePriceUsd: NullableDecimal.annotations({ description: "One share before the step: feed price / multiplier." }),
  paidPerShare: NullableDecimal.annotations({
    description: "USD per share the step paid: (to / from − 1) × share price. Null without a price."
  }),
  declaredPerShare: NullableDecimal.annotations({
    description: "USD per share, gross, from the issuer's XBRL facts in the EDGAR cache; null when not known."
  }),
  declaredPeriod: Schema.NullOr(Schema.Struct({ start: IsoDate, end: IsoDate })),
  matchedBy: Schema.NullOr(Schema.Literal("containing_quarter", "previous_quarter")),
  impliedWithholdingRate: NullableDecimal.annotations({
    description: "1 − paid / declared (0.3 = 30 %); null where either is unknown."
  }),
  accessionNumber: Schema.NullOr(Schema.String).annotations({ description: "The filing of the declared figure." })
}).annotations({ identifier: "IncomeWithholding" })

export const EventView = Schema.Struct({
  id: Schema.String,
  block: Schema.Int,
  date: IsoDate,
  type: Schema.String,
  token: Schema.String,
  wallet: Schema.String,
  from: Schema.optional(DecimalString).annotations({ description: "Multiplier before (multiplier events)." }),
  to: Schema.optional(DecimalString).annotations({ description: "Multiplier after (multiplier events)." }),
  income: Schema.optional(Schema.NullOr(IncomeView)),
  eventId: Schema.optional(Schema.String).annotations({
    description: "Income and split events: the multiplier change's id, the same for every holder it reached (as " +
      "evidence, `unknownBecause` and `GET /v1/dividends` cite it); `id` adds the address."
  }),
  unknownBecause: Schema.optional(Schema.Array(UnknownBecause)).annotations({
    description: "Income events only: why an amount in `income` is null (e.g. `missing_price`, `stale_rate`)."
  }),
  withholding: Schema.optional(IncomeWithholdingView).annotations({
    description: "Income events only: the withholding estimate of the dividend step."
  }),
  walletTransaction: Schema.NullOr(WalletTransactionView),
  counterparty: Schema.optional(Schema.String),
  relationship: Schema.optional(Schema.NullOr(Schema.String)),
  classifiedBy: Schema.optional(Schema.String),
  qty: Schema.optional(DecimalString),
  valueUsd: Schema.optional(NullableDecimal),
  taxable: Schema.Boolean,
  needsReview: Schema.Boolean,
  classification: Schema.optional(
    Schema.Struct({
      by: Schema.String,
      rule: Schema.NullOr(Schema.String),
      model: Schema.NullOr(Schema.String),
      confidence: Schema.NullOr(Schema.Number),
      rationale: Schema.NullOr(Schema.String)
    }).annotations({
      identifier: "EventClassification",
      description: "Who classified the movement: the rule that fired, or the model with its confidence and rationale."
    })
  ),
  counterpartyLabel: Schema.optional(Schema.NullOr(Schema.String)).annotations({
    description: "Movements: the label the account gave the counterparty in review (PATCH /v1/events/{id}), if any."
  }),
  counterpartyNote: Schema.optional(Schema.NullOr(Schema.String)).annotations({
    description: "Movements: the note the account wrote of the counterparty in review, if any."
  }),
  basisSource: Schema.optional(
    Schema.Literal("market_value_at_arrival").annotations({
      description: "An arrival from an address of unknown relationship: its lot's basis is the market value then."
    })
  )
}).annotations({ identifier: "Event" })
export type EventView = typeof EventView.Type

export const EventList = Schema.Struct({
  events: Schema.Array(EventView),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "EventList" })

export const TotalView = Schema.Struct({
  amount: NullableDecimal.annotations({
    description: "In the reporting currency; null as soon as one item is unknown."
  }),
  formatted: Schema.NullOr(Schema.String),
  usd: NullableDecimal,
  knownAmount: DecimalString.annotations({ description: "The sum of the items known in the reporting currency." }),
  unknownCount: Schema.Int.annotations({
    description: "How many items `knownAmount` leaves out: unknown, or with no usable rate on their date."
  })
}).annotations({ identifier: "Total" })

/**
 * A note about the positions themselves (not an alert: alerts are the alert store's seven kinds): `incomplete_history`
 * when more left an address than its recorded history holds, `missing_prices` when positions have no price.
 */
export const PortfolioNotice = Schema.Struct({
  kind: Schema.Literal("incomplete_history", "missing_prices"),
  severity: Schema.Literal("info", "warning", "critical"),
  title: Schema.String,
  detail: Schema.String
}).annotations({ identifier: "PortfolioNotice" })

export const Portfolio = Schema.Struct({
  asOf: IsoDateTime,
  summary: Schema.Struct({
    valueUsd: NullableDecimal,
    positionCount: Schema.Int,
    pricedPositions: Schema.Int,
    positionsWithBasis: Schema.Int,
    fxCurrency: Schema.String
  }),
  alerts: Schema.Array(Alert).annotations({
    description: "The account's open alerts, as `GET /v1/alerts?open=true` lists them (newest first)."
  }),
  notices: Schema.Array(PortfolioNotice),
  positions: Schema.Array(PositionView),
  totals: Schema.Struct({
    value: TotalView,
    costBasis: TotalView,
    unrealisedGain: TotalView,
    realisedGainThisYear: TotalView,
    incomeThisYear: TotalView,
    rate: Schema.NullOr(RateInUse).annotations({
      description: "The rate `value` is converted at (the build's valuation date), with its provenance, as each " +
        "position's `rate` and `GET /v1/portfolio/summary` give it: the identity for USD accounts, null when no " +
        "value is converted. The other totals are sums of parts each converted at its own date (`costBasis` of the " +
        "lots' rates in `GET /v1/basis`, `realisedGainThisYear` of the disposals', `incomeThisYear` of the income " +
        "events' in `GET /v1/events`); `unrealisedGain` is `value` − `costBasis`."
    })
  }),
  recentActivity: Schema.Array(EventView)
}).annotations({ identifier: "Portfolio" })

/** The `type` of every event `GET /v1/events` lists: the movement types, income from multiplier growth, splits. */
export const EVENT_TYPES: ReadonlyArray<string> = [...MovementType.literals, "income.multiplier_increase", "split"]

const optionalBoolean = Schema.optional(Schema.Literal("true", "false"))

export class LedgerGroup extends HttpApiGroup.make("ledger")
  .add(
    HttpApiEndpoint.get("positions", "/positions")
      .setUrlParams(Schema.Struct({
        wallet: Schema.optional(TextAccepted(
          "Only this watched address's positions. Mixed case only as a valid EIP-55 checksum.",
          ADDRESS_FORM
        )),
        currency: Schema.optional(TextAccepted(
          "Accepted by name, not acted on yet: figures follow the account's reporting currency.",
          { pattern: SAFE_TEXT_PATTERN }
        ))
      }))
      .addSuccess(PositionList)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .addError(ReplayInProgressError)
      .annotate(OpenApi.Summary, "List positions")
      .annotate(OpenApi.Description, "Positions per address and token (per token under account lot scope).")
  )
  .add(
    HttpApiEndpoint.get("basis", "/basis")
      .setUrlParams(Schema.Struct({
        token: Schema.optional(TextAccepted("Only this token (symbol, any case).", { pattern: SAFE_TEXT_PATTERN })),
        lotMatching: Schema.optional(TextAccepted(
          "Accepted, not honoured yet: the answer states the rule used (`fifo`).",
          { pattern: SAFE_TEXT_PATTERN }
        ))
      }))
      .addSuccess(Schema.Union(BasisRecord, BasisRecords))
      .addError(NotFoundError)
      .addError(ReplayInProgressError)
      .annotate(OpenApi.Summary, "Get the cost basis record")
      .annotate(
        OpenApi.Description,
        "The lots, disposals and realised gains of one token (`token`), or of every token. Disposal fields: `date`, " +
          "`qty`, `acquired`, `holdingPeriod` (`short`/`long`, US calendar rule), `proceeds`, `basis`, `gain` (reporting " +
          "currency, each part at its own date's rate), their `…Usd` forms, `taxable`, `needsReview`."
      )
  )
  .add(
    HttpApiEndpoint.get("events", "/events")
      .setUrlParams(Schema.Struct({
        token: Schema.optional(TextAccepted("Only this token (symbol, any case).", { pattern: SAFE_TEXT_PATTERN })),
        type: Schema.optional(TextAccepted("Only events of this type.", { enum: EVENT_TYPES })),
        from: Schema.optional(TextAccepted("First day included, YYYY-MM-DD.", DATE_FORM)),
        to: Schema.optional(TextAccepted("Last day included, YYYY-MM-DD.", DATE_FORM)),
        needsReview: optionalBoolean,
        ...PageParams
      }))
      .addSuccess(EventList)
      .addError(InvalidDateError)
      .addError(ReplayInProgressError)
      .annotate(OpenApi.Summary, "List events")
      .annotate(
        OpenApi.Description,
        "Movements and records of the account in chain order, including income from multiplier growth (no wallet " +
          "transaction) and splits. Dates are inclusive."
      )
  )
  .add(
    HttpApiEndpoint.get("portfolio", "/portfolio")
      .addSuccess(Portfolio)
      .addError(ReplayInProgressError)
      .annotate(OpenApi.Summary, "Get the portfolio summary")
  )
  .annotate(OpenApi.Title, "Positions, basis and events")
  .annotate(OpenApi.Description, "The ledger's reads: positions, lots and gains, events, the portfolio summary.")
{}
