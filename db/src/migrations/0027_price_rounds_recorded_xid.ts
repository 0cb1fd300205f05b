import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transaction that recorded each price round, as `token_transfers.recorded_xid` is for transfers: the ledger
 * worker keeps the rounds it read and, at its next build, reads only the rounds recorded since (a B-tree, so the
 * read stays an index range however recently the rounds were written).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE price_rounds ADD COLUMN recorded_xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint)`
  yield* sql`CREATE INDEX price_rounds_recorded ON price_rounds (chain_id, recorded_xid)`
})
