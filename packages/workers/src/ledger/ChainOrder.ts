/** The order a build applies and stores events in: chain order, multiplier changes before a block's transfers. */
import type { EventRecord } from "@scaledger/db/ledger/LedgerStore"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, MultiplierEvent } from "@scaledger/domain/ledger/LedgerInput"
import type { IncomeEvent, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"

/** Merges multiplier events into a chain-ordered page of transfers: (block, logIndex), multipliers at logIndex -1. */
export const mergeInto = <E extends LedgerEvent>(
  pending: Array<MultiplierEvent>,
  page: ReadonlyArray<E>,
  last: boolean
): Array<E | MultiplierEvent> => {
  const lastTransfer = page[page.length - 1]
  const merged: Array<E | MultiplierEvent> = []
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

interface Ordered {
  readonly position: number
  readonly record: EventRecord
}

/** Income and split rows, stored as the report lists them: placed before their block's transfers. */
function* wholeRows(rows: Iterable<IncomeEvent | SplitEvent>) {
  for (const row of rows) {
    yield {
      position: eventKey({ block: row.block, logIndex: -1 }),
      record: {
        id: row.id,
        type: row.type,
        token: row.token,
        day: row.date,
        needsReview: "needsReview" in row && row.needsReview,
        row
      }
    } satisfies Ordered
  }
}

function* movements(state: LedgerState, from: number | undefined) {
  for (const row of Ledger.storedMovementRows(state, from)) {
    const keys = Ledger.storedMovementKeys(row)
    yield {
      position: eventKey(keys),
      record: { id: keys.id, type: keys.type, token: keys.token, day: keys.day, needsReview: keys.needsReview, row }
    } satisfies Ordered
  }
}

/**
 * Movements (stored compactly, `Ledger.storedMovementRows`), income and splits in one chain-ordered sequence (each
 * source is already in chain order); with `from`, only the rows after those counts (the rows an incremental build
 * adds after its checkpoint).
 */
export function* chainOrdered(state: LedgerState, from?: Ledger.RowCounts): Generator<EventRecord> {
  const sources = [
    movements(state, from?.movements),
    wholeRows(Ledger.incomeRows(state, from?.income)),
    wholeRows(Ledger.splitRows(state, from?.splits))
  ].map((rows: Iterator<Ordered>) => ({ iterator: rows, head: rows.next() }))
  for (;;) {
    let best: (typeof sources)[number] | undefined
    for (const source of sources) {
      if (source.head.done) continue
      if (best === undefined || source.head.value.position < best.head.value!.position) best = source
    }
    if (best === undefined) return
    const { record } = best.head.value as Ordered
    best.head = best.iterator.next()
    yield record
  }
}
