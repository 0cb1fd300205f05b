import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const FINAL = 20_000

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(ChainStore.Default, database), { timeout: 120_000 })((it) => {
      it.effect("blocks becoming final settle their rows by the provisional rows' index, not a walk of the chain", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // 20,000 final transfers, then five provisional ones in the blocks after them.
          yield* sql`
            INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                         from_key, to_key, from_address, to_address, raw, provisional)
            SELECT ${CHAIN}, '0x' || lpad(to_hex(i), 64, '0'), 0, i, '0x' || lpad(to_hex(i), 64, '0'),
                   to_timestamp(1700000000 + i), '0x' || lpad('aa', 40, '0'), '0x' || lpad('b1', 40, '0'),
                   '0x' || lpad('b2', 40, '0'), '0x' || lpad('b1', 40, '0'), '0x' || lpad('b2', 40, '0'), 1,
                   i > ${FINAL}
            FROM generate_series(1, ${FINAL + 5}) AS s(i)`
          yield* sql`ANALYZE token_transfers`
          const plan = yield* sql<{ "QUERY PLAN": string }>`
            EXPLAIN UPDATE token_transfers SET provisional = false
            WHERE chain_id = ${CHAIN} AND provisional AND block <= ${FINAL + 2}`
          expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("token_transfers_provisional")

          yield* (yield* ChainStore).writeBatch(CHAIN, { finalizedThrough: FINAL + 2 })
          const left = yield* sql<{ block: string }>`
            SELECT block FROM token_transfers WHERE chain_id = ${CHAIN} AND provisional ORDER BY block`
          expect(left.map((row) => Number(row.block))).toEqual([FINAL + 3, FINAL + 4, FINAL + 5])
        }))
    })
  })
}
