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
const SGOV = "0x000000000000000000000000000000000005e9e0"
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

      it.effect("recent dividend steps: only those that raised the multiplier, weighed by the wallets watched then", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const sources = yield* AlertSources
          const { account } = yield* (yield* AccountsRepo).findOrCreate("alert-steps")
          // X watched since 1 November; Y added on 20 November, its history (a transfer in on 2 November) backfilled.
          yield* sql`INSERT INTO wallets (account_id, address, address_key, watching_from_at)
                     VALUES (${account.id}, ${X}, ${X}, '2026-11-01T00:00:00Z'),
                            (${account.id}, ${Y}, ${Y}, '2026-11-20T00:00:00Z')`
          let n = 100
          const into = (to: string, tokens: bigint, block: number) => {
            const hash = `0x${(++n).toString(16).padStart(64, "0")}`
            return sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                         token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN_A}, ${hash}, 0, ${block}, ${hash}, '2026-11-02T00:00:00Z', ${SGOV}, ${OTHER},
                         ${to}, ${OTHER}, ${to}, ${(tokens * WAD).toString()})`
          }
          yield* into(X, 3n, 10)
          yield* into(Y, 5n, 11)
          yield* sql`INSERT INTO chain_blocks (chain_id, number, hash, block_time)
                     VALUES (${CHAIN_A}, 40, '0x40', '2026-11-22T00:00:00Z')`
          const step = (day: string, from: bigint, to: bigint, block: number) =>
            sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                  kind, status, block)
                VALUES (${CHAIN_A}, ${SGOV}, ${`${day}T00:00:00Z`}, ${from.toString()}, ${to.toString()},
                  'dividend', 'active', ${block})`
          const m = (thousandths: bigint) => (WAD * thousandths) / 1000n
          yield* step("2026-11-10", m(1000n), m(1002n), 20) // X watched, Y not yet: X's 3 only
          yield* step("2026-11-15", m(1002n), m(1001n), 25) // lower: no income, no alert
          yield* step("2026-11-21", m(1001n), m(1003n), 30) // both watched: 8
          const steps = (yield* sources.recentDividendSteps([account.id], 30)).get(account.id) ?? []
          expect(steps.map((s) => [s.effectiveAt.toISOString().slice(0, 10), s.balance])).toEqual([
            ["2026-11-10", (3n * WAD).toString()],
            ["2026-11-21", (8n * WAD).toString()]
          ])
        }))
    })
  })
}
