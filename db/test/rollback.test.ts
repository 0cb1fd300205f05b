import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { accountWatching } from "@scaledger/db/testing/Watching"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const TOKEN = hex40(0xa000)
const OTHER_TOKEN = hex40(0xb000)

for (const [name, database] of backends) {
  describe(name, () => {
    layer(
      Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default, ChainStore.Default), database),
      { timeout: 60_000 }
    )((it) => {
      it.effect("a re-org's rollback asks for new builds of the ledgers that read what it dropped, and only those", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const accountWith = (accountName: string, address: string) => accountWatching(accountName, address, CHAIN)
          // The receiver got a transfer in block 12; the holder holds a token whose multiplier step block 11
          // activated; the bystander holds another token, bought at block 5, below the fork.
          const receiver = yield* accountWith("receiver", hex40(1))
          const holder = yield* accountWith("holder", hex40(2))
          yield* accountWith("bystander", hex40(3))
          const transfer = (n: number, block: number, token: string, to: string) =>
            sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                             from_key, to_key, from_address, to_address, raw)
                VALUES (${CHAIN}, ${hash(n)}, 0, ${block}, ${hash(1000 + block)}, now(), ${token},
                        ${hex40(0)}, ${to}, ${hex40(0)}, ${to}, 1)`
          yield* transfer(1, 5, OTHER_TOKEN, hex40(3))
          yield* transfer(2, 6, TOKEN, hex40(2))
          yield* transfer(3, 12, TOKEN, hex40(1))
          yield* sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                                                     kind, status, source, block, block_time)
                     VALUES (${CHAIN}, ${TOKEN}, '2026-11-02T00:00:00Z', '1000000000000000000',
                             '1010000000000000000', 'dividend', 'active', 'event_log', 11, now())`
          // Every ledger built and current.
          yield* sql`INSERT INTO ledger_builds (account_id, requested_version, built_version, built_at)
                     SELECT id, 1, 1, now() FROM accounts`
          const due = Effect.map(
            sql<{ account_id: string }>`
              SELECT account_id FROM ledger_builds WHERE requested_version > built_version ORDER BY account_id`,
            (rows) => rows.map((row) => row.account_id)
          )
          expect(yield* due).toEqual([])

          // A re-org back to block 10: the receiver's transfer and the step's activation are gone, and the new
          // branch holds nothing of theirs.
          yield* (yield* ChainStore).rollbackAbove(CHAIN, 10)
          expect(yield* sql`SELECT tx_hash FROM token_transfers WHERE block > 10`).toEqual([])
          expect(yield* due).toEqual([receiver, holder].sort())
        }))
    })
  })
}
