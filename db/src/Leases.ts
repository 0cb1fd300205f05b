import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The tables of durable work that a worker leases while it does it (`lease_owner`, `lease_until`). */
const LEASED_TABLES = ["ledger_builds", "wallet_backfills", "transfer_classifications", "webhook_deliveries"] as const

/**
 * Expires every lease still running. Only for a database one process owns (the embedded one, behind the data
 * folder's lock): whatever holds a lease there is a process that is gone, and its work would otherwise wait out the
 * lease (a ledger build's, answering reads 409 meanwhile) after a crash.
 */
export const expireOrphanedLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let expired = 0
  for (const table of LEASED_TABLES) {
    const rows = yield* sql<{ n: string }>`
      WITH e AS (UPDATE ${sql(table)} SET lease_until = now() - interval '1 second' WHERE lease_until > now()
                 RETURNING 1)
      SELECT count(*) AS n FROM e`
    expired += Number(rows[0]?.n ?? 0)
  }
  if (expired > 0) yield* Effect.logInfo(`Expired ${expired} leases of a process that stopped without releasing them.`)
})
