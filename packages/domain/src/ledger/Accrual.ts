/**
 * The per-token income index of dividend steps. A step adds its income per raw unit (Δm × price / m, kept at 54
 * decimals of USD) to a running sum, so a lot's income is its raw amount × the growth of the sum while it was held:
 * O(1) per step and per lot, rounded once (half to even, 18 decimals) when a figure is shown.
 */
import { divRound } from "./Fixed.js"
import type { Accrual, ComponentMeta, LotRecord, StepRecord } from "./LedgerState.js"

/** `perRaw` and index values are attoUSD × INDEX_SCALE per raw unit. */
export const INDEX_SCALE = 10n ** 36n

export const emptyAccrual = (): Accrual => ({ steps: [], index: [0n], unpriced: [0] })

export const copyAccrual = (accrual: Accrual): Accrual => ({
  steps: accrual.steps.slice(),
  index: accrual.index.slice(),
  unpriced: accrual.unpriced.slice()
})

/** The index position now: the number of steps recorded. */
export const position = (accrual: Accrual): number => accrual.steps.length

/** Records a step; `factor / denominator` is its income in attoUSD per raw unit (null: no price). */
export const addStep = (
  accrual: Accrual,
  meta: ComponentMeta,
  factor: bigint | null,
  denominator: bigint
): StepRecord => {
  const perRaw = factor === null ? null : divRound(factor * INDEX_SCALE, denominator)
  const step: StepRecord = { meta, perRaw }
  const k = accrual.steps.length
  accrual.steps.push(step)
  accrual.index.push(accrual.index[k]! + (perRaw ?? 0n))
  accrual.unpriced.push(accrual.unpriced[k]! + (perRaw === null ? 1 : 0))
  return step
}

/** A lot's closed spans and its open one up to `at` (an index position). */
export const spansOf = (lot: LotRecord, at: number): ReadonlyArray<readonly [number, number]> =>
  lot.accruingFrom < 0 || lot.accruingFrom >= at
    ? lot.spans
    : lot.spans.length === 0
    ? [[lot.accruingFrom, at]]
    : [...lot.spans, [lot.accruingFrom, at]]

/**
 * Income per raw unit a lot accrued up to index position `at` (× INDEX_SCALE attoUSD), or null when one of its
 * steps had no price. `index` is any index with those positions (a copy of the token's, or its converted twin).
 */
export const accruedPerRaw = (
  index: ReadonlyArray<bigint>,
  unknown: ReadonlyArray<number>,
  lot: LotRecord,
  at: number
): bigint | null => {
  let sum = 0n
  let missing = 0
  const from = lot.accruingFrom
  if (from >= 0 && from < at) {
    sum = index[at]! - index[from]!
    missing = unknown[at]! - unknown[from]!
  }
  for (const [a, b] of lot.spans) {
    sum += index[b]! - index[a]!
    missing += unknown[b]! - unknown[a]!
  }
  return missing > 0 ? null : sum
}

/** Whether the lot accrued any step up to `at`. */
export const accruedAny = (lot: LotRecord, at: number): boolean =>
  lot.spans.length > 0 || (lot.accruingFrom >= 0 && lot.accruingFrom < at)

/** `raw` × an income per raw unit, in attoUSD rounded half to even (the one rounding of an income figure). */
export const incomeOf = (raw: bigint, perRaw: bigint): bigint => divRound(raw * perRaw, INDEX_SCALE)

/** The lot (or its first `raw`) with its income folded into a closed span: it stops accruing (bridged away). */
export const stopAccruing = (lot: LotRecord, at: number): LotRecord =>
  lot.accruingFrom < 0
    ? lot
    : {
      ...lot,
      spans: lot.accruingFrom < at ? [...lot.spans, [lot.accruingFrom, at] as const] : lot.spans,
      accruingFrom: -1
    }

/** The lot accruing again from `at` (arrived from a bridge). */
export const startAccruing = (lot: LotRecord, at: number): LotRecord =>
  lot.accruingFrom >= 0 ? lot : { ...lot, accruingFrom: at }
