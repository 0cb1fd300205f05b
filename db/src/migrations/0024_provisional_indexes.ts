import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The rows still provisional (newer than the finality depth), by block: settling them as blocks become final, and
 * finding an account's first provisional block, read only those few rows. Without these, each settlement walked every
 * row of the chain up to the final block (1.9 s at 500,000 transfers, at every backfill batch and new head), so a
 * backfill slowed as the record grew.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (
    const table of [
      "token_transfers",
      "tx_receipts",
      "multiplier_announcements",
      "token_pause_events",
      "multiplier_changes"
    ]
  ) {
    yield* sql`CREATE INDEX ${sql(`${table}_provisional`)} ON ${sql(table)} (chain_id, block) WHERE provisional`
  }
})
