/** A queue's sums (`PoolFigures`) moved along its logged changes instead of made again from every lot. */
import { accruedAny } from "./Accrual.js"
import type { NullReason } from "./LedgerReport.js"
import type { LotQueue, LotRecord, TokenBook } from "./LedgerState.js"
import type { LotBasis, PoolFigures } from "./LotFigures.js"

/** Each reason once (by reason and event), in order. */
export const uniqueReasons = (lists: Iterable<ReadonlyArray<NullReason>>): Array<NullReason> => {
  const seen = new Set<string>()
  const out: Array<NullReason> = []
  for (const list of lists) {
    for (const reason of list) {
      const key = `${reason.reason}|${reason.eventId}`
      if (!seen.has(key)) {
        seen.add(key)
        out.push(reason)
      }
    }
  }
  return out
}

/** The open lots' ids in queue order (a new array: positions compare them by identity). */
export const idsOf = (queue: LotQueue): Array<string> => {
  const ids: Array<string> = new Array(queue.lots.length - queue.head)
  for (let i = queue.head; i < queue.lots.length; i++) ids[i - queue.head] = queue.lots[i]!.id
  return ids
}

/**
 * The sums of an earlier version of the queue (made with its token's index at the same steps) moved along the
 * changes logged since (lots appended, taken from the head): O(changed lots), besides the ids. Undefined when they
 * cannot be (changes not logged, or a null figure or a reason among the lots concerned, which a sum cannot take
 * back): the sums are then made again from every lot.
 */
export const followChanges = (
  earlier: PoolFigures | undefined,
  book: TokenBook,
  queue: LotQueue,
  figuresOf: (lot: LotRecord) => { readonly figures: LotBasis; readonly reasons: ReadonlyArray<NullReason> }
): PoolFigures | undefined => {
  if (
    earlier === undefined || earlier.version < queue.changesFrom ||
    earlier.version - queue.changesFrom > queue.changes.length || earlier.reasons.length > 0 ||
    earlier.basisUsd === null || earlier.basisConverted === null || earlier.accruedUsd === null ||
    earlier.accruedConverted === null
  ) return undefined
  const at = book.accrual.steps.length
  let basisUsd = earlier.basisUsd
  let basisConverted = earlier.basisConverted
  let openRaw = earlier.openRaw
  let accruedUsd = earlier.accruedUsd
  let accruedConverted = earlier.accruedConverted
  const follow = (lot: LotRecord, sign: bigint): boolean => {
    const { figures, reasons } = figuresOf(lot)
    if (figures.basisUsd === null || figures.basisConverted === null || reasons.length > 0) return false
    basisUsd += sign * figures.basisUsd
    basisConverted += sign * figures.basisConverted
    openRaw += sign * lot.raw
    if (accruedAny(lot, at)) {
      if (figures.incomeUsd === null || figures.incomeConverted === null) return false
      accruedUsd += sign * figures.incomeUsd
      accruedConverted += sign * figures.incomeConverted
    }
    return true
  }
  for (let i = earlier.version - queue.changesFrom; i < queue.changes.length; i++) {
    const change = queue.changes[i]!
    if ("added" in change) {
      if (!follow(change.added, 1n)) return undefined
    } else {
      for (const lot of change.removed) if (!follow(lot, -1n)) return undefined
      if (change.rest !== null && !follow(change.rest, 1n)) return undefined
    }
  }
  return {
    version: queue.version,
    at,
    last: book.accrual.steps[at - 1],
    basisUsd,
    basisConverted,
    reasons: [],
    lotIds: idsOf(queue),
    openRaw,
    accruedUsd,
    accruedConverted
  }
}
