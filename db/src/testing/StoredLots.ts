import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import type { LotWrites, StepWrites } from "../ledger/LedgerStore.js"

/** A state's open lots and its tokens' steps, to store whole, as a full build writes them (`LedgerStore.store`). */
export const lotAndStepWrites = (state: LedgerState): { lotWrites: LotWrites; stepWrites: StepWrites } => {
  const rowOf = Ledger.storedLotRowMaker(state)
  return {
    lotWrites: {
      replace: true,
      deletes: [],
      rows: [...Ledger.openLotsOf(state)].map((lot, ord) => ({
        token: lot.book.symbol,
        ord,
        json: JSON.stringify(rowOf(lot))
      }))
    },
    stepWrites: {
      replace: true,
      deletes: [],
      rows: [...state.books.values()].map((book) => ({
        token: book.symbol,
        json: JSON.stringify(Ledger.storedSteps(state, book))
      }))
    }
  }
}
