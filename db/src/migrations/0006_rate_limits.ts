import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Request counts per API key and fixed one-minute window, shared by every API process on one PostgreSQL (the
 * embedded database keeps its counts in memory instead). Rows older than a few minutes are deleted as new windows
 * start.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_limit_windows (
      limit_key text NOT NULL,
      window_start timestamptz NOT NULL,
      hits integer NOT NULL,
      PRIMARY KEY (limit_key, window_start)
    )`
  yield* sql`CREATE INDEX rate_limit_windows_start ON rate_limit_windows (window_start)`
})
