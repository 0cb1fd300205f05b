/**
 * The one place the market reads use the pure ledger (so that a rewrite of the ledger core has one adapter to
 * follow). It calls, from `ledger/Lots.ts`: `newQueue`, `insertLot`, `takeFifo`, `sliceAcquisition` (the FIFO queue and the
 * pro-rata slicing of a basis); and re-exports the ledger's fixed-point helpers (`ledger/Fixed.ts`:
 * `parseFixed`, `formatFixed`, `divRound`, `WAD`), its conversion (`ledger/Convert.ts`: `applyRate`, `rateOn`) and
 * its holding-period rule (`ledger/HoldingPeriod.ts`: `holdingPeriod`, `oneYearHeldOn`). No matching rule is
 * written here.
 */
import { parseFixed } from "../ledger/Fixed.js"
import type { LedgerReport } from "../ledger/LedgerReport.js"

export { applyRate, rateOn, type RateQuote } from "../ledger/Convert.js"
export { divRound, formatFixed, parseFixed, WAD } from "../ledger/Fixed.js"
export { holdingPeriod, oneYearHeldOn } from "../ledger/HoldingPeriod.js"
export { isAcquisitionDateUnknown } from "../ledger/LedgerWork.js"
import type { LotRecord } from "../ledger/LedgerState.js"
import { insertLot, newQueue, sliceAcquisition, takeFifo } from "../ledger/Lots.js"

export type Lot = LedgerReport["lots"][number]

export interface FifoSlice {
  /** The stored lot the slice comes from. */
  readonly lot: Lot
  /** Raw token units taken from it. */
  readonly raw: bigint
  /** The slice's basis in attoUSD (USD × 1e18); null when any part of it is unknown. */
  readonly basisUsd: bigint | null
  /** The slice's basis in the reporting currency × 1e18, each component at its own date's rate; null if unknown. */
  readonly basisConverted: bigint | null
}

const sum = (parts: ReadonlyArray<bigint | null>): bigint | null => {
  let total = 0n
  for (const part of parts) {
    if (part === null) return null
    total += part
  }
  return total
}

/** A stored lot as a ledger lot whose whole basis (its components summed) is sliced as one amount. */
const recordOf = (lot: Lot, seq: number, amounts: ReadonlyArray<bigint | null>): LotRecord => ({
  id: lot.id,
  seq,
  acquiredAt: lot.acquiredAt,
  raw: BigInt(lot.raw),
  multiplier: parseFixed(lot.multiplierAtAcquisition, 18),
  price: null,
  acquisitionUsd: sum(amounts),
  spans: [],
  incomeAdjust: 0n,
  accruingFrom: -1,
  sourceEventId: lot.sourceEventId,
  nullReasons: lot.nullReasons,
  // The ledger's stand-in lots for units no recorded acquisition covers (`<event>#unmatched`) have no known date.
  dateUnknown: lot.id.endsWith("#unmatched")
})

/** What FIFO orders a pool's lot by and draws from it. */
export interface FifoLot {
  readonly id: string
  readonly acquiredAt: number
  readonly raw: string
}

/**
 * The lots a sale of `raw` units draws from, in the order FIFO draws them, each with its place in `lots`: the pool's
 * lots in the ledger's queue order (acquisition time, then place in `lots`), up to the one that completes `raw`.
 */
export const fifoDrawn = <L extends FifoLot>(
  lots: ReadonlyArray<L>,
  raw: bigint
): Array<{ readonly lot: L; readonly seq: number }> => {
  const order = lots.map((_, seq) => seq).sort((a, b) => lots[a]!.acquiredAt - lots[b]!.acquiredAt || a - b)
  const drawn: Array<{ readonly lot: L; readonly seq: number }> = []
  let need = raw
  for (const seq of order) {
    if (need <= 0n) break
    const lot = lots[seq]!
    drawn.push({ lot, seq })
    need -= BigInt(lot.raw)
  }
  return drawn
}

/**
 * The slices FIFO takes from `lots` (one pool's open lots, as a ledger build stored them) to dispose of `raw`
 * units, at most the pool's total. Only the lots it draws from are made whole (`whole`) and given to the ledger's
 * own queue, in the stored order.
 */
export const fifoSlices = <L extends FifoLot>(
  lots: ReadonlyArray<L>,
  raw: bigint,
  whole: (lot: L) => Lot
): Array<FifoSlice> => {
  const queue = newQueue()
  const byId = new Map<string, { readonly lot: Lot; readonly converted: LotRecord }>()
  for (const drawn of fifoDrawn(lots, raw)) {
    const lot = whole(drawn.lot)
    const usd = lot.components.map((c) => (c.usd === null ? null : parseFixed(c.usd, 18)))
    const converted = lot.components.map((c) => (c.converted === null ? null : parseFixed(c.converted.amount, 18)))
    insertLot(queue, recordOf(lot, drawn.seq, usd))
    byId.set(lot.id, { lot, converted: recordOf(lot, drawn.seq, converted) })
  }
  return takeFifo(queue, raw).map((slice) => {
    const { converted, lot } = byId.get(slice.lot.id)!
    return {
      lot,
      raw: slice.raw,
      basisUsd: sliceAcquisition(slice.lot, slice.raw),
      basisConverted: sliceAcquisition(converted, slice.raw)
    }
  })
}
