import type { LedgerStore } from "@scaledger/db"
import { ReplayInProgress, ServiceUnavailable } from "@scaledger/domain"
import type { IncomeEvent, Lot, Position } from "@scaledger/domain/ledger/LedgerReport"
import { Effect, Option } from "effect"

/**
 * The account's stored ledger build as the market reads use it, with the same rule as the ledger reads: 409 while a
 * replay (or the first build) is under way, 503 when the build failed. An account that never asked for a build has
 * an empty record.
 */
export const settledLedger = (store: LedgerStore, accountId: string) =>
  Effect.gen(function*() {
    const state = yield* store.state(accountId)
    if (Option.isNone(state)) return false
    if (state.value.builtVersion === 0 || state.value.replayVersion > state.value.builtVersion) {
      return yield* new ReplayInProgress({
        message: "The account's history is being rebuilt; retry shortly.",
        retryAfterSeconds: 1
      })
    }
    if (state.value.status === "failed") {
      return yield* new ServiceUnavailable({ message: `The account's ledger could not be built: ${state.value.error}` })
    }
    return true
  })

export const positionsOf = (store: LedgerStore, accountId: string) =>
  Effect.map(store.positions(accountId), (rows) => rows as ReadonlyArray<Position>)

export const openLotsOf = (store: LedgerStore, accountId: string, token: string) =>
  Effect.map(store.lots(accountId, token), (rows) => rows as ReadonlyArray<Lot>)

/** Every dividend-step income record of a token for the account, in chain order. */
export const incomeEventsOf = (store: LedgerStore, accountId: string, token: string) =>
  Effect.gen(function*() {
    const out: Array<IncomeEvent> = []
    let afterOrd: number | undefined
    for (;;) {
      const page = yield* store.events(accountId, { type: "income.multiplier_increase" }, { afterOrd, limit: 500 })
      for (const event of page.events) {
        const row = event.row as IncomeEvent
        if (row.token.toUpperCase() === token.toUpperCase()) out.push(row)
      }
      const last = page.events[page.events.length - 1]
      if (!page.hasMore || last === undefined) return out
      afterOrd = Number(last.ord)
    }
  })
