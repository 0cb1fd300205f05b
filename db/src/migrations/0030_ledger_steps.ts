import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Each token's dividend steps as the account's stored lot rows cite them (`Ledger.storedSteps`): an open lot stores
 * a step's income as [index position, USD] and the step itself (its event, time, rate quote and price round) is
 * stored here once, instead of once per lot and step. Lot rows stored before keep every component whole and are
 * read as they are, so nothing is rebuilt.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ledger_steps (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      token text NOT NULL,
      steps json NOT NULL,
      PRIMARY KEY (account_id, token)
    )`
})
