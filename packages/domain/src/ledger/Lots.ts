import { incomeOf } from "./Accrual.js"
import { divRound } from "./Fixed.js"
import type { LotQueue, LotRecord, LotSnapshot } from "./LedgerState.js"

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

export const newQueue = (): LotQueue => ({
  lots: [],
  head: 0,
  total: 0n,
  pinned: false,
  version: 0,
  changes: [],
  changesFrom: 0,
  logged: false
})

export const copyQueue = (queue: LotQueue): LotQueue => ({
  lots: queue.lots.slice(queue.head),
  head: 0,
  total: queue.total,
  pinned: false,
  version: 0,
  changes: [],
  changesFrom: 0,
  logged: false
})

/** More changes than this are not followed: the next sums over the queue are made again from its lots. */
const MAX_CHANGES = 256

/** From now on `queue` logs its changes: figures kept of it (pool sums, stored lot rows) follow them. */
export const logChanges = (queue: LotQueue): void => {
  queue.logged = true
}

/** Empties the log: figures kept of the queue before `version` no longer follow it. */
const restartLog = (queue: LotQueue): void => {
  if (queue.changes.length > 0) queue.changes = []
  queue.changesFrom = queue.version
}

/** Whether the change just counted in `version` is to be logged (else the log restarts after it). */
const logging = (queue: LotQueue): boolean => {
  if (queue.logged && queue.changes.length < MAX_CHANGES) return true
  restartLog(queue)
  return false
}

const NO_LOTS: LotSnapshot = { lots: [], from: 0, to: 0 }

/** The queue's open lots now, shared with the queue (which copies its array before it next reorders it). */
export const snapshotOf = (queue: LotQueue | undefined): LotSnapshot => {
  if (queue === undefined || queue.head === queue.lots.length) return NO_LOTS
  queue.pinned = true
  return { lots: queue.lots, from: queue.head, to: queue.lots.length }
}

export const idsOf = (snapshot: LotSnapshot): Array<string> => {
  const ids: Array<string> = new Array(snapshot.to - snapshot.from)
  for (let i = snapshot.from; i < snapshot.to; i++) ids[i - snapshot.from] = snapshot.lots[i]!.id
  return ids
}

export const insertLot = (queue: LotQueue, lot: LotRecord): void => {
  queue.total += lot.raw
  queue.version++
  if (queue.lots.length === queue.head || compareLots(queue.lots[queue.lots.length - 1]!, lot) <= 0) {
    queue.lots.push(lot)
    if (logging(queue)) queue.changes.push({ added: lot })
    return
  }
  restartLog(queue)
  if (queue.pinned) {
    queue.lots = queue.lots.slice()
    queue.pinned = false
  }
  const { lots } = queue
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

/** The acquisition basis of the first `raw` of `lot`: pro rata by raw quantity, half to even. */
export const sliceAcquisition = (lot: LotRecord, raw: bigint): bigint | null =>
  raw === lot.raw || lot.acquisitionUsd === null ? lot.acquisitionUsd : divRound(lot.acquisitionUsd * raw, lot.raw)

/**
 * The rest of `lot` once its first `raw` is gone: its acquisition basis minus the slice's, and its income (at
 * `perRaw` per raw unit so far) minus the slice's, so nothing is lost to rounding.
 */
export const restOf = (lot: LotRecord, raw: bigint, perRaw: bigint | null): LotRecord => {
  const taken = sliceAcquisition(lot, raw)
  const rest = lot.raw - raw
  return {
    ...lot,
    raw: rest,
    acquisitionUsd: taken === null ? null : lot.acquisitionUsd! - taken,
    incomeAdjust: perRaw === null || perRaw === 0n
      ? lot.incomeAdjust
      : incomeOf(lot.raw, perRaw) + lot.incomeAdjust - incomeOf(raw, perRaw) - incomeOf(rest, perRaw)
  }
}

const noIncome = (): bigint | null => null

export interface Slice {
  /** The lot as it was before the slice was taken. */
  readonly lot: LotRecord
  readonly raw: bigint
}

/**
 * Takes `raw` (at most the queue's total) oldest first and returns the slices: for each lot touched, the lot as it
 * was and how much of it was taken (all of it, except perhaps the last).
 */
export const takeFifo = (
  queue: LotQueue,
  raw: bigint,
  perRawOf: (lot: LotRecord) => bigint | null = noIncome
): Array<Slice> => {
  const taken: Array<Slice> = []
  let need = raw
  const { lots } = queue
  queue.version++
  let rest: LotRecord | null = null
  while (need > 0n && queue.head < lots.length) {
    const lot = lots[queue.head]!
    if (lot.raw <= need) {
      taken.push({ lot, raw: lot.raw })
      need -= lot.raw
      queue.head++
    } else {
      rest = restOf(lot, need, perRawOf(lot))
      lots[queue.head] = rest
      taken.push({ lot, raw: need })
      need = 0n
    }
  }
  if (logging(queue)) queue.changes.push({ removed: taken.map((slice) => slice.lot), rest })
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
  return { ...lot, id: `${lot.id}@${eventId}`, raw, acquisitionUsd: sliceAcquisition(lot, raw), incomeAdjust: 0n }
}

export const moveSlices = (
  slices: ReadonlyArray<Slice>,
  eventId: string,
  into: LotQueue,
  lotIds: Array<string>,
  adjust?: (lot: LotRecord) => LotRecord
): void => {
  for (const slice of slices) {
    const piece = adjust === undefined ? pieceOf(slice, eventId) : adjust(pieceOf(slice, eventId))
    insertLot(into, piece)
    lotIds.push(piece.id)
  }
}
