import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Each token's dividend steps as the account's stored lot and disposal rows cite them (`Ledger.storedSteps`): a row
 * stores the steps its lot accrued as spans [from, to) of index positions, and each step (its event, time, rate
 * quote, price round and income per raw unit) is stored here once, instead of once per lot (and sale) and step.
 * Rows stored before keep every component whole and are read as they are, so nothing is rebuilt.
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
