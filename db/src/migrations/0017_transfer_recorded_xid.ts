import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transaction that recorded each transfer (`pg_current_xact_id()`, as a bigint), so an incremental ledger build
 * can tell whether a transfer was recorded at or before its checkpoint's position since the checkpoint was made (a
 * backfill behind the live recorder) by looking only at transfers recorded since, instead of counting all of the
 * account's transfers. BRIN: transaction ids grow with the table's append order, and the index costs a backfill
 * next to nothing.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE token_transfers
               ADD COLUMN recorded_xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint)`
  yield* sql`CREATE INDEX token_transfers_recorded ON token_transfers USING brin (recorded_xid)`
})
