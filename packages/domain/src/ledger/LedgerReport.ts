import { Schema } from "effect"
import { ReportingCurrency } from "../Currency.js"
import { Converted } from "./Convert.js"
import { CountryRule, LotScope } from "./CountryRule.js"
import { ClassifiedBy, MovementType, Relationship } from "./LedgerInput.js"

/** Decimal strings: token units (raw / 1e18), multipliers, USD and reporting-currency amounts. */
const Decimal = Schema.String
const NullableDecimal = Schema.NullOr(Schema.String)
const CalendarDate = Schema.String

/** The feed round a figure was priced with. `answer` is the feed's price of one token, in USD. */
export const PriceProvenance = Schema.Struct({
  feed: Schema.String,
  roundId: Schema.String,
  updatedAt: Schema.Number,
  answer: Decimal
}).annotations({ identifier: "PriceProvenance" })
export type PriceProvenance = typeof PriceProvenance.Type

export const NullReasonCode = Schema.Literal(
  /** No feed round at or before the figure's time. */
  "missing_price",
  /** The movement's classification is a model label not yet confirmed. */
  "unconfirmed_label",
  /** More left an address than the record shows it held: part of its history is missing. */
  "incomplete_history",
  /** A bridge arrival with nothing in transit to match it. */
  "bridge_unmatched",
  /** A movement from an own, unwatched address with no lots recorded there. */
  "self_transfer_unmatched",
  /** A collateral withdrawal larger than what was recorded as posted. */
  "collateral_unmatched",
  /**
   * The reporting currency's newest rate before the figure's date was published more than 7 days earlier: a rate
   * carried forward that far is not used (`eventId` is the event whose figure it is, or `valuation:<date>`).
   */
  "stale_rate"
)
export type NullReasonCode = typeof NullReasonCode.Type

/** Why a figure is null (unknown), and the event that made it so. */
export const NullReason = Schema.Struct({ reason: NullReasonCode, eventId: Schema.String })
export type NullReason = typeof NullReason.Type

export const IssueKind = Schema.Literal(
  "incomplete_history",
  "unconfirmed_label",
  "multiplier_discontinuity",
  "multiplier_decrease_as_dividend",
  "collateral_exceeds_balance",
  "type_direction_mismatch",
  "no_own_address"
)
export type IssueKind = typeof IssueKind.Type

export const Issue = Schema.Struct({
  kind: IssueKind,
  eventId: Schema.String,
  detail: Schema.String
}).annotations({ identifier: "LedgerIssue" })
export type Issue = typeof Issue.Type

/** One part of a lot's basis: the acquisition, or income from one dividend step, each converted at its own date. */
export const BasisComponent = Schema.Struct({
  kind: Schema.Literal("acquisition", "income"),
  eventId: Schema.String,
  at: Schema.Number,
  date: CalendarDate,
  usd: NullableDecimal,
  converted: Schema.NullOr(Converted),
  price: Schema.NullOr(PriceProvenance)
}).annotations({ identifier: "BasisComponent" })
export type BasisComponent = typeof BasisComponent.Type

export const LotLocation = Schema.Literal("wallet", "account", "in_transit")

export const Lot = Schema.Struct({
  id: Schema.String,
  token: Schema.String,
  tokenAddress: Schema.String,
  /** Which pool holds it: one address's lots, the account's pool, or bridged away and not yet arrived. */
  location: LotLocation,
  /** The address whose pool holds it (location `wallet`), else null. */
  wallet: Schema.NullOr(Schema.String),
  acquired: CalendarDate,
  acquiredAt: Schema.Number,
  raw: Schema.String,
  qty: Decimal,
  multiplierAtAcquisition: Decimal,
  shares: Decimal,
  basisUsd: NullableDecimal,
  /** Σ component × rate of the component's date, in `currency`. */
  basis: NullableDecimal,
  currency: ReportingCurrency,
  /** The rate of the acquisition component. */
  rate: NullableDecimal,
  components: Schema.Array(BasisComponent),
  sourceEventId: Schema.String,
  nullReasons: Schema.Array(NullReason)
}).annotations({ identifier: "LedgerLot" })
export type Lot = typeof Lot.Type

/**
 * One address's own share of an account-scope (pooled) position: its balance valued at the position's price, the
 * income of its own balance, and a share of the pool's basis pro rata to its raw balance (FIFO runs over the pool,
 * so no lot belongs to one address).
 */
export const HoldingFigures = Schema.Struct({
  sharesEquivalent: Decimal,
  costBasisUsd: NullableDecimal,
  costBasisConverted: NullableDecimal,
  costBasis: Schema.NullOr(Schema.String),
  unreportedIncomeUsd: NullableDecimal,
  unreportedIncomeConverted: NullableDecimal,
  unreportedIncome: Schema.NullOr(Schema.String),
  unreportedIncomeEventIds: Schema.Array(Schema.String),
  value: Schema.Struct({ usd: NullableDecimal, converted: Schema.NullOr(Converted) }),
  unrealisedGainUsd: NullableDecimal,
  unrealisedGainConverted: NullableDecimal
}).annotations({ identifier: "LedgerHoldingFigures" })
export type HoldingFigures = typeof HoldingFigures.Type

export const Holding = Schema.Struct({
  wallet: Schema.String,
  /** False for an address known to be own only through a `self` relationship, not watched. */
  watched: Schema.Boolean,
  balance: Decimal,
  encumbered: Decimal,
  /** Account lot scope only: the address's own share of the pooled position. */
  figures: Schema.optional(HoldingFigures)
})
export type Holding = typeof Holding.Type

export const Position = Schema.Struct({
  token: Schema.String,
  tokenAddress: Schema.String,
  /** `wallet`: one address's position; `account`: the token across all own addresses (account lot scope). */
  scope: LotScope,
  wallet: Schema.NullOr(Schema.String),
  holdings: Schema.Array(Holding),
  /** Tokens owned (raw / 1e18), collateral included. The chain balance is balance − encumbered. */
  balance: Decimal,
  raw: Schema.String,
  encumbered: Decimal,
  multiplier: Schema.Struct({ at: Decimal, from: NullableDecimal }),
  sharesEquivalent: Decimal,
  currency: ReportingCurrency,
  costBasisUsd: NullableDecimal,
  costBasisConverted: NullableDecimal,
  /** Formatted in the reporting currency, e.g. "$1,234.56"; null when unknown. */
  costBasis: Schema.NullOr(Schema.String),
  unreportedIncomeUsd: NullableDecimal,
  unreportedIncomeConverted: NullableDecimal,
  unreportedIncome: Schema.NullOr(Schema.String),
  unreportedIncomeEventIds: Schema.Array(Schema.String),
  value: Schema.Struct({
    usd: NullableDecimal,
    converted: Schema.NullOr(Converted),
    price: Schema.NullOr(PriceProvenance)
  }),
  unrealisedGainUsd: NullableDecimal,
  unrealisedGainConverted: NullableDecimal,
  openLots: Schema.Number,
  lotIds: Schema.Array(Schema.String),
  nullReasons: Schema.Array(NullReason),
  issues: Schema.Array(Issue)
}).annotations({ identifier: "LedgerPosition" })
export type Position = typeof Position.Type

export const WalletTransaction = Schema.Struct({
  txHash: Schema.String,
  block: Schema.Number,
  logIndex: Schema.Number
})

/** One matched lot slice of a disposal (a disposal over several lots gives several rows sharing `eventId`). */
export const Disposal = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  slice: Schema.Number,
  type: MovementType,
  token: Schema.String,
  tokenAddress: Schema.String,
  wallet: Schema.String,
  counterparty: Schema.String,
  date: CalendarDate,
  disposedAt: Schema.Number,
  raw: Schema.String,
  qty: Decimal,
  shares: Decimal,
  /** Null for the part of a disposal no recorded lot covers (incomplete history). */
  lotId: Schema.NullOr(Schema.String),
  acquired: Schema.NullOr(CalendarDate),
  acquiredAt: Schema.NullOr(Schema.Number),
  holdingPeriod: Schema.NullOr(Schema.Literal("short", "long")),
  currency: ReportingCurrency,
  proceedsUsd: NullableDecimal,
  basisUsd: NullableDecimal,
  gainUsd: NullableDecimal,
  proceeds: Schema.NullOr(Converted),
  basis: NullableDecimal,
  gain: NullableDecimal,
  price: Schema.NullOr(PriceProvenance),
  basisComponents: Schema.Array(BasisComponent),
  taxable: Schema.Boolean,
  needsReview: Schema.Boolean,
  classifiedBy: ClassifiedBy,
  nullReasons: Schema.Array(NullReason),
  walletTransaction: WalletTransaction
}).annotations({ identifier: "LedgerDisposal" })
export type Disposal = typeof Disposal.Type

export const IncomeEvent = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  type: Schema.Literal("income.multiplier_increase"),
  token: Schema.String,
  tokenAddress: Schema.String,
  wallet: Schema.String,
  block: Schema.Number,
  effectiveAt: Schema.Number,
  date: CalendarDate,
  from: Decimal,
  to: Decimal,
  rawBalance: Decimal,
  addedShares: Decimal,
  /** One share: feed price / multiplier before the step. */
  sharePriceUsd: NullableDecimal,
  price: Schema.NullOr(PriceProvenance),
  currency: ReportingCurrency,
  incomeUsd: NullableDecimal,
  income: Schema.NullOr(Converted),
  taxable: Schema.Boolean,
  needsReview: Schema.Boolean,
  walletTransaction: Schema.Null,
  lotIds: Schema.Array(Schema.String),
  nullReasons: Schema.Array(NullReason)
}).annotations({ identifier: "LedgerIncomeEvent" })
export type IncomeEvent = typeof IncomeEvent.Type

export const SplitEvent = Schema.Struct({
  id: Schema.String,
  eventId: Schema.String,
  type: Schema.Literal("split"),
  token: Schema.String,
  tokenAddress: Schema.String,
  wallet: Schema.String,
  block: Schema.Number,
  effectiveAt: Schema.Number,
  date: CalendarDate,
  from: Decimal,
  to: Decimal,
  rawBalance: Decimal,
  sharesBefore: Decimal,
  sharesAfter: Decimal,
  taxable: Schema.Boolean,
  walletTransaction: Schema.Null
}).annotations({ identifier: "LedgerSplitEvent" })
export type SplitEvent = typeof SplitEvent.Type

export const Treatment = Schema.Literal(
  "acquisition",
  "disposal",
  "self_transfer",
  "collateral_post",
  "collateral_withdraw",
  "bridge_out",
  "bridge_in"
)
export type Treatment = typeof Treatment.Type

/** A token movement as classified and as the ledger used it (GET /v1/events). */
export const Movement = Schema.Struct({
  id: Schema.String,
  type: MovementType,
  relationship: Schema.NullOr(Relationship),
  classifiedBy: ClassifiedBy,
  confirmed: Schema.Boolean,
  needsReview: Schema.Boolean,
  taxable: Schema.Boolean,
  treatment: Treatment,
  direction: Schema.Literal("in", "out", "self"),
  token: Schema.String,
  tokenAddress: Schema.String,
  /** The own address the movement belongs to (the sender of a self-transfer). */
  wallet: Schema.String,
  /** The other address (the receiver of a self-transfer). */
  counterparty: Schema.String,
  raw: Schema.String,
  qty: Decimal,
  shares: Decimal,
  date: CalendarDate,
  timestamp: Schema.Number,
  currency: ReportingCurrency,
  valueUsd: NullableDecimal,
  value: Schema.NullOr(Converted),
  price: Schema.NullOr(PriceProvenance),
  lotIds: Schema.Array(Schema.String),
  disposalIds: Schema.Array(Schema.String),
  nullReasons: Schema.Array(NullReason),
  walletTransaction: WalletTransaction
}).annotations({ identifier: "LedgerMovement" })
export type Movement = typeof Movement.Type

/** The basis record of one token. */
export const TokenBasis = Schema.Struct({
  token: Schema.String,
  tokenAddress: Schema.String,
  currency: ReportingCurrency,
  lotMatching: Schema.Literal("fifo"),
  lotScope: LotScope,
  multiplier: Decimal,
  openQty: Decimal,
  inTransitQty: Decimal,
  lotIds: Schema.Array(Schema.String),
  /** Income components in the open lots' basis (null when any is unknown). */
  accruedIncomeAddedToBasisUsd: NullableDecimal,
  accruedIncomeAddedToBasis: NullableDecimal,
  issues: Schema.Array(Issue)
}).annotations({ identifier: "LedgerTokenBasis" })
export type TokenBasis = typeof TokenBasis.Type

/**
 * A sum over items some of which may be unknown. `usd` is null as soon as one item is unknown (a total never
 * silently leaves something out); `knownUsd` is the sum of the known items and `unknownCount` says how many are not.
 */
export const Total = Schema.Struct({
  usd: NullableDecimal,
  knownUsd: Decimal,
  converted: NullableDecimal,
  knownConverted: Decimal,
  count: Schema.Number,
  unknownCount: Schema.Number,
  /** Items known in USD with no rate for their date. */
  unconvertedCount: Schema.Number
}).annotations({ identifier: "LedgerTotal" })
export type Total = typeof Total.Type

export const LedgerReport = Schema.Struct({
  asOf: Schema.Number,
  asOfDate: CalendarDate,
  year: Schema.Number,
  rule: CountryRule,
  lotMatching: Schema.Literal("fifo"),
  lotScope: LotScope,
  currency: ReportingCurrency,
  summary: Schema.Struct({
    valueUsd: NullableDecimal,
    positionCount: Schema.Number,
    pricedPositions: Schema.Number,
    positionsWithBasis: Schema.Number,
    needsReview: Schema.Number,
    fxCurrency: ReportingCurrency
  }),
  totals: Schema.Struct({
    value: Total,
    costBasis: Total,
    unrealisedGain: Total,
    realisedGainInYear: Total,
    realisedGainTaxableInYear: Total,
    incomeInYear: Total,
    incomeTaxableInYear: Total
  }),
  /** False when the per-event lists (disposals, income, splits, movements) were left out of this report. */
  rowsIncluded: Schema.Boolean,
  positions: Schema.Array(Position),
  tokens: Schema.Array(TokenBasis),
  lots: Schema.Array(Lot),
  disposals: Schema.Array(Disposal),
  income: Schema.Array(IncomeEvent),
  splits: Schema.Array(SplitEvent),
  movements: Schema.Array(Movement),
  /** Events the ledger did not use: no own address on either side. */
  ignored: Schema.Array(Issue),
  /** The same on-chain log given twice (e.g. seen from both own wallets): processed once. */
  duplicates: Schema.Array(Schema.Struct({ eventId: Schema.String, sameAs: Schema.String }))
}).annotations({ identifier: "LedgerReport" })
export type LedgerReport = typeof LedgerReport.Type
