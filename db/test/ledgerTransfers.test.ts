import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Chunk, Effect, Layer, Stream } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const TOKEN = "0x00000000000000000000000000000000000000aa"
const OWN = ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000a2"]
const OTHER = "0x00000000000000000000000000000000000000b1"

/**
 * An account's history as windows of blocks see it: a burst of 30 transfers in one block (more than a page), sparse
 * ones millions of blocks apart, a dense run, transfers between the own addresses (one row, read once), and
 * another account's transfers in between (never read).
 */
const blocks = [
  5,
  17,
  17,
  ...Array.from({ length: 30 }, () => 1_000),
  1_001,
  2_000_000,
  2_000_001,
  9_999_999,
  ...Array.from({ length: 25 }, (_, i) => 10_000_000 + i * 3),
  40_000_000
]

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, LedgerInputs.Default), database), {
      timeout: 120_000
    })((it) => {
      it.effect("reads every transfer of the account once, in chain order, whatever the page size", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { account } = yield* (yield* AccountsRepo).findOrCreate("windows")
          for (const address of OWN) {
            yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${account.id}, ${address}, ${address})`
          }
          const rows = blocks.flatMap((block, i) => {
            const from = i % 4 === 0 ? OWN[0]! : i % 4 === 1 ? OTHER : i % 4 === 2 ? OWN[1]! : OWN[0]!
            const to = i % 4 === 0 ? OTHER : i % 4 === 1 ? OWN[1]! : i % 4 === 2 ? OWN[0]! : OWN[1]!
            const own = {
              chain_id: CHAIN,
              tx_hash: `0x${i.toString(16).padStart(64, "0")}`,
              log_index: i,
              block,
              block_hash: `0x${block.toString(16).padStart(64, "0")}`,
              block_time: new Date(Date.UTC(2024, 0, 1) + block * 1000),
              token_key: TOKEN,
              from_key: from,
              to_key: to,
              from_address: from,
              to_address: to,
              raw: String(1_000 + i)
            }
            const elsewhere = {
              ...own,
              tx_hash: `0x${(i + 1_000).toString(16).padStart(64, "f")}`,
              from_key: OTHER,
              from_address: OTHER,
              to_key: "0xcc",
              to_address: "0xcc"
            }
            return [own, elsewhere]
          })
          yield* sql`INSERT INTO token_transfers ${sql.insert(rows)}`
          const expected = rows.filter((r) => r.from_key !== OTHER || r.to_key !== "0xcc").map((r) =>
            `${r.block}:${r.log_index}`
          )
          const inputs = yield* LedgerInputs
          const tokens = [{ key: TOKEN, address: TOKEN, symbol: "AAA" }]
          for (const pageSize of [1, 7, 20_000]) {
            const read = yield* Stream.runCollect(
              inputs.transfers(account.id, CHAIN, tokens, undefined, undefined, pageSize)
            )
            expect(Chunk.toReadonlyArray(read).map((e) => `${e.block}:${e.logIndex}`)).toEqual(expected)
          }
          // After a position (an incremental build): only what follows it.
          const after = yield* Stream.runCollect(inputs.transfers(account.id, CHAIN, tokens, [1_000, 20], undefined, 4))
          expect(Chunk.toReadonlyArray(after).map((e) => `${e.block}:${e.logIndex}`)).toEqual(
            expected.filter((key) => {
              const [block, log] = key.split(":").map(Number) as [number, number]
              return block > 1_000 || (block === 1_000 && log > 20)
            })
          )
          // Nothing after the last one.
          expect(Chunk.size(yield* Stream.runCollect(inputs.transfers(account.id, CHAIN, tokens, [40_000_000, 999]))))
            .toBe(0)
        }))

      it.effect("loads the tokens of the account's transfers, the UTC dates they fall on and how many there are", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { account } = yield* (yield* AccountsRepo).findOrCreate("dates")
          const own = "0x00000000000000000000000000000000000000d1"
          const second = "0x00000000000000000000000000000000000000d2"
          yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${account.id}, ${own}, ${own})`
          const at = [
            [1, TOKEN, "2024-03-09T23:59:59.999Z"],
            [2, TOKEN, "2024-03-10T00:00:00.000Z"],
            [3, second, "2024-03-10T12:00:00.000Z"],
            [4, TOKEN, "2024-03-10T23:59:59.000Z"],
            [5, second, "2025-01-01T00:00:00.000Z"]
          ] as const
          yield* sql`INSERT INTO token_transfers ${
            sql.insert(at.map(([block, token, time]) => ({
              chain_id: CHAIN,
              tx_hash: `0x${(0xd000 + block).toString(16).padStart(64, "0")}`,
              log_index: 0,
              block,
              block_hash: `0x${block.toString(16).padStart(64, "0")}`,
              block_time: new Date(time),
              token_key: token,
              from_key: OTHER,
              to_key: own,
              from_address: OTHER,
              to_address: own,
              raw: "1"
            })))
          }`
          const inputs = yield* LedgerInputs
          const all = yield* inputs.load(account.id, CHAIN)
          expect(all.dates).toEqual(["2024-03-09", "2024-03-10", "2025-01-01"])
          expect(all.tokens.map((token) => token.key)).toEqual([TOKEN, second].sort())
          expect(all.transferCount).toBe(5)
          // After a position: the transfers after it, with the tokens and dates the position already knew.
          const since = yield* inputs.load(account.id, CHAIN, {
            block: 3,
            logIndex: 0,
            tokenKeys: [TOKEN],
            dates: ["2024-03-09"]
          })
          expect(since.dates).toEqual(["2024-03-09", "2024-03-10", "2025-01-01"])
          expect(since.tokens.map((token) => token.key)).toEqual([TOKEN, second].sort())
          expect(since.transferCount).toBe(2)
        }))
    })
  })
}
