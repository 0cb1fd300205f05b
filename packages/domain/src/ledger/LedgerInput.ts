import { Schema } from "effect"
import { IsoDate, PositiveDecimal } from "../Basic.js"
import { ReportingCurrency } from "../Currency.js"
import { LedgerCountry } from "./CountryRule.js"

const HexAddress = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/)).annotations({
  description: "A 20-byte hex address; compared case-insensitively."
})

const TxHash = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{64}$/))

/** A non-negative integer as a decimal string: an 18-decimal raw amount or multiplier, or a feed answer. */
export const RawInteger = Schema.String.pipe(Schema.pattern(/^\d+$/)).annotations({
  description: "A non-negative integer as a decimal string (e.g. raw token amount with 18 implied decimals)."
})

/** Unix seconds up to 9999-12-31T23:59:59Z: dates are written `YYYY-MM-DD`, so a later year has no date. */
export const MAX_UNIX_SECONDS = 253_402_300_799
const UnixSeconds = Schema.Number.pipe(Schema.int(), Schema.between(0, MAX_UNIX_SECONDS))
const Block = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

export const Wallet = Schema.Struct({
  address: HexAddress,
  self: Schema.Boolean
})
export type Wallet = typeof Wallet.Type

export const MovementType = Schema.Literal(
  "transfer.in",
  "transfer.out",
  "transfer.self",
  "swap",
  "mint",
  "burn",
  "collateral_post",
  "collateral_withdraw",
  "bridge.out",
  "bridge.in",
  "unknown"
)
export type MovementType = typeof MovementType.Type

export const Relationship = Schema.Literal("self", "exchange", "counterparty", "contract")
export type Relationship = typeof Relationship.Type

export const ClassifiedBy = Schema.Literal("rule", "ai_labeled", "user")
export type ClassifiedBy = typeof ClassifiedBy.Type

export const Classification = Schema.Struct({
  type: MovementType,
  relationship: Schema.NullOr(Relationship),
  classifiedBy: ClassifiedBy,
  confirmed: Schema.Boolean
})
export type Classification = typeof Classification.Type

/** A relationship given for a counterparty address; it applies to every movement with that address. */
export const CounterpartyLabel = Schema.Struct({
  relationship: Relationship,
  classifiedBy: ClassifiedBy,
  confirmed: Schema.Boolean
})
export type CounterpartyLabel = typeof CounterpartyLabel.Type

export const TransferEvent = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("transfer"),
  token: Schema.String,
  tokenAddress: HexAddress,
  from: HexAddress,
  to: HexAddress,
  raw: RawInteger,
  block: Block,
  logIndex: Schema.Number.pipe(Schema.int()),
  txHash: TxHash,
  timestamp: UnixSeconds,
  classification: Schema.optional(Schema.NullOr(Classification))
})
export type TransferEvent = typeof TransferEvent.Type

/**
 * A multiplier change taking effect. `block` is the first block at or after `effectiveAt`; order it before the
 * transfers of that block (logIndex -1): `uiMultiplier()` already returns the new value inside that block.
 */
export const MultiplierEvent = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("multiplier"),
  token: Schema.String,
  tokenAddress: HexAddress,
  from: RawInteger,
  to: RawInteger,
  effectiveAt: UnixSeconds,
  block: Block,
  logIndex: Schema.Number.pipe(Schema.int()),
  stepKind: Schema.Literal("dividend", "split")
})
export type MultiplierEvent = typeof MultiplierEvent.Type

export const LedgerEvent = Schema.Union(TransferEvent, MultiplierEvent)
export type LedgerEvent = typeof LedgerEvent.Type

/** One Chainlink round: `answer` has 8 decimals and quotes one token (the multiplier already included). */
export const PriceRound = Schema.Struct({
  roundId: RawInteger,
  answer: RawInteger,
  updatedAt: UnixSeconds,
  feed: HexAddress
})
export type PriceRound = typeof PriceRound.Type

/** Per token symbol, its feed rounds sorted by `updatedAt`. */
export const PriceTable = Schema.Record({ key: Schema.String, value: Schema.Array(PriceRound) })
export type PriceTable = typeof PriceTable.Type

/** Units of the reporting currency per USD on `date`, as the rate service quoted it. */
export const RateEntry = Schema.Struct({
  date: IsoDate,
  rate: PositiveDecimal,
  source: Schema.String,
  rateDate: IsoDate,
  carriedForward: Schema.Boolean
})
export type RateEntry = typeof RateEntry.Type

export const RateTable = Schema.Struct({
  currency: ReportingCurrency,
  rates: Schema.Array(RateEntry)
})
export type RateTable = typeof RateTable.Type

/** Everything but the events: re-running the ledger with other settings is how a replay happens. */
export const LedgerSettings = Schema.Struct({
  wallets: Schema.Array(Wallet),
  country: LedgerCountry,
  labels: Schema.optional(Schema.Record({ key: HexAddress, value: CounterpartyLabel })),
  prices: Schema.optional(PriceTable),
  /** The reporting currency and its rates per USD; USD (identity) when left out. */
  rates: Schema.optional(RateTable),
  /** Per token symbol, the multiplier in force before the first event given (raw, 18 decimals); default 1.0. */
  initialMultipliers: Schema.optional(Schema.Record({ key: Schema.String, value: RawInteger }))
}).annotations({ identifier: "LedgerSettings" })
export type LedgerSettings = typeof LedgerSettings.Type

export const LedgerInput = Schema.Struct({
  ...LedgerSettings.fields,
  events: Schema.Array(LedgerEvent),
  /** "Now" for current-year figures and current value, unix seconds. */
  asOf: UnixSeconds
}).annotations({ identifier: "LedgerInput" })
export type LedgerInput = typeof LedgerInput.Type
