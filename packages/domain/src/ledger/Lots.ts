import { divRound } from "./Fixed.js"
import type { LotQueue, LotRecord } from "./LedgerState.js"

export const compareLots = (a: LotRecord, b: LotRecord): number =>
  a.acquiredAt !== b.acquiredAt
    ? a.acquiredAt - b.acquiredAt
    : a.seq !== b.seq
    ? a.seq - b.seq
    : a.id < b.id
    ? -1
    : a.id > b.id
    ? 1
    : 0

export const newQueue = (): LotQueue => ({ lots: [], head: 0, total: 0n })

export const copyQueue = (queue: LotQueue): LotQueue => ({
  lots: queue.lots.slice(queue.head),
  head: 0,
  total: queue.total
})

export const insertLot = (queue: LotQueue, lot: LotRecord): void => {
  const { lots } = queue
  queue.total += lot.raw
  if (lots.length === queue.head || compareLots(lots[lots.length - 1]!, lot) <= 0) {
    lots.push(lot)
    return
  }
  // Lots moved in from another address are usually older than everything here: they go in front, into the room
  // FIFO consumption leaves there (made when there is none), not by shifting the whole queue.
  if (compareLots(lot, lots[queue.head]!) < 0) {
    if (queue.head === 0) {
      const room = Math.max(64, lots.length >> 1)
      const grown: Array<LotRecord> = new Array(room + lots.length)
      for (let i = 0; i < lots.length; i++) grown[room + i] = lots[i]!
      queue.lots = grown
      queue.head = room
    }
    queue.head--
    queue.lots[queue.head] = lot
    return
  }
  let lo = queue.head
  let hi = lots.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareLots(lots[mid]!, lot) <= 0) lo = mid + 1
    else hi = mid
  }
  lots.splice(lo, 0, lot)
}

export const sumBasis = (usd: ReadonlyArray<bigint | null>): bigint | null => {
  let sum = 0n
  for (let i = 0; i < usd.length; i++) {
    const part = usd[i]!
    if (part === null) return null
    sum += part
  }
  return sum
}

/** The basis components of the first `raw` of `lot`: each component pro rata by raw quantity, half to even. */
export const sliceUsd = (lot: LotRecord, raw: bigint): ReadonlyArray<bigint | null> => {
  if (raw === lot.raw) return lot.usd
  const out: Array<bigint | null> = new Array(lot.usd.length)
  for (let i = 0; i < lot.usd.length; i++) {
    const part = lot.usd[i]!
    out[i] = part === null ? null : divRound(part * raw, lot.raw)
  }
  return out
}

export const sliceBasis = (lot: LotRecord, raw: bigint): bigint | null => {
  if (raw === lot.raw) return lot.basis
  if (lot.basis === null) return null
  let sum = 0n
  for (let i = 0; i < lot.usd.length; i++) sum += divRound(lot.usd[i]! * raw, lot.raw)
  return sum
}

/** The rest of `lot` once its first `raw` is gone: each component minus its slice, so nothing is lost to rounding. */
export const restOf = (lot: LotRecord, taken: ReadonlyArray<bigint | null>, raw: bigint): LotRecord => {
  const usd: Array<bigint | null> = new Array(lot.usd.length)
  for (let i = 0; i < usd.length; i++) {
    const part = lot.usd[i]!
    usd[i] = part === null ? null : part - taken[i]!
  }
  return {
    id: lot.id,
    seq: lot.seq,
    acquiredAt: lot.acquiredAt,
    raw: lot.raw - raw,
    multiplier: lot.multiplier,
    meta: lot.meta,
    usd,
    basis: sumBasis(usd),
    sourceEventId: lot.sourceEventId,
    nullReasons: lot.nullReasons,
    dateUnknown: lot.dateUnknown
  }
}

export interface Slice {
  /** The lot as it was before the slice was taken. */
  readonly lot: LotRecord
  readonly raw: bigint
}

/**
 * Takes `raw` (at most the queue's total) oldest first and returns the slices: for each lot touched, the lot as it
 * was and how much of it was taken (all of it, except perhaps the last).
 */
export const takeFifo = (queue: LotQueue, raw: bigint): Array<Slice> => {
  const taken: Array<Slice> = []
  let need = raw
  const { lots } = queue
  while (need > 0n && queue.head < lots.length) {
    const lot = lots[queue.head]!
    if (lot.raw <= need) {
      taken.push({ lot, raw: lot.raw })
      need -= lot.raw
      queue.head++
    } else {
      lots[queue.head] = restOf(lot, sliceUsd(lot, need), need)
      taken.push({ lot, raw: need })
      need = 0n
    }
  }
  queue.total -= raw - need
  if (queue.head > 64 && queue.head * 2 > lots.length) {
    queue.lots = lots.slice(queue.head)
    queue.head = 0
  }
  return taken
}

/** A slice as a lot of its own, for moving elsewhere; a partial one is named `<lot id>@<moving event id>`. */
export const pieceOf = (slice: Slice, eventId: string): LotRecord => {
  const { lot, raw } = slice
  if (raw === lot.raw) return lot
  const usd = sliceUsd(lot, raw)
  return {
    id: `${lot.id}@${eventId}`,
    seq: lot.seq,
    acquiredAt: lot.acquiredAt,
    raw,
    multiplier: lot.multiplier,
    meta: lot.meta,
    usd,
    basis: sumBasis(usd),
    sourceEventId: lot.sourceEventId,
    nullReasons: lot.nullReasons,
    dateUnknown: lot.dateUnknown
  }
}

export const moveSlices = (
  slices: ReadonlyArray<Slice>,
  eventId: string,
  into: LotQueue,
  lotIds: Array<string>
): void => {
  for (const slice of slices) {
    const piece = pieceOf(slice, eventId)
    insertLot(into, piece)
    lotIds.push(piece.id)
  }
}
