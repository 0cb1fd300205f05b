import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"
import accounts from "./0001_accounts.js"

/** Every migration, keyed `<id>_<name>`; ids only grow, and a released migration is never edited. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_accounts": accounts
}
