/**
 * The chain record's high-volume inserts (a backfill's blocks and transfers), as one JSON parameter per few
 * thousand rows unpacked by `json_to_recordset`: about twice as fast as multi-row `VALUES` on PostgreSQL and PGlite
 * (5,000 transfers: 0.3–0.45 s against 0.77 s on a loaded 2-core machine), with the same conflict rules.
 */
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Array as Arr, Effect } from "effect"
import type { BlockRow, TransferRow } from "./ChainRows.js"
import { key } from "./ChainRows.js"

/**
 * Times travel as epoch milliseconds (cheaper to write and to read than ISO text); `to_timestamp` keeps them to the
 * microsecond, so whole milliseconds arrive exact.
 */
const fromMs = (sql: SqlClient.SqlClient) => sql`to_timestamp(r.time_ms / 1000)`

/** Rows per statement: keeps one parameter to a few megabytes. */
const JSON_CHUNK = 5_000

const chunked = <A>(
  rows: ReadonlyArray<A>,
  insert: (json: string) => Effect.Effect<unknown, SqlError>
) => Effect.forEach(Arr.chunksOf(rows, JSON_CHUNK), (chunk) => insert(JSON.stringify(chunk)), { discard: true })

export const insertBlocks = (sql: SqlClient.SqlClient, chainId: number, blocks: ReadonlyArray<BlockRow>) =>
  chunked(
    blocks.map((b) => ({ number: b.number, hash: b.hash, parent_hash: b.parentHash, time_ms: b.time.getTime() })),
    (json) =>
      sql`INSERT INTO chain_blocks (chain_id, number, hash, parent_hash, block_time)
          SELECT ${chainId}, r.number, r.hash, r.parent_hash, ${fromMs(sql)}
          FROM json_to_recordset(${json}::json) AS r(number bigint, hash text, parent_hash text, time_ms float8)
          ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash,
            parent_hash = coalesce(excluded.parent_hash, chain_blocks.parent_hash), block_time = excluded.block_time`
  )

export const insertTransfers = (
  sql: SqlClient.SqlClient,
  chainId: number,
  transfers: ReadonlyArray<TransferRow>,
  provisional: (block: number) => boolean
) =>
  chunked(
    transfers.map((t) => ({
      tx_hash: t.txHash,
      log_index: t.logIndex,
      block: t.block,
      block_hash: t.blockHash,
      time_ms: t.time.getTime(),
      token_key: key(t.token),
      from_key: key(t.from),
      to_key: key(t.to),
      from_address: t.from,
      to_address: t.to,
      raw: t.raw.toString(),
      provisional: provisional(t.block)
    })),
    (json) =>
      sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key,
            to_key, from_address, to_address, raw, provisional)
          SELECT ${chainId}, r.tx_hash, r.log_index, r.block, r.block_hash, ${fromMs(sql)}, r.token_key, r.from_key,
            r.to_key, r.from_address, r.to_address, r.raw, r.provisional
          FROM json_to_recordset(${json}::json) AS r(tx_hash text, log_index integer, block bigint, block_hash text,
            time_ms float8, token_key text, from_key text, to_key text, from_address text, to_address text,
            raw numeric, provisional boolean)
          ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`
  )
