import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The newest build asked for by movements of the account's own addresses (a live block, a backfill landing), as
 * `replay_version` is for replays: such builds are taken before those asked for by classifications, prices and
 * multiplier steps, so a wallet's new block is not queued behind every account a long classification run touches.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ledger_builds ADD COLUMN movement_version bigint NOT NULL DEFAULT 0`
})
