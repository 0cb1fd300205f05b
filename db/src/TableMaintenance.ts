import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A table past one of autovacuum's thresholds, and what it needs. */
export interface MaintenanceStep {
  /** Schema-qualified and quoted, ready for a statement. */
  readonly table: string
  readonly vacuum: boolean
  readonly analyze: boolean
}

/**
 * Vacuum and statistics where no autovacuum runs: PGlite (a single backend, no launcher) and a server started with
 * `autovacuum = off`. Without them the planner never learns a table grew (a query written for an index reads the
 * whole table instead), BRIN ranges stay unsummarized and the rows builds rewrite are never reclaimed. The
 * thresholds are autovacuum's defaults, from the server's own counters (`pg_stat_user_tables`).
 */
export class TableMaintenance extends Effect.Service<TableMaintenance>()("@scaledger/db/TableMaintenance", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Whether an autovacuum launcher serves the database: the process exists only while autovacuum is on. */
    const autovacuumRuns = Effect.map(
      sql<{ runs: boolean }>`
        SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS runs`,
      (rows) => rows[0]?.runs === true
    )

    /**
     * Tables past autovacuum's default thresholds: dead rows over 50 + 20 % of the live ones, rows inserted since
     * the last vacuum over 1,000 + 20 % (so insert-only tables get their visibility map and BRIN summaries), rows
     * changed since the last analyze over 50 + 10 %. Only the tables of the schema the migrations
     * wrote to (the connection's current one). Smallest first.
     */
    const due = Effect.map(
      sql<{ name: string; vacuum_due: boolean; analyze_due: boolean }>`
        SELECT name, vacuum_due, analyze_due FROM (
          SELECT format('%I.%I', schemaname, relname) AS name, n_live_tup + n_dead_tup AS size,
            n_dead_tup > 50 + 0.2 * n_live_tup OR n_ins_since_vacuum > 1000 + 0.2 * n_live_tup AS vacuum_due,
            n_mod_since_analyze > 50 + 0.1 * n_live_tup AS analyze_due
          FROM pg_stat_user_tables WHERE schemaname = current_schema()
        ) t
        WHERE vacuum_due OR analyze_due
        ORDER BY size, name`,
      (rows) => rows.map((r): MaintenanceStep => ({ table: r.name, vacuum: r.vacuum_due, analyze: r.analyze_due }))
    )

    /** Vacuums and/or analyzes one table; outside any transaction, as VACUUM must run. */
    const maintain = (step: MaintenanceStep) =>
      sql.unsafe(
        step.vacuum ? `VACUUM ${step.analyze ? "(ANALYZE) " : ""}${step.table}` : `ANALYZE ${step.table}`
      ).pipe(Effect.asVoid)

    /** One pass: every due table in turn. Returns what was done. */
    const pass = Effect.flatMap(due, (steps) => Effect.as(Effect.forEach(steps, maintain, { discard: true }), steps))

    return { autovacuumRuns, due, maintain, pass } as const
  })
}) {}
