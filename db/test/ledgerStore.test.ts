import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { PAGE_ROWS } from "@scaledger/db/ledger/RowPages"
import { lotAndStepWrites } from "@scaledger/db/testing/StoredLots"
import { expandedDisposals, storedDisposals, storedEvents } from "@scaledger/db/testing/StoredPages"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Ledger, type LedgerEvent, type TransferEvent } from "@scaledger/domain/ledger/index"
import { Effect, Either, Layer } from "effect"

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
          expect(yield* expandedDisposals(account.id)).toEqual(build.disposals.map((d) => d.row))
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

      it.effect("reads open lots with their tokens' steps, stored once per token, as the report lists them", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* LedgerStore
          const { account } = yield* (yield* AccountsRepo).findOrCreate("lots")
          yield* sql`INSERT INTO ledger_builds (account_id, lease_owner, lease_until)
                     VALUES (${account.id}, 'me', now() + interval '1 hour')`
          const state = steppedLedger()
          const stored = {
            ...buildOf(1, "AAPL"),
            disposals: [...Ledger.storedDisposalRows(state)].map((row) => ({ ...Ledger.storedDisposalKeys(row), row })),
            lots: [],
            ...lotAndStepWrites(state)
          }
          expect(yield* store.store(account.id, "me", 1, stored)).toBe(true)
          const expected = [...Ledger.lotRows(state)]
          // Lots of both tokens, each lot citing its token's steps by position.
          expect(new Set(expected.map((lot) => lot.token))).toEqual(new Set(["AAPL", "TSLA"]))
          expect(expected.filter((lot) => lot.components.length > 1).map((lot) => lot.token).sort())
            .toEqual(["AAPL", "AAPL", "TSLA"])
          expect(yield* store.lots(account.id, undefined)).toEqual(expected)
          expect(yield* store.lots(account.id, "tsla")).toEqual(expected.filter((lot) => lot.token === "TSLA"))
          // The sale's slice cites AAPL's steps the same way.
          const sold = [...Ledger.disposalRows(state)]
          expect(sold.map((d) => d.basisComponents.length)).toEqual([3])
          expect(yield* expandedDisposals(account.id)).toEqual(sold)
          const [steps] = yield* sql<
            { n: string }
          >`SELECT count(*) AS n FROM ledger_steps WHERE account_id = ${account.id}`
          expect(Number(steps!.n)).toBe(2)
          // A later build whose TSLA has no steps any more (rolled back): its row goes, AAPL's stays.
          yield* sql`UPDATE ledger_builds SET lease_owner = 'me', lease_until = now() + interval '1 hour'
                     WHERE account_id = ${account.id}`
          expect(
            yield* store.store(account.id, "me", 2, {
              ...stored,
              lotWrites: { replace: false, deletes: [], rows: [] },
              stepWrites: { replace: false, deletes: ["TSLA"], rows: [] }
            })
          ).toBe(true)
          const left = yield* sql<{ token: string }>`SELECT token FROM ledger_steps WHERE account_id = ${account.id}`
          expect(left.map((row) => row.token)).toEqual(["AAPL"])
        }))
    })
  })
}

/** Two tokens' lots bought around their dividend steps (AAPL two steps, TSLA one), half of the first AAPL lot sold. */
const steppedLedger = () => {
  const holder = `0x${"a".repeat(40)}`
  const exchange = `0x${"e".repeat(40)}`
  const tokenAddress = (symbol: string) => `0x${(symbol === "AAPL" ? "1" : "2").repeat(40)}`
  const at = (day: number) => Date.UTC(2024, 0, day) / 1000
  let block = 0
  const buy = (token: string, day: number): TransferEvent => ({
    kind: "transfer",
    id: `t:${++block}`,
    token,
    tokenAddress: tokenAddress(token),
    from: exchange,
    to: holder,
    raw: "1000000000000000000",
    block,
    logIndex: 0,
    txHash: `0x${block.toString(16).padStart(64, "0")}`,
    timestamp: at(day),
    classification: { type: "transfer.in", relationship: "exchange", classifiedBy: "user", confirmed: true }
  })
  const step = (token: string, day: number, from: string, to: string): LedgerEvent => ({
    kind: "multiplier",
    id: `m:${token}:${day}`,
    token,
    tokenAddress: tokenAddress(token),
    from,
    to,
    effectiveAt: at(day),
    block: ++block,
    logIndex: -1,
    stepKind: "dividend"
  })
  const round = (feed: string) => [{ roundId: "1", answer: "10000000000", updatedAt: at(1), feed }]
  return Either.getOrThrow(Ledger.build({
    wallets: [{ address: holder, self: true }],
    country: "US",
    prices: { AAPL: round(`0x${"f".repeat(40)}`), TSLA: round(`0x${"d".repeat(40)}`) },
    events: [
      buy("AAPL", 2),
      buy("TSLA", 2),
      step("AAPL", 3, "1000000000000000000", "1010000000000000000"),
      step("TSLA", 4, "1000000000000000000", "1020000000000000000"),
      buy("AAPL", 5),
      buy("TSLA", 5),
      step("AAPL", 6, "1010000000000000000", "1020000000000000000"),
      {
        ...buy("AAPL", 7),
        from: holder,
        to: exchange,
        raw: "500000000000000000",
        classification: { type: "transfer.out", relationship: "exchange", classifiedBy: "user", confirmed: true }
      }
    ]
  }))
}
