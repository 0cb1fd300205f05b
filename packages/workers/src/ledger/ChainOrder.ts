/** The order a build applies and stores events in: chain order, multiplier changes before a block's transfers. */
import type { EventRecord } from "@scaledger/db/ledger/LedgerStore"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, MultiplierEvent } from "@scaledger/domain/ledger/LedgerInput"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"

/** Merges multiplier events into a chain-ordered page of transfers: (block, logIndex), multipliers at logIndex -1. */
export const mergeInto = (
  pending: Array<MultiplierEvent>,
  page: ReadonlyArray<LedgerEvent>,
  last: boolean
): Array<LedgerEvent> => {
  const lastTransfer = page[page.length - 1]
  const merged: Array<LedgerEvent> = []
  let i = 0
  for (const event of page) {
    while (i < pending.length && pending[i]!.block <= event.block) merged.push(pending[i++]!)
    merged.push(event)
  }
  while (i < pending.length && (last || lastTransfer === undefined || pending[i]!.block <= lastTransfer.block)) {
    merged.push(pending[i++]!)
  }
  pending.splice(0, i)
  return merged
}

const eventKey = (row: { readonly block: number; readonly logIndex: number }) => row.block * 1_000_000 + row.logIndex

/**
 * Movements, income and splits in one chain-ordered sequence (each generator is already in chain order); with
 * `from`, only the rows after those counts (the rows an incremental build adds after its checkpoint).
 */
export function* chainOrdered(state: LedgerState, from?: Ledger.RowCounts): Generator<EventRecord> {
  const sources = [
    Ledger.movementRows(state, from?.movements),
    Ledger.incomeRows(state, from?.income),
    Ledger.splitRows(state, from?.splits)
  ].map((rows) => {
    const iterator = rows[Symbol.iterator]() as Iterator<any>
    return { iterator, head: iterator.next() }
  })
  const position = (row: any) =>
    row.walletTransaction === null
      ? eventKey({ block: row.block, logIndex: -1 })
      : eventKey({ block: row.walletTransaction.block, logIndex: row.walletTransaction.logIndex })
  for (;;) {
    let best: (typeof sources)[number] | undefined
    for (const source of sources) {
      if (source.head.done) continue
      if (best === undefined || position(source.head.value) < position(best.head.value)) best = source
    }
    if (best === undefined) return
    const row = best.head.value
    best.head = best.iterator.next()
    yield {
      id: row.id,
      type: row.type,
      token: row.token,
      day: row.date,
      needsReview: row.needsReview ?? false,
      row
    }
  }
}
