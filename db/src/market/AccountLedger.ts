import type { IncomeEvent, Lot } from "@scaledger/domain/ledger/LedgerReport"
import { Effect, Option } from "effect"
import type { LedgerStore } from "../ledger/LedgerStore.js"
import type { PositionRow } from "../reads/LedgerViews.js"
import { settledBuild } from "../reads/SettledBuild.js"

/** True when the account has a stored build, under the ledger reads' replay rule (409 while a replay runs). */
export const settledLedger = (store: LedgerStore, accountId: string) =>
  Effect.map(settledBuild(store, accountId), Option.isSome)

export const positionsOf = (store: LedgerStore, accountId: string) =>
  Effect.map(store.positions(accountId), (rows) => rows as ReadonlyArray<PositionRow>)

/** A token's open lots as a sale estimate draws them (`LedgerStore.lotSources`). */
export const lotSourcesOf = (store: LedgerStore, accountId: string, token: string) =>
  Effect.map(store.lotSources(accountId, token), (rows) =>
    rows as ReadonlyArray<
      Pick<Lot, "id" | "location" | "wallet" | "acquiredAt" | "raw"> & { readonly whole: () => Lot }
    >)

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
