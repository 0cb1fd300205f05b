import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The newest build asked for only by the classifier while the account still had transfers queued for it
 * (`deferred_version`; 0: none). Such a build may wait longer than others (`LEDGER_CLASSIFYING_INTERVAL_SECONDS`):
 * a classification run over a long history then rebuilds the account every so often instead of after each batch,
 * each build applying all the events behind the first transfer still queued. A request of any other kind is newer
 * than it, and so taken as promptly as before.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ledger_builds ADD COLUMN deferred_version bigint NOT NULL DEFAULT 0`
})
