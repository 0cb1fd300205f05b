import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One token's events in chain order (`GET /v1/events?token=`, the MCP tool `get_activity { symbol }`), without
  // walking the whole account's history; the symbol is matched in any case.
  yield* sql`CREATE INDEX ledger_events_token ON ledger_events (account_id, upper(token), ord)`
})
