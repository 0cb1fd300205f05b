import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { MarketReads } from "@scaledger/db/market/MarketReads"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const CHAIN = 31337
const TOKEN = "0x00000000000000000000000000000000000000c5"

layer(Layer.provideMerge(MarketReads.Default, TestDatabase.pglite), { timeout: 60_000 })("a token's pause", (it) => {
  it.effect("starts at its first paused fact, however many reads and events confirm it; ends at the unpause", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const reads = yield* MarketReads
      // An issuer-wide pause seen by a paused() read at block 676, then a Paused event at block 686.
      yield* sql`INSERT INTO token_pause_reads (chain_id, token_key, block, block_time, paused)
                 VALUES (${CHAIN}, ${TOKEN}, 676, '2026-11-29T01:00:00Z', true),
                        (${CHAIN}, ${TOKEN}, 680, '2026-11-29T01:10:00Z', true)`
      yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                 VALUES (${CHAIN}, '0xp1', 0, 686, '2026-11-29T01:20:00Z', ${TOKEN}, 'Paused')`
      const during = yield* reads.pauses(CHAIN, TOKEN, new Date("2026-11-29T12:00:00Z"))
      expect(during.token).toMatchObject({ paused: true, block: 676, since: new Date("2026-11-29T01:00:00Z") })
      yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                 VALUES (${CHAIN}, '0xp2', 0, 700, '2026-11-30T14:30:00Z', ${TOKEN}, 'Unpaused')`
      const after = yield* reads.pauses(CHAIN, TOKEN, new Date("2026-11-30T15:00:00Z"))
      expect(after.token).toMatchObject({ paused: false, block: 700 })
      // A new pause is a new episode.
      yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                 VALUES (${CHAIN}, '0xp3', 0, 710, '2026-11-30T18:00:00Z', ${TOKEN}, 'Paused')`
      const again = yield* reads.pauses(CHAIN, TOKEN, new Date("2026-11-30T19:00:00Z"))
      expect(again.token).toMatchObject({ paused: true, block: 710 })
    }))
})
