import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Why a reader's chain reads fail past the retry budget. */
export type ReadFailureCause = "unreachable" | "rate_limited" | "range" | "rpc_error"

export interface ReadHealthRow {
  readonly chainId: number
  readonly reader: string
  readonly status: "ok" | "degraded"
  readonly cause: ReadFailureCause | null
  readonly error: string | null
  readonly since: Date
}

interface DbRow {
  readonly chain_id: number
  readonly reader: string
  readonly status: "ok" | "degraded"
  readonly cause: ReadFailureCause | null
  readonly error: string | null
  readonly since: Date
}

const toRow = (row: DbRow): ReadHealthRow => ({
  chainId: Number(row.chain_id),
  reader: row.reader,
  status: row.status,
  cause: row.cause,
  error: row.error,
  since: row.since
})

/** Whether each chain reader's reads work (migration 0014): one row per chain and reader, its latest state. */
export class ReadHealthStore extends Effect.Service<ReadHealthStore>()("@scaledger/db/ReadHealthStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const all = (chainId: number) =>
      Effect.map(
        sql<DbRow>`SELECT * FROM chain_read_health WHERE chain_id = ${chainId} ORDER BY reader`,
        (rows) => rows.map(toRow)
      )

    const set = (row: ReadHealthRow) =>
      sql`INSERT INTO chain_read_health (chain_id, reader, status, cause, error, since)
          VALUES (${row.chainId}, ${row.reader}, ${row.status}, ${row.cause}, ${row.error}, ${row.since})
          ON CONFLICT (chain_id, reader) DO UPDATE SET status = excluded.status, cause = excluded.cause,
            error = excluded.error, since = excluded.since, updated_at = now()`

    /** Every reader whose reads are failing now, on any chain. */
    const degraded = Effect.map(
      sql<DbRow>`SELECT * FROM chain_read_health WHERE status = 'degraded' ORDER BY chain_id, reader`,
      (rows) => rows.map(toRow)
    )

    return { all, set, degraded } as const
  })
}) {}
