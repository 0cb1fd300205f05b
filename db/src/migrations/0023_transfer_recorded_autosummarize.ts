import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The BRIN index on `recorded_xid` skips only block ranges it has summarized; pages appended since are read by every
 * incremental build's check. Summarized as each range fills (autovacuum's work item), instead of at the next
 * insert-triggered vacuum, which on a large table comes after a fifth of its size in new rows.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER INDEX token_transfers_recorded SET (autosummarize = on)`
})
