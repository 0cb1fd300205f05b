import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const [CHAIN_A, CHAIN_B] = [31337, 46630]
const X = "0x00000000000000000000000000000000000000a1"
const Y = "0x00000000000000000000000000000000000000a2"
const OTHER = "0x00000000000000000000000000000000000000b1"
const AAPL = "0x00000000000000000000000000000000000aa91e"
const CRWD = "0x00000000000000000000000000000000000c3d00"
const WAD = 10n ** 18n

/**
 * The balances the alert causes are computed from (`held`, and the balance before a multiplier change): the account's
 * own addresses' transfers in minus out, per chain and token, net of transfers between its own addresses.
 */
for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, AlertSources.Default), database), {
      timeout: 120_000
    })((it) => {
      it.effect("held tokens and balances before a change: in minus out per chain and token, own moves net to zero", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const sources = yield* AlertSources
          const accounts = yield* AccountsRepo
          let n = 0
          const transfer = (chain: number, token: string, from: string, to: string, tokens: bigint, block: number) => {
            const hash = `0x${(++n).toString(16).padStart(64, "0")}`
            return sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                         token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${chain}, ${hash}, 0, ${block}, ${hash}, '2026-11-02T00:00:00Z', ${token}, ${from},
                         ${to}, ${from}, ${to}, ${(tokens * WAD).toString()})`
          }
          yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                     VALUES (${CHAIN_A}, ${AAPL}, ${AAPL}, 'AAPL', true, true)`
          const { account } = yield* accounts.findOrCreate("alert-sources")
          const { account: stranger } = yield* accounts.findOrCreate("alert-sources-other")
          for (const address of [X, Y]) {
            yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${account.id}, ${address}, ${address})`
          }
          yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${stranger.id}, ${OTHER}, ${OTHER})`

          yield* transfer(CHAIN_A, AAPL, OTHER, X, 10n, 1)
          yield* transfer(CHAIN_A, AAPL, X, Y, 4n, 2) // between own addresses: no change
          yield* transfer(CHAIN_A, AAPL, Y, OTHER, 3n, 3)
          yield* transfer(CHAIN_A, CRWD, OTHER, X, 2n, 4)
          yield* transfer(CHAIN_A, CRWD, X, OTHER, 2n, 5) // sold out: not held
          yield* transfer(CHAIN_B, AAPL, OTHER, Y, 5n, 1) // the same token address on another chain
          yield* sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                       kind, status, block)
                     VALUES (${CHAIN_A}, ${AAPL}, '2026-12-01T00:00:00Z', ${WAD.toString()}, ${(2n * WAD).toString()},
                       'split', 'pending', NULL),
                            (${CHAIN_A}, ${AAPL}, '2026-11-15T00:00:00Z', ${WAD.toString()}, ${(2n * WAD).toString()},
                       'split', 'pending', 3)`

          const heldBy = yield* sources.held([account.id, stranger.id])
          const held = heldBy.get(account.id) ?? []
          expect(held.map((h) => [h.chainId, h.tokenKey, h.symbol, h.balance]).sort()).toEqual([
            [CHAIN_A, AAPL, "AAPL", (7n * WAD).toString()],
            [CHAIN_B, AAPL, null, (5n * WAD).toString()]
          ])
          // The other side of the same transfers: what the stranger's address sent and received.
          expect(heldBy.has(stranger.id)).toBe(false)
          // Read for one account alone, the same.
          expect((yield* sources.held([account.id])).get(account.id)).toEqual(held)

          // A pending change weighs the whole balance; one at block 3 only what came before the block.
          const pendingBy = yield* sources.pendingChanges([stranger.id, account.id])
          expect(pendingBy.has(stranger.id)).toBe(false)
          const pending = pendingBy.get(account.id) ?? []
          expect(pending.map((c) => [c.chainId, c.tokenKey, c.block, c.balance])).toEqual([
            [CHAIN_A, AAPL, "3", (10n * WAD).toString()],
            [CHAIN_A, AAPL, null, (7n * WAD).toString()]
          ])
        }))
    })
  })
}
