import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { invalidateLedgers } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
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
const TOKEN = hex40(0xa000)

for (const [name, database] of backends) {
  describe(name, () => {
    layer(
      Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default, LedgerStore.Default), database),
      { timeout: 60_000 }
    )((it) => {
      it.effect("a build asked for by the account's own movements is taken before older ones asked for by a token", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* LedgerStore
          const walletOf = (accountName: string, address: string) => accountWatching(accountName, address, CHAIN)
          const holder = yield* walletOf("holder", hex40(1))
          const mover = yield* walletOf("mover", hex40(2))
          // The holder holds the token (a purchase recorded earlier).
          yield* sql`
            INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                         from_key, to_key, from_address, to_address, raw)
            VALUES (${CHAIN}, ${`0x${"1".padStart(64, "0")}`}, 0, 1, ${`0x${"1".padStart(64, "0")}`}, now(), ${TOKEN},
                    ${hex40(0)}, ${hex40(1)}, ${hex40(0)}, ${hex40(1)}, 1)`

          // First a token-wide request (a price round, a multiplier step), then a movement of the mover's wallet.
          yield* invalidateLedgers({ chainId: CHAIN, tokens: [TOKEN] })
          yield* invalidateLedgers({ chainId: CHAIN, addresses: [hex40(2)] })
          const rows = yield* sql<{ account_id: string; requested_version: string; movement_version: string }>`
            SELECT account_id, requested_version, movement_version FROM ledger_builds ORDER BY requested_at`
          expect(rows.map((r) => [r.account_id, Number(r.movement_version) === Number(r.requested_version)]))
            .toEqual([[holder, false], [mover, true]])

          expect((yield* store.claim("worker", 1, 60, 0)).map((due) => due.accountId)).toEqual([mover])
          expect((yield* store.claim("worker", 1, 60, 0)).map((due) => due.accountId)).toEqual([holder])

          // A token-wide request after a movement keeps the movement's priority until a build covers it.
          yield* sql`
            INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                         from_key, to_key, from_address, to_address, raw)
            VALUES (${CHAIN}, ${`0x${"2".padStart(64, "0")}`}, 0, 2, ${`0x${"2".padStart(64, "0")}`}, now(), ${TOKEN},
                    ${hex40(0)}, ${hex40(2)}, ${hex40(0)}, ${hex40(2)}, 1)`
          yield* sql`UPDATE ledger_builds SET built_version = requested_version, built_at = now() - interval '1 hour',
                       lease_owner = NULL, lease_until = NULL`
          yield* invalidateLedgers({ chainId: CHAIN, addresses: [hex40(1)] })
          yield* invalidateLedgers({ chainId: CHAIN, tokens: [TOKEN] })
          // The mover's request, by the token alone, is the older one.
          yield* sql`UPDATE ledger_builds SET requested_at = requested_at - interval '1 minute' WHERE account_id = ${mover}`
          expect((yield* store.claim("worker", 1, 60, 0)).map((due) => due.accountId)).toEqual([holder])
          expect((yield* store.claim("worker", 1, 60, 0)).map((due) => due.accountId)).toEqual([mover])
        }))
    })
  })
}
