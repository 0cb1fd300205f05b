import type { ReportingCurrency } from "../Currency.js"
import type { ClassifyContext, ResolvedMovement } from "./Classify.js"
import type { CountryRule } from "./CountryRule.js"
import type { LedgerSettings, MovementType, MultiplierEvent, RateTable, TransferEvent } from "./LedgerInput.js"
import type { Issue, NullReason } from "./LedgerReport.js"
import type { PriceIndex, PriceRef } from "./Prices.js"

/** What one part of a lot's basis is: the acquisition, or the income of one dividend step. Shared between lots. */
export interface ComponentMeta {
  readonly kind: "acquisition" | "income"
  readonly eventId: string
  readonly at: number
  readonly price: PriceRef | null
}

/** One dividend step of a token, as its income index records it. */
export interface StepRecord {
  readonly meta: ComponentMeta
  /** Income per raw unit, in units of 1e-36 attoUSD (USD × 1e54); null when the step had no price. */
  readonly perRaw: bigint | null
}

/**
 * A token's running income index: `index[k]` is the income per raw unit of the first `k` dividend steps (same unit
 * as `perRaw`, unpriced steps counting 0) and `unpriced[k]` how many of them had no price. Append-only.
 */
export interface Accrual {
  steps: Array<StepRecord>
  index: Array<bigint>
  unpriced: Array<number>
}

/**
 * An open lot: a few numbers. Its income is not stored: it is `raw` × the growth of its token's income index over
 * the steps it accrued (`spans`, closed, and the open span from `accruingFrom` to now), so a dividend step does not
 * touch lots and a slice of a lot costs O(1). Immutable: consuming part of it replaces it.
 */
export interface LotRecord {
  readonly id: string
  readonly seq: number
  readonly acquiredAt: number
  readonly raw: bigint
  readonly multiplier: bigint
  /** The price round of its acquisition (its basis component is dated `acquiredAt`, event `sourceEventId`). */
  readonly price: PriceRef | null
  /** The acquisition basis in attoUSD (USD × 1e18); null when unknown. */
  readonly acquisitionUsd: bigint | null
  /** Step ranges [from, to) of its token's index the lot accrued in before (a lot that was bridged away). */
  readonly spans: ReadonlyArray<readonly [number, number]>
  /**
   * attoUSD added to `raw` × its accrued income per raw unit (each rounded once): what keeps the income of the two
   * parts of a split lot summing to the lot's, to the last digit. Zero for a lot never split after a dividend step.
   */
  readonly incomeAdjust: bigint
  /** The index position since which it accrues; −1 while it accrues nothing (in transit). */
  readonly accruingFrom: number
  readonly sourceEventId: string
  /** Why its acquisition basis is unknown; missing prices of dividend steps are derived from the index. */
  readonly nullReasons: ReadonlyArray<NullReason>
  /**
   * True when the true acquisition date is unknown (a lot made up for tokens no recorded lot covers: incomplete
   * history, unmatched self-transfers, bridges, collateral): `acquiredAt` is then only the arrival used for FIFO
   * order, and a disposal of it has no holding period.
   */
  readonly dateUnknown: boolean
}

/** Lots sorted oldest first (acquiredAt, then creation order); `head` skips the consumed ones. */
export interface LotQueue {
  lots: Array<LotRecord>
  head: number
  total: bigint
  /** A snapshot refers to `lots`: anything but an append or a same-id replacement copies the array first. */
  pinned: boolean
  /** Counts the changes to this queue object (every insert and take): figures kept per queue hold while it is the same. */
  version: number
  /**
   * The changes since version `changesFrom` (appends and takes from the head), for sums kept per queue to follow
   * them instead of summing every lot again; emptied (and `changesFrom` moved to `version`) by any other change.
   */
  changes: Array<QueueChange>
  changesFrom: number
  /**
   * Whether its changes are logged: only once figures kept of the queue may follow them (`logChanges`). Until then
   * a change only moves `changesFrom`, so a long build keeps no lot alive for a log nobody reads.
   */
  logged: boolean
}

/** One change to a queue: a lot appended, or lots taken from its head (`rest`: what is left of the last one). */
export type QueueChange =
  | { readonly added: LotRecord }
  | { readonly removed: ReadonlyArray<LotRecord>; readonly rest: LotRecord | null }

/** The lots a queue held at some moment (`lots[from..to)`), without copying them: the lot ids of an income record. */
export interface LotSnapshot {
  readonly lots: ReadonlyArray<LotRecord>
  readonly from: number
  readonly to: number
}

/** An own address's holding of one token. `raw` includes the `encumbered` part (posted as collateral). */
export interface Holder {
  readonly key: string
  readonly address: string
  readonly watched: boolean
  raw: bigint
  encumbered: bigint
  issues: Array<Issue>
}

export interface TokenBook {
  readonly symbol: string
  readonly tokenAddress: string
  multiplier: bigint
  /** Keyed by the holder's lowercase address (wallet scope) or `account`. */
  pools: Map<string, LotQueue>
  transit: LotQueue
  accrual: Accrual
  holders: Map<string, Holder>
  issues: Array<Issue>
}

/** A movement as applied. Kept small (one object, no derived amounts): a ledger holds one per transfer. */
export interface MovementRecord extends ResolvedMovement {
  readonly event: TransferEvent
  readonly wallet: string
  readonly counterparty: string
  readonly multiplier: bigint
  readonly price: PriceRef | null
  readonly taxable: boolean
  readonly lotIds: ReadonlyArray<string>
  /** Its disposal rows are `<event id>:0` … `<event id>:<disposalCount − 1>`. */
  readonly disposalCount: number
  readonly nullReasons: ReadonlyArray<NullReason>
}

/** One lot slice of a disposal; proceeds, basis and gain are derived from it when reported. */
export interface DisposalRecord {
  readonly event: TransferEvent
  readonly slice: number
  readonly type: MovementType
  readonly wallet: string
  readonly counterparty: string
  readonly raw: bigint
  readonly multiplier: bigint
  /** The lot this slice came from, as it was before (the slice is its first `raw`); null for the part no recorded lot covers. */
  readonly lot: LotRecord | null
  /** The token's income index position when it was disposed of: the slice accrued up to there. */
  readonly step: number
  readonly price: PriceRef | null
  /** A model label not yet confirmed: no proceeds (nor gain) until it is. */
  readonly unconfirmed: boolean
  readonly taxable: boolean
  readonly needsReview: boolean
  readonly classifiedBy: "rule" | "ai_labeled" | "user"
  readonly nullReasons: ReadonlyArray<NullReason>
}

export interface IncomeRecord {
  readonly id: string
  readonly event: MultiplierEvent
  readonly holderKey: string
  readonly wallet: string
  readonly from: bigint
  readonly to: bigint
  readonly raw: bigint
  readonly price: PriceRef | null
  readonly income: bigint | null
  readonly taxable: boolean
  /** The lots it was added to (their ids are listed when the row is made). */
  readonly lots: LotSnapshot
  readonly nullReasons: ReadonlyArray<NullReason>
}

export interface SplitRecord {
  readonly id: string
  readonly event: MultiplierEvent
  readonly wallet: string
  readonly from: bigint
  readonly to: bigint
  readonly raw: bigint
}

export interface DuplicateRecord {
  readonly eventId: string
  readonly sameAs: string
}

/**
 * An append-only list shared between a state and the states applied on top of it: each state sees the first
 * `length` items. Appending to a list someone else already extended copies it first.
 */
export interface AppendLog<A> {
  /** `items[i - base]` is row `i`. */
  readonly items: Array<A>
  readonly length: number
  /** The rows before this one were released (written out and dropped, see `Ledger.release`). */
  readonly base: number
}

/** A running total's parts (see `Total` in the report): amounts × 1e18. */
export interface TotalSums {
  readonly knownUsd: bigint
  readonly knownConverted: bigint
  readonly count: number
  readonly unknownCount: number
  readonly unconvertedCount: number
}

/** What the report still needs of released rows: realised gains per UTC year of disposal, and a count. */
export interface ReleasedTotals {
  readonly realised: ReadonlyMap<number, TotalSums>
  readonly realisedTaxable: ReadonlyMap<number, TotalSums>
  readonly needsReview: number
}

export interface Cursor {
  readonly block: number
  readonly logIndex: number
  readonly event: TransferEvent | MultiplierEvent | null
}

export interface LedgerContext {
  readonly settings: LedgerSettings
  readonly rule: CountryRule
  readonly classify: ClassifyContext
  readonly prices: PriceIndex
  readonly rates: RateTable | undefined
  readonly currency: ReportingCurrency
  readonly initialMultipliers: ReadonlyMap<string, bigint>
}

export const LedgerStateTypeId: unique symbol = Symbol.for("@scaledger/domain/ledger/LedgerState")
export type LedgerStateTypeId = typeof LedgerStateTypeId

/**
 * The ledger after some events. Plain data, never mutated once returned: `Ledger.apply` builds a new state (copying
 * the tokens the new events touch, sharing the rest), so an older state stays valid and can be applied to again.
 */
export interface LedgerState {
  readonly [LedgerStateTypeId]: LedgerStateTypeId
  readonly context: LedgerContext
  readonly books: ReadonlyMap<string, TokenBook>
  readonly movements: AppendLog<MovementRecord>
  readonly disposals: AppendLog<DisposalRecord>
  readonly income: AppendLog<IncomeRecord>
  readonly splits: AppendLog<SplitRecord>
  readonly ignored: AppendLog<Issue>
  readonly duplicates: AppendLog<DuplicateRecord>
  readonly released: ReleasedTotals
  readonly cursor: Cursor
  readonly seq: number
  readonly eventCount: number
}
