import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { PAGE_ROWS } from "@scaledger/db/ledger/RowPages"
import { storedDisposals, storedEvents } from "@scaledger/db/testing/StoredPages"
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
      row: { id: `t:${i}`, text: "quote \" backslash \\ tab \t", label: i % 7 === 0 ? "Müller 株式 📈" : "" }
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
          expect(yield* storedEvents(account.id)).toEqual(build.events.map((e, i) => ({ ord: i, ...e })))
          const page = yield* store.events(account.id, { token: "odd\u001fx" }, { afterOrd: undefined, limit: 5 })
          expect(page.events).toEqual([{ ord: 11_999, row: build.events[11_999]!.row }])
          // Pages of PAGE_ROWS rows; a page of reads crosses them.
          const [pages] = yield* sql<{ n: string }>`
            SELECT count(*) AS n FROM ledger_event_pages WHERE account_id = ${account.id}`
          expect(Number(pages!.n)).toBe(Math.ceil(12_000 / PAGE_ROWS))
          const across = yield* store.events(account.id, { type: "transfer.in", needsReview: true }, {
            afterOrd: PAGE_ROWS - 40,
            limit: 10
          })
          const wanted = build.events.map((e, i) => ({ ord: i, e })).filter(({ e, ord }) =>
            ord > PAGE_ROWS - 40 && e.type === "transfer.in" && e.needsReview
          )
          expect(across.events).toEqual(wanted.slice(0, 10).map(({ e, ord }) => ({ ord, row: e.row })))
          expect(across.events.at(-1)!.ord).toBeGreaterThan(PAGE_ROWS)
          expect(across.hasMore).toBe(true)
          const days = yield* store.events(account.id, { token: "aapl", from: "2024-01-27", to: "2024-01-28" }, {
            afterOrd: 11_900,
            limit: 1_000
          })
          expect(days.events.map((e) => e.ord)).toEqual(
            build.events.flatMap((e, i) =>
              i > 11_900 && e.token === "AAPL" && e.day >= "2024-01-27" && e.day <= "2024-01-28" ? [i] : []
            )
          )
          expect(days.hasMore).toBe(false)
          expect(yield* store.recentEvents(account.id, 3)).toEqual(build.events.slice(-3).reverse().map((e) => e.row))
          expect(yield* store.countNeedingReview(account.id)).toBe(build.events.filter((e) => e.needsReview).length)
          expect(yield* store.disposals(account.id, undefined)).toEqual(build.disposals.map((d) => d.row))
          expect(yield* store.positions(account.id)).toEqual(build.positions.map((p) => p.row))
          expect(
            yield* sql<{ wallet_key: string | null }>`
              SELECT wallet_key FROM ledger_positions WHERE account_id = ${account.id} ORDER BY ord`
          ).toEqual([{ wallet_key: "0xabc" }, { wallet_key: null }])
          expect(yield* store.lots(account.id, undefined)).toEqual([{ id: "lot", token: "ODD\u001fX" }])
        }))

      it.effect("replaces rows from a position on, keeping the rows before it and pages full", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* LedgerStore
          const { account } = yield* (yield* AccountsRepo).findOrCreate("incremental")
          const lease = sql`INSERT INTO ledger_builds (account_id, lease_owner, lease_until)
                            VALUES (${account.id}, 'me', now() + interval '1 hour')
                            ON CONFLICT (account_id) DO UPDATE SET lease_owner = 'me',
                              lease_until = now() + interval '1 hour'`
          yield* lease
          const full = buildOf(2_100, "ODD")
          expect(yield* store.store(account.id, "me", 1, full)).toBe(true)
          // A build from position 2,050 on (the rows after its checkpoint), inside the last page; then one adding rows
          // after that page (under a quarter full: they join it); then one replacing rows of a full page; then one
          // adding rows after a page over a quarter full (a new page).
          const more = buildOf(2_720, "NEW")
          const steps = [[2_050, 2_100], [2_100, 2_700], [1_990, 2_700], [2_700, 2_720]] as const
          let expected: ReadonlyArray<Omit<(typeof full.events)[number], "row"> & { readonly row: object }> =
            full.events
          let version = 2
          for (const [since, to] of steps) {
            yield* lease
            const rows = more.events.slice(since, to).map((e) => ({ ...e, row: { ...(e.row as object), at: since } }))
            const disposals = [{ token: "NEW", day: "2024-02-01", row: { since } }]
            expect(
              yield* store.store(account.id, "me", version++, { ...more, events: rows, disposals }, {
                events: since,
                disposals: 1
              })
            ).toBe(true)
            expected = [...expected.slice(0, since), ...rows]
            expect(yield* storedEvents(account.id)).toEqual(expected.map((e, i) => ({ ord: i, ...e })))
            expect((yield* storedDisposals(account.id)).map((d) => d.row)).toEqual([{ i: 0 }, { since }])
          }
          const pages = yield* sql<{ first_ord: string; count: number }>`
            SELECT first_ord, count FROM ledger_event_pages WHERE account_id = ${account.id} ORDER BY first_ord`
          expect(pages.map((p) => [Number(p.first_ord), p.count])).toEqual([
            [0, 1_000],
            [1_000, 1_000],
            [2_000, 700],
            [2_700, 20]
          ])
          expect(yield* store.countNeedingReview(account.id)).toBe(expected.filter((e) => e.needsReview).length)
        }))
    })
  })
}
