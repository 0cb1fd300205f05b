/**
 * The report's per-event rows (disposal slices, income, splits, movements), formatted one at a time from the ledger
 * state, and the running totals they feed; `release` drops rows already written out, keeping what totals need.
 */
import { divRound, formatWad, PRICE_SCALE, utcDate, utcYear, WAD } from "./Fixed.js"
import { holdingPeriod } from "./HoldingPeriod.js"
import type { Disposal, IncomeEvent, Movement, NullReason, SplitEvent, Total } from "./LedgerReport.js"
import type {
  DisposalRecord,
  IncomeRecord,
  LedgerState,
  MovementRecord,
  ReleasedTotals,
  SplitRecord,
  TotalSums
} from "./LedgerState.js"
import { Conversions, formatUsd, provenance } from "./LotFigures.js"
import { idsOf } from "./Lots.js"
import { uniqueReasons } from "./PoolSums.js"

const SHARE_PRICE_SCALE = 10n ** 28n

export class TotalBuilder {
  private knownUsd: bigint
  private knownConverted: bigint
  private count: number
  private unknownCount: number
  private unconvertedCount: number

  constructor(from?: TotalSums) {
    this.knownUsd = from?.knownUsd ?? 0n
    this.knownConverted = from?.knownConverted ?? 0n
    this.count = from?.count ?? 0
    this.unknownCount = from?.unknownCount ?? 0
    this.unconvertedCount = from?.unconvertedCount ?? 0
  }

  add(usd: bigint | null, converted: bigint | null): void {
    this.count++
    if (usd === null) {
      this.unknownCount++
      return
    }
    this.knownUsd += usd
    if (converted === null) this.unconvertedCount++
    else this.knownConverted += converted
  }

  sums(): TotalSums {
    return {
      knownUsd: this.knownUsd,
      knownConverted: this.knownConverted,
      count: this.count,
      unknownCount: this.unknownCount,
      unconvertedCount: this.unconvertedCount
    }
  }

  done(): Total {
    const knownConverted = formatWad(this.knownConverted)
    return {
      usd: this.unknownCount === 0 ? formatWad(this.knownUsd) : null,
      knownUsd: formatWad(this.knownUsd),
      converted: this.unknownCount === 0 && this.unconvertedCount === 0 ? knownConverted : null,
      knownConverted,
      count: this.count,
      unknownCount: this.unknownCount,
      unconvertedCount: this.unconvertedCount
    }
  }
}

export const minus = (a: bigint | null, b: bigint | null): bigint | null => (a === null || b === null ? null : a - b)

/** What `release` keeps of a disposal: its gain, in USD and converted. */
export interface DisposalGains {
  readonly gainUsd: bigint | null
  readonly gain: bigint | null
}

export interface DisposalFigures extends DisposalGains {
  readonly date: string
  readonly proceedsUsd: bigint | null
  readonly basisUsd: bigint | null
  readonly proceeds: bigint | null
  readonly basis: bigint | null
}

export const disposalFigures = (
  state: LedgerState,
  conversions: Conversions,
  record: DisposalRecord
): DisposalFigures => {
  const date = utcDate(record.event.timestamp)
  const { lot, price } = record
  const proceedsUsd = record.unconfirmed || price === null ? null : divRound(record.raw * price.answer, PRICE_SCALE)
  const figures = lot === null
    ? null
    : conversions.basis(state.books.get(record.event.token)!.accrual, lot, record.step, record.raw)
  const basisUsd = figures === null ? null : figures.basisUsd
  const proceeds = conversions.amount(proceedsUsd, date)
  const basis = figures === null ? null : figures.basisConverted
  const gainUsd = minus(proceedsUsd, basisUsd)
  return {
    date,
    proceedsUsd,
    basisUsd,
    gainUsd,
    proceeds,
    basis,
    gain: gainUsd === null ? null : minus(proceeds, basis)
  }
}

/**
 * Why a disposal's figures are unknown: the record's reasons, and `stale_rate` where a converted figure is null
 * because its date's newest rate is too old (the proceeds on the disposal's date, the basis on its parts' dates).
 */
export const disposalReasons = (
  state: LedgerState,
  conversions: Conversions,
  record: DisposalRecord,
  figures: DisposalFigures
): ReadonlyArray<NullReason> => {
  const proceeds: Array<NullReason> =
    figures.proceedsUsd !== null && figures.proceeds === null && conversions.stale(figures.date)
      ? [{ reason: "stale_rate", eventId: record.event.id }]
      : []
  const basis = record.lot !== null && figures.basisUsd !== null && figures.basis === null
    ? conversions.staleReasons(state.books.get(record.event.token)!.accrual, record.lot, record.step)
    : []
  return proceeds.length === 0 && basis.length === 0
    ? record.nullReasons
    : uniqueReasons([record.nullReasons, proceeds, basis])
}

/** Why an income record's converted amount is unknown: its reasons, and `stale_rate` when its date's rate is too old. */
export const incomeReasons = (conversions: Conversions, record: IncomeRecord, date: string): Array<NullReason> =>
  record.income !== null && conversions.stale(date)
    ? uniqueReasons([record.nullReasons, [{ reason: "stale_rate", eventId: record.event.id }]])
    : [...record.nullReasons]

const disposalRow = (state: LedgerState, conversions: Conversions, record: DisposalRecord): Disposal => {
  const { event, lot } = record
  const figures = disposalFigures(state, conversions, record)
  const { date } = figures
  const acquired = lot === null ? null : utcDate(lot.acquiredAt)
  return {
    id: `${event.id}:${record.slice}`,
    eventId: event.id,
    slice: record.slice,
    type: record.type,
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    counterparty: record.counterparty,
    date,
    disposedAt: event.timestamp,
    raw: record.raw.toString(),
    qty: formatWad(record.raw),
    shares: formatWad(divRound(record.raw * record.multiplier, WAD)),
    lotId: lot === null ? null : lot.id,
    acquired,
    acquiredAt: lot === null ? null : lot.acquiredAt,
    // A lot whose acquisition date is unknown (made up for tokens no recorded lot covers) has no holding period.
    holdingPeriod: acquired === null || lot!.dateUnknown ? null : holdingPeriod(acquired, date),
    currency: state.context.currency,
    proceedsUsd: formatUsd(figures.proceedsUsd),
    basisUsd: formatUsd(figures.basisUsd),
    gainUsd: formatUsd(figures.gainUsd),
    proceeds: conversions.converted(figures.proceedsUsd, date),
    basis: formatUsd(figures.basis),
    gain: formatUsd(figures.gain),
    price: provenance(record.price),
    basisComponents: lot === null
      ? []
      : conversions.components(state.books.get(event.token)!.accrual, lot, record.step, record.raw),
    taxable: record.taxable,
    needsReview: record.needsReview,
    classifiedBy: record.classifiedBy,
    nullReasons: [...disposalReasons(state, conversions, record, figures)],
    walletTransaction: { txHash: event.txHash, block: event.block, logIndex: event.logIndex }
  }
}

const incomeRow = (state: LedgerState, conversions: Conversions, record: IncomeRecord): IncomeEvent => {
  const { event, price } = record
  const date = utcDate(event.effectiveAt)
  return {
    id: record.id,
    eventId: event.id,
    type: "income.multiplier_increase",
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    block: event.block,
    effectiveAt: event.effectiveAt,
    date,
    from: formatWad(record.from),
    to: formatWad(record.to),
    rawBalance: formatWad(record.raw),
    addedShares: formatWad(divRound(record.raw * (record.to - record.from), WAD)),
    sharePriceUsd: price === null ? null : formatWad(divRound(price.answer * SHARE_PRICE_SCALE, record.from)),
    price: provenance(price),
    currency: state.context.currency,
    incomeUsd: formatUsd(record.income),
    income: conversions.converted(record.income, date),
    taxable: record.taxable,
    needsReview: false,
    walletTransaction: null,
    lotIds: idsOf(record.lots),
    nullReasons: incomeReasons(conversions, record, date)
  }
}

const splitRow = (record: SplitRecord): SplitEvent => {
  const { event } = record
  return {
    id: record.id,
    eventId: event.id,
    type: "split",
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    block: event.block,
    effectiveAt: event.effectiveAt,
    date: utcDate(event.effectiveAt),
    from: formatWad(record.from),
    to: formatWad(record.to),
    rawBalance: formatWad(record.raw),
    sharesBefore: formatWad(divRound(record.raw * record.from, WAD)),
    sharesAfter: formatWad(divRound(record.raw * record.to, WAD)),
    taxable: false,
    walletTransaction: null
  }
}

const movementRow = (state: LedgerState, conversions: Conversions, record: MovementRecord): Movement => {
  const { classification, event } = record
  const date = utcDate(event.timestamp)
  const raw = BigInt(event.raw)
  const valueUsd = record.price === null ? null : divRound(raw * record.price.answer, PRICE_SCALE)
  const disposalIds: Array<string> = new Array(record.disposalCount)
  for (let i = 0; i < record.disposalCount; i++) disposalIds[i] = `${event.id}:${i}`
  return {
    id: event.id,
    type: classification.type,
    relationship: classification.relationship,
    classifiedBy: classification.classifiedBy,
    confirmed: classification.classifiedBy === "user" || classification.confirmed,
    needsReview: record.needsReview,
    taxable: record.taxable,
    treatment: record.treatment,
    direction: record.direction,
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    counterparty: record.counterparty,
    raw: raw.toString(),
    qty: formatWad(raw),
    shares: formatWad(divRound(raw * record.multiplier, WAD)),
    date,
    timestamp: event.timestamp,
    currency: state.context.currency,
    valueUsd: formatUsd(valueUsd),
    value: conversions.converted(valueUsd, date),
    price: provenance(record.price),
    lotIds: [...record.lotIds],
    disposalIds,
    nullReasons: [...record.nullReasons],
    walletTransaction: { txHash: event.txHash, block: event.block, logIndex: event.logIndex }
  }
}

/**
 * The classified movements, in event order (GET /v1/events), formatted one at a time; from the `from`-th on (an
 * incremental build writes only those after its checkpoint).
 */
export function* movementRows(state: LedgerState, from = 0): Generator<Movement> {
  const conversions = new Conversions(state)
  const { base, items, length } = state.movements
  for (let i = Math.max(from, base); i < length; i++) yield movementRow(state, conversions, items[i - base]!)
}

/** The disposal rows (one per lot slice), in event order; from the `from`-th on. */
export function* disposalRows(state: LedgerState, from = 0): Generator<Disposal> {
  const conversions = new Conversions(state)
  const { base, items, length } = state.disposals
  for (let i = Math.max(from, base); i < length; i++) yield disposalRow(state, conversions, items[i - base]!)
}

/** The income events of dividend steps (one per holder), in event order; from the `from`-th on. */
export function* incomeRows(state: LedgerState, from = 0): Generator<IncomeEvent> {
  const conversions = new Conversions(state)
  const { base, items, length } = state.income
  for (let i = Math.max(from, base); i < length; i++) yield incomeRow(state, conversions, items[i - base]!)
}

/** The split records (one per holder), in event order; from the `from`-th on. */
export function* splitRows(state: LedgerState, from = 0): Generator<SplitEvent> {
  const { base, items, length } = state.splits
  for (let i = Math.max(from, base); i < length; i++) yield splitRow(items[i - base]!)
}

/** How many rows of each list a state holds: where an incremental build's new rows start. */
export interface RowCounts {
  readonly movements: number
  readonly disposals: number
  readonly income: number
  readonly splits: number
}

export const rowCounts = (state: LedgerState): RowCounts => ({
  movements: state.movements.length,
  disposals: state.disposals.length,
  income: state.income.length,
  splits: state.splits.length
})

/** Realised gains of the disposals of UTC year `year` up to `asOf`: the released ones' sums, then the rows kept. */
export const realisedInYear = (
  state: LedgerState,
  conversions: Conversions,
  year: number,
  asOf: number
): { readonly all: TotalBuilder; readonly taxable: TotalBuilder } => {
  const all = new TotalBuilder(state.released.realised.get(year))
  const taxable = new TotalBuilder(state.released.realisedTaxable.get(year))
  const { base, items, length } = state.disposals
  for (let i = 0; i < length - base; i++) {
    const record = items[i]!
    const t = record.event.timestamp
    if (t > asOf || utcYear(t) !== year) continue
    const { gain, gainUsd } = disposalFigures(state, conversions, record)
    all.add(gainUsd, gain)
    if (record.taxable) taxable.add(gainUsd, gain)
  }
  return { all, taxable }
}

/** Movements needing review: the released ones counted, then the rows kept. */
export const needsReviewCount = (state: LedgerState): number => {
  let count = state.released.needsReview
  const { base, items, length } = state.movements
  for (let i = 0; i < length - base; i++) if (items[i]!.needsReview) count++
  return count
}

/**
 * The state without the movement and disposal rows it holds (once they are written out: `movementRows`,
 * `disposalRows`), so that a long build keeps only lots, holdings and the few income and split records. What the
 * report needs of them is kept as sums: realised gains per UTC year of disposal (converted at the rates the state
 * has now) and the count of movements needing review. Row numbers go on (`rowCounts`); a released row is no longer
 * listed. A report of a released state counts a released disposal in its year's totals even when `asOf` is earlier
 * in that year than the disposal. `gains`: those of the disposals the state holds, one each in order, as
 * `storedDisposalRows` gathered them while it made their rows; computed here when not given (or not one each).
 */
export const release = (state: LedgerState, gains?: ReadonlyArray<DisposalGains>): LedgerState => {
  const conversions = new Conversions(state)
  const realised = new Map<number, TotalBuilder>()
  const realisedTaxable = new Map<number, TotalBuilder>()
  const builder = (map: Map<number, TotalBuilder>, sums: ReadonlyMap<number, TotalSums>, year: number) => {
    let total = map.get(year)
    if (total === undefined) {
      total = new TotalBuilder(sums.get(year))
      map.set(year, total)
    }
    return total
  }
  const { base, items, length } = state.disposals
  const given = gains !== undefined && gains.length === length - base ? gains : undefined
  for (let i = 0; i < length - base; i++) {
    const record = items[i]!
    const year = utcYear(record.event.timestamp)
    const { gain, gainUsd } = given?.[i] ?? disposalFigures(state, conversions, record)
    builder(realised, state.released.realised, year).add(gainUsd, gain)
    if (record.taxable) builder(realisedTaxable, state.released.realisedTaxable, year).add(gainUsd, gain)
  }
  const merged = (sums: ReadonlyMap<number, TotalSums>, added: Map<number, TotalBuilder>) => {
    const out = new Map(sums)
    for (const [year, total] of added) out.set(year, total.sums())
    return out
  }
  const released: ReleasedTotals = {
    realised: merged(state.released.realised, realised),
    realisedTaxable: merged(state.released.realisedTaxable, realisedTaxable),
    needsReview: needsReviewCount(state)
  }
  return {
    ...state,
    movements: { items: [], length: state.movements.length, base: state.movements.length },
    disposals: { items: [], length: state.disposals.length, base: state.disposals.length },
    released
  }
}
