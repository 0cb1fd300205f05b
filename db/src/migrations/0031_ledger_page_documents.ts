import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Event and disposal pages hold their rows in the form of `StoredPage` (a line of JSON per row citing the page's
 * dictionary of shared values, then the dictionary) instead of lines of filter fields and each row's whole JSON.
 * Pages of the earlier form are dropped and every account's ledger is replayed (derived records; reads answer 409
 * meanwhile, as after 0028).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM ledger_event_pages`
  yield* sql`DELETE FROM ledger_disposal_pages`
  yield* sql`
    UPDATE ledger_builds SET requested_version = requested_version + 1, replay_version = requested_version + 1,
      requested_at = now()`
})
