import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { monitorPass } from "@scaledger/workers/alerts/AlertMonitor"
import { Effect, TestClock } from "effect"
import { accountWatching, MonitorServices } from "../support/WatchedAccounts.js"

const WAD = 10n ** 18n
const ZERO = "0x0000000000000000000000000000000000000000"

const alertsOf = (accountId: string, kind: "token-paused" | "accrued-income" | "oracle-paused") =>
  Effect.map(
    Effect.flatMap(AlertsStore, (store) => store.list(accountId, { kind }, { beforeSeq: undefined, limit: 10 })),
    (page) => page.alerts.map((a) => a.resolvedAt === null ? "open" : "resolved")
  )

const holding = (chain: number, token: string, symbol: string, address: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
               VALUES (${chain}, ${token}, ${token}, ${symbol}, true, true)`
    yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                            from_key, to_key, from_address, to_address, raw)
               VALUES (${chain}, '0xf1', 0, 5, '0xb', '2026-11-02T00:00:00Z', ${token}, ${ZERO},
                       ${address}, ${ZERO}, ${address}, ${String(10n * WAD)})`
  })

describe("a cause rolled back by a re-org and recorded again (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("a pause replayed after a re-org is the same alert: not raised (delivered) a second time", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4545
        const token = "0x00000000000000000000000000000000000bee05"
        const watching = yield* accountWatching("reorg-pause", "0x00000000000000000000000000000000000000d5", chain)
        yield* holding(chain, token, "AAPL", watching.address)
        yield* TestClock.setTime(Date.parse("2026-11-20T15:30:00Z"))
        const paused =
          sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                           VALUES (${chain}, '0xpause', 0, 300, '2026-11-20T15:00:00Z', ${token}, 'Paused')`
        yield* paused
        expect(yield* monitorPass).toBe(1)
        // A re-org below block 300 rolls the event back; the pass in between sees no pause.
        yield* sql`DELETE FROM token_pause_events WHERE chain_id = ${chain} AND block > 299`
        yield* monitorPass
        // The same transaction is mined again on the new branch.
        yield* paused
        expect(yield* monitorPass).toBe(0)
        expect(yield* alertsOf(watching.id, "token-paused")).toEqual(["open"])
      }))

    it.effect("a dividend step replayed after a re-org keeps its one alert open for its window", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4646
        const token = "0x00000000000000000000000000000000000bee06"
        const watching = yield* accountWatching("reorg-step", "0x00000000000000000000000000000000000000d6", chain)
        yield* holding(chain, token, "AAPL", watching.address)
        yield* sql`INSERT INTO chain_blocks (chain_id, number, hash, block_time)
                   VALUES (${chain}, 60, '0x60', '2026-11-03T14:05:00Z')`
        yield* sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                                                   kind, status, source, block, block_time)
                   VALUES (${chain}, ${token}, '2026-11-03T14:00:00Z', ${String(WAD)}, ${String(WAD + WAD / 100n)},
                           'dividend', 'active', 'chain_storage', 50, '2026-11-03T14:00:00Z')`
        yield* TestClock.setTime(Date.parse("2026-11-03T14:05:05Z"))
        expect(yield* monitorPass).toBe(1)
        // A re-org below block 50: the step is pending again until the new branch reaches it.
        yield* sql`UPDATE multiplier_changes SET status = 'pending', source = NULL, block = NULL, block_time = NULL
                   WHERE chain_id = ${chain} AND block > 49`
        yield* monitorPass
        yield* sql`UPDATE multiplier_changes SET status = 'active', source = 'chain_storage', block = 51,
                          block_time = '2026-11-03T14:00:00Z' WHERE chain_id = ${chain}`
        expect(yield* monitorPass).toBe(0)
        // One alert, open again (its 7 days have not passed), never delivered twice.
        expect(yield* alertsOf(watching.id, "accrued-income")).toEqual(["open"])
      }))
  })
})
