import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { arrayLiteral, insertTransfers } from "@scaledger/db/chain/BulkInsert"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

/** Text an array literal must quote or escape, beside the bare hex and digits a backfill sends. */
const awkward = [
  "0xAbC123",
  "",
  "NULL",
  "null",
  "a,b",
  "{braces}",
  "with space",
  "quote \" inside",
  "back\\slash",
  "\\\"",
  "Müller 株式 📈",
  "-12.5e+3",
  " leading",
  "tab\there",
  "line\nbreak"
]

for (const [name, database] of backends) {
  describe(name, () => {
    layer(database, { timeout: 60_000 })((it) => {
      it.effect("an array literal gives back every element as sent, nulls as nulls", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const values = [...awkward, null]
          const rows = yield* sql<{ value: string | null; n: number }>`
            SELECT u.value, u.n::integer AS n FROM unnest(${
            arrayLiteral(values)
          }::text[]) WITH ORDINALITY AS u(value, n)
            ORDER BY u.n`
          expect(rows.map((r) => r.value)).toEqual(values)
          const [numbers] = yield* sql<{ total: string; flags: string; big: string }>`
            SELECT sum(x)::text AS total, (SELECT string_agg(b::text, ',') FROM unnest(${
            arrayLiteral([true, false])
          }::boolean[]) AS b) AS flags,
              (SELECT max(v)::text FROM unnest(${
            arrayLiteral(["115792089237316195423570985008687907853269984665640564039457584007913129639935"])
          }::numeric[]) AS v) AS big
            FROM unnest(${arrayLiteral([1, 2, 1_700_000_000_123])}::float8[]) AS x`
          expect(numbers).toEqual({
            total: "1700000000126",
            flags: "true,false",
            big: "115792089237316195423570985008687907853269984665640564039457584007913129639935"
          })
        }))

      it.effect("a chunk of transfers is stored column by column, each row as it was", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const transfers = [0, 1, 2].map((i) => ({
            txHash: `0x${String(i).padStart(64, "a")}`,
            logIndex: i,
            block: 100 + i,
            blockHash: `0x${String(i).padStart(64, "b")}`,
            time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678) + i * 1000),
            token: "0x00000000000000000000000000000000000000Aa",
            from: `0x${String(i).padStart(40, "c")}`,
            to: "0x00000000000000000000000000000000000000B1",
            raw: 10n ** 30n + BigInt(i)
          }))
          yield* insertTransfers(sql, 7, transfers, (block) => block > 101)
          const rows = yield* sql<{
            tx_hash: string
            log_index: number
            block: string
            time_ms: string
            token_key: string
            to_key: string
            to_address: string
            raw: string
            provisional: boolean
          }>`SELECT tx_hash, log_index, block, (extract(epoch FROM block_time) * 1000)::bigint::text AS time_ms,
               token_key, to_key, to_address, raw::text AS raw, provisional
             FROM token_transfers WHERE chain_id = 7 ORDER BY log_index`
          expect(rows.map((r) => [r.tx_hash, r.log_index, Number(r.block), Number(r.time_ms), r.raw, r.provisional]))
            .toEqual(
              transfers.map((t) => [t.txHash, t.logIndex, t.block, t.time.getTime(), t.raw.toString(), t.block > 101])
            )
          expect(rows[0]).toMatchObject({
            token_key: "0x00000000000000000000000000000000000000aa",
            to_key: "0x00000000000000000000000000000000000000b1",
            to_address: "0x00000000000000000000000000000000000000B1"
          })
        }))
    })
  })
}
