import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

/** Rows as a build stores them, over more than one insert chunk; `odd` is a token symbol holding a separator. */
const buildOf = (events: number, odd: string) => {
  const tokenOf = (i: number) => (i === events - 1 ? odd : i % 2 === 0 ? "AAPL" : "TSLA")
  return {
    report: { tokens: [] },
    positions: [
      { token: "AAPL", wallet: "0xAbC", row: { token: "AAPL", n: 1 } },
      { token: "TSLA", wallet: null, row: { token: "TSLA", note: "a\u001eb\u001fc" } }
    ],
    lots: [{ token: odd, row: { id: "lot", token: odd } }],
    disposals: Array.from({ length: 3 }, (_, i) => ({ token: tokenOf(i), day: "2024-01-02", row: { i } })),
    events: Array.from({ length: events }, (_, i) => ({
      id: `t:${i}`,
      type: i % 3 === 0 ? "transfer.in" : "transfer.out",
      token: tokenOf(i),
      day: `2024-01-${String(1 + (i % 28)).padStart(2, "0")}`,
      needsReview: i % 5 === 0,
      row: { id: `t:${i}`, text: "quote \" backslash \\ tab \t" }
    }))
  }
}

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, LedgerStore.Default), database), {
      timeout: 120_000
    })((it) => {
      it.effect("stores a build's rows in chunks of one text each, or with a parameter per value", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* LedgerStore
          const { account } = yield* (yield* AccountsRepo).findOrCreate("bulk")
          yield* sql`INSERT INTO ledger_builds (account_id, lease_owner, lease_until)
                     VALUES (${account.id}, 'me', now() + interval '1 hour')`
          // More events than one chunk; the last chunk's token holds a separator.
          const build = buildOf(12_000, "ODD\u001fX")
          expect(yield* store.store(account.id, "me", 1, build)).toBe(true)
          const events = yield* sql<
            { ord: string; id: string; type: string; token: string; day: string; needs_review: boolean }
          >`
            SELECT ord, id, type, token, day::text AS day, needs_review FROM ledger_events
            WHERE account_id = ${account.id} ORDER BY ord`
          expect(events).toEqual(build.events.map((e, i) => ({
            ord: String(i),
            id: e.id,
            type: e.type,
            token: e.token,
            day: e.day,
            needs_review: e.needsReview
          })))
          const page = yield* store.events(account.id, { token: "odd\u001fx" }, { afterOrd: undefined, limit: 5 })
          expect(page.events).toEqual([{ ord: 11_999, row: build.events[11_999]!.row }])
          expect(yield* store.disposals(account.id, undefined)).toEqual(build.disposals.map((d) => d.row))
          expect(yield* store.positions(account.id)).toEqual(build.positions.map((p) => p.row))
          expect(
            yield* sql<{ wallet_key: string | null }>`
              SELECT wallet_key FROM ledger_positions WHERE account_id = ${account.id} ORDER BY ord`
          ).toEqual([{ wallet_key: "0xabc" }, { wallet_key: null }])
          expect(yield* store.lots(account.id, undefined)).toEqual([{ id: "lot", token: "ODD\u001fX" }])
        }))
    })
  })
}
