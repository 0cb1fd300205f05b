import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ClassificationStore } from "@scaledger/db/classification/ClassificationStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const X = "0x00000000000000000000000000000000000000a1"
const Y = "0x00000000000000000000000000000000000000a2"
const OTHER = "0x00000000000000000000000000000000000000b1"

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, ClassificationStore.Default), database), {
      timeout: 120_000
    })((it) => {
      it.effect("after a complete pass, queues what was recorded since: new transfers, wallets added later", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* ClassificationStore
          const accounts = yield* AccountsRepo
          let n = 0
          /** One transfer between `from` and `to` in its own transaction, as the recorder stores them. */
          const transfer = (from: string, to: string) => {
            const i = ++n
            return sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                         token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN}, ${`0x${i.toString(16).padStart(64, "0")}`}, 0, ${i},
                         ${`0x${
              i.toString(16).padStart(64, "0")
            }`}, now(), ${OTHER}, ${from}, ${to}, ${from}, ${to}, 1)`
          }
          const watch = (label: string, address: string) =>
            Effect.gen(function*() {
              const { account } = yield* accounts.findOrCreate(label)
              yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${account.id}, ${address}, ${address})`
              return account.id
            })
          const queuedFor = (accountId: string) =>
            Effect.map(
              sql<{ n: string }>`SELECT count(*) AS n FROM transfer_classifications WHERE account_id = ${accountId}`,
              (rows) => Number(rows[0]!.n)
            )

          const a = yield* watch("enqueue-a", X)
          yield* transfer(OTHER, X)
          yield* transfer(X, OTHER)
          yield* transfer(OTHER, Y)
          const first = yield* store.enqueue(CHAIN)
          expect(first.queued).toBe(2)
          expect(first.since).toBeDefined()

          // A new transfer of a watched address; one of an address nobody watches.
          yield* transfer(OTHER, X)
          yield* transfer(Y, OTHER)
          const second = yield* store.enqueue(CHAIN, first.since)
          expect(second.queued).toBe(1)
          expect(yield* queuedFor(a)).toBe(3)

          // Wallets added since: an address whose transfers were recorded before (its two), and one watched already
          // by another account (its three, for this account too).
          const b = yield* watch("enqueue-b", Y)
          const c = yield* watch("enqueue-c", X)
          const third = yield* store.enqueue(CHAIN, second.since)
          expect(third.queued).toBe(5)
          expect(yield* queuedFor(b)).toBe(2)
          expect(yield* queuedFor(c)).toBe(3)

          // A transfer of an address two accounts watch: queued for both.
          yield* transfer(OTHER, X)
          const rest = yield* store.enqueue(CHAIN, third.since)
          expect(rest.queued).toBe(2)
          expect((yield* queuedFor(a)) + (yield* queuedFor(c))).toBe(8)
          // Nothing new: nothing queued, and nothing queued twice.
          expect((yield* store.enqueue(CHAIN, rest.since)).queued).toBe(0)
          expect((yield* store.enqueue(CHAIN)).queued).toBe(0)
          // A pass since a snapshot looks only at what was recorded after it: an old transfer's missing row is found
          // by a full pass (as after a restart), not by that one.
          yield* sql`DELETE FROM transfer_classifications WHERE account_id = ${a} AND tx_hash = ${`0x${
            "1".padStart(64, "0")
          }`}`
          expect((yield* store.enqueue(CHAIN, rest.since)).queued).toBe(0)
          expect((yield* store.enqueue(CHAIN)).queued).toBe(1)
        }))

      it.effect("claims an account's queued transfers in chain order, one account after the other", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // A chain of its own: the transfers the test above left queued are not in its claims.
          const ORDER_CHAIN = CHAIN + 1
          const store = yield* ClassificationStore
          const accounts = yield* AccountsRepo
          const P = "0x00000000000000000000000000000000000000c1"
          const Q = "0x00000000000000000000000000000000000000c2"
          const p = (yield* accounts.findOrCreate("order-p")).account.id
          const q = (yield* accounts.findOrCreate("order-q")).account.id
          yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${p}, ${P}, ${P}), (${q}, ${Q}, ${Q})`
          // Six transfers each, the two accounts' blocks interleaved, and transaction hashes falling as blocks rise
          // (an order by hash would take them backwards); two logs in one block of P's.
          const rows = Array.from({ length: 12 }, (_, i) => ({
            block: 1000 + (i < 6 ? 2 * i : 2 * (i - 6) + 1) - (i === 1 ? 2 : 0),
            logIndex: i === 1 ? 5 : 0,
            to: i < 6 ? P : Q,
            hash: `0x${(0xfff - i).toString(16).padStart(64, "0")}`
          }))
          for (const r of rows) {
            yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                         token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${ORDER_CHAIN}, ${r.hash}, ${r.logIndex}, ${r.block}, ${r.hash}, now(), ${OTHER}, ${OTHER},
                         ${r.to}, ${OTHER}, ${r.to}, 1)`
          }
          expect((yield* store.enqueue(ORDER_CHAIN)).queued).toBe(12)

          const claimed: Array<{ accountId: string; block: number; logIndex: number }> = []
          for (let batch = 0; batch < 4; batch++) {
            const got = yield* store.claim(ORDER_CHAIN, "order-test", 3, 60)
            expect(got).toHaveLength(3)
            // A batch is one account's (six each, three a batch).
            expect(new Set(got.map((c) => c.accountId)).size).toBe(1)
            for (const c of got) claimed.push(c)
          }
          expect(yield* store.claim(ORDER_CHAIN, "order-test", 3, 60)).toHaveLength(0)
          const first = claimed[0]!.accountId
          expect(claimed.slice(0, 6).every((c) => c.accountId === first)).toBe(true)
          expect(claimed.slice(6).every((c) => c.accountId !== first)).toBe(true)
          const positions = (accountId: string) =>
            rows.filter((r) => r.to === (accountId === p ? P : Q))
              .map((r) => [r.block, r.logIndex])
              .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!)
          expect(claimed.slice(0, 6).map((c) => [c.block, c.logIndex])).toEqual(positions(first))
          expect(claimed.slice(6).map((c) => [c.block, c.logIndex])).toEqual(positions(claimed[6]!.accountId))

          // The decisions of one batch in one statement: only rows still leased by the one deciding are written,
          // and each account written asks for a build.
          const built = (accountId: string) =>
            Effect.map(
              sql<{ v: string }>`SELECT requested_version AS v FROM ledger_builds WHERE account_id = ${accountId}`,
              (r) => Number(r[0]?.v ?? 0)
            )
          const before = [yield* built(p), yield* built(q)] as const
          const decide = (c: (typeof claimed)[number], note: string | null) => ({
            accountId: c.accountId,
            chainId: ORDER_CHAIN,
            txHash: rows.find((r) => r.block === c.block && r.logIndex === c.logIndex)!.hash,
            logIndex: c.logIndex,
            type: "transfer.in" as const,
            relationship: null,
            classifiedBy: "rule" as const,
            confirmed: false,
            rule: "test",
            counterpartyKey: OTHER,
            model: null,
            confidence: null,
            rationale: note,
            error: null
          })
          expect(yield* store.complete("someone-else", [decide(claimed[0]!, null)])).toBe(0)
          expect(
            yield* store.complete("order-test", claimed.map((c, i) => decide(c, i === 0 ? "it's \"quoted\"" : null)))
          )
            .toBe(12)
          expect(yield* store.complete("order-test", [decide(claimed[1]!, null)])).toBe(0)
          const done = yield* sql<{ n: string; rationale: string | null }>`
            SELECT count(*) FILTER (WHERE status = 'done' AND lease_owner IS NULL AND type = 'transfer.in') AS n,
              max(rationale) AS rationale
            FROM transfer_classifications WHERE account_id IN (${p}, ${q})`
          expect(Number(done[0]!.n)).toBe(12)
          expect(done[0]!.rationale).toBe("it's \"quoted\"")
          expect(yield* built(p)).toBe(before[0] + 1)
          expect(yield* built(q)).toBe(before[1] + 1)
        }))

      it.effect("reads a transaction's legs from or to own addresses, and the transfers asked about, not the rest", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* ClassificationStore
          const LEGS_CHAIN = CHAIN + 2
          const OWN = "0x00000000000000000000000000000000000000d1"
          const WATCHED = "0x00000000000000000000000000000000000000d2"
          const POOL = "0x00000000000000000000000000000000000000d3"
          const TOKEN_A = "0x00000000000000000000000000000000000000e1"
          const TOKEN_B = "0x00000000000000000000000000000000000000e2"
          yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, decimals, listed, is_stock)
                     VALUES (${LEGS_CHAIN}, ${TOKEN_A}, ${TOKEN_A}, 'AAPL', 18, true, true)`
          const tx = `0x${"ab".repeat(32)}`
          const other = `0x${"cd".repeat(32)}`
          // One transaction: the own address swaps A for B through the pool, the pool pays three other holders, and a
          // watched address that is not own receives B; another transaction of the own address.
          const legs: ReadonlyArray<readonly [string, number, string, string, string]> = [
            [tx, 0, TOKEN_A, OWN, POOL],
            [tx, 1, TOKEN_B, POOL, OWN],
            [tx, 2, TOKEN_B, POOL, "0x00000000000000000000000000000000000000f1"],
            [tx, 3, TOKEN_B, POOL, "0x00000000000000000000000000000000000000f2"],
            [tx, 4, TOKEN_B, POOL, WATCHED],
            [tx, 5, TOKEN_A, "0x00000000000000000000000000000000000000f3", POOL],
            [other, 0, TOKEN_A, POOL, OWN]
          ]
          for (const [hash, logIndex, token, from, to] of legs) {
            yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                         token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${LEGS_CHAIN}, ${hash}, ${logIndex}, 7, ${hash}, now(), ${token}, ${from}, ${to}, ${from},
                         ${to}, ${logIndex + 1})`
          }
          const read = (transfers: ReadonlyArray<{ txHash: string; logIndex: number }>, own: ReadonlyArray<string>) =>
            Effect.map(store.legs(LEGS_CHAIN, transfers, own), (rows) => rows.map((r) => [r.txHash, r.logIndex]))
          // Asked about the own address's receipt: both its legs in that transaction (with the token's symbol where
          // the list names it), not the pool's payments to others nor the other transaction.
          const ofOwn = yield* store.legs(LEGS_CHAIN, [{ txHash: tx, logIndex: 1 }], [OWN])
          expect(ofOwn).toEqual([
            { txHash: tx, logIndex: 0, token: "AAPL", from: OWN, to: POOL, raw: "1" },
            { txHash: tx, logIndex: 1, token: TOKEN_B, from: POOL, to: OWN, raw: "2" }
          ])
          // The watched address's receipt, asked about with no own address: that transfer alone.
          expect(yield* read([{ txHash: tx, logIndex: 4 }], [])).toEqual([[tx, 4]])
          // Two transactions at once, own addresses of two accounts (in hash order: 0xab… before 0xcd…).
          expect(yield* read([{ txHash: tx, logIndex: 4 }, { txHash: other, logIndex: 0 }], [OWN, WATCHED])).toEqual([
            [tx, 0],
            [tx, 1],
            [tx, 4],
            [other, 0]
          ])
          expect(yield* read([], [OWN])).toEqual([])
        }))
    })
  })
}
