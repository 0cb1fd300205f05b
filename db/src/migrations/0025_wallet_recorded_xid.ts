import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transaction that added each wallet, as `token_transfers.recorded_xid` is for transfers: the classification
 * scan, once it has made a complete pass, looks only at transfers recorded and wallets added since that pass's
 * snapshot instead of joining every transfer of the chain again.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE wallets ADD COLUMN recorded_xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint)`
})
