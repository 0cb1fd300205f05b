import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { afterPass, monitorPassOf, passDue } from "@scaledger/workers/alerts/AlertMonitor"
import { Effect, TestClock } from "effect"
import { accountWatching, MonitorServices } from "../support/WatchedAccounts.js"

const WAD = 10n ** 18n
const ZERO = "0x0000000000000000000000000000000000000000"

describe("a feed falling silent (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("the block whose time makes it stale brings a pass at once, not only the safety pass", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4848
        const token = "0x00000000000000000000000000000000000bee08"
        const watching = yield* accountWatching("silent-feed", "0x00000000000000000000000000000000000000d8", chain)
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${chain}, ${token}, ${token}, 'MU', true, true)`
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${chain}, '0xc8', 0, 5, '0xb', '2026-11-02T00:00:00Z', ${token}, ${ZERO},
                           ${watching.address}, ${ZERO}, ${watching.address}, ${String(3n * WAD)})`
        yield* sql`INSERT INTO price_rounds (chain_id, feed_key, round_id, feed_address, token_key, answer, decimals,
                                             started_at, updated_at, answered_in_round)
                   VALUES (${chain}, 'feed-mu', 1, 'feed-mu', ${token}, 100, 8, '2026-11-20T15:00:00Z',
                           '2026-11-20T15:00:00Z', 1)`
        const block = (n: number, time: string) =>
          sql`INSERT INTO chain_blocks (chain_id, number, hash, block_time) VALUES (${chain}, ${n}, ${`0x${n}`}, ${time})`
        yield* block(10, "2026-11-20T15:10:00Z")
        yield* TestClock.setTime(Date.parse("2026-11-20T15:10:05Z"))
        const due = yield* passDue({ mark: undefined, at: 0 })
        const pass = yield* monitorPassOf("all")
        const state = afterPass({ mark: undefined, at: 0 }, due, pass.failed, pass.staleAt)
        expect(yield* Effect.flatMap(AlertsStore, (store) => store.open(watching.id))).toEqual([])
        // A block of 15:59: still fresh; nothing to do.
        yield* block(11, "2026-11-20T15:59:00Z")
        yield* TestClock.adjust("2 seconds")
        expect((yield* passDue(state)).due).toBe(false)
        // The block of 16:00 (60 session minutes of silence), 2 s later: a pass is due now, which raises it.
        yield* block(12, "2026-11-20T16:00:00Z")
        yield* TestClock.adjust("2 seconds")
        const next = yield* passDue(state)
        expect(next.due).toBe(true)
        expect((yield* monitorPassOf(next.scope)).raised).toBe(1)
        const open = yield* Effect.flatMap(AlertsStore, (store) => store.open(watching.id))
        expect(open.map((a) => a.kind)).toEqual(["oracle-paused"])
      }))
  })
})
