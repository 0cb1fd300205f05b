import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { TableMaintenance } from "@scaledger/db/TableMaintenance"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer, Schedule } from "effect"
import * as TestServices from "effect/TestServices"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

/** The server publishes a backend's counters about a second after its transaction, up to ten when it stays busy. */
const untilCounted = <A>(check: Effect.Effect<A | undefined, unknown>) =>
  check.pipe(
    Effect.flatMap((found) => (found === undefined ? Effect.fail("not counted yet" as const) : Effect.succeed(found))),
    Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.upTo("30 seconds"))),
    TestServices.provideLive
  )

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(TableMaintenance.Default, database), { timeout: 60_000 })((it) => {
      it.effect("tells whether an autovacuum launcher serves the database", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const runs = yield* (yield* TableMaintenance).autovacuumRuns
          if (name === "PGlite") expect(runs).toBe(false)
          else {
            const [setting] = yield* sql<{ autovacuum: string }>`SELECT current_setting('autovacuum') AS autovacuum`
            expect(runs).toBe(setting?.autovacuum === "on")
          }
        }))

      it.effect("vacuums and analyzes a table past autovacuum's thresholds, then leaves it alone", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const maintenance = yield* TableMaintenance
          yield* sql`CREATE TABLE maintenance_probe (n integer PRIMARY KEY, note text NOT NULL)`
          yield* sql`INSERT INTO maintenance_probe SELECT i, 'row ' || i FROM generate_series(1, 20000) AS s(i)`
          yield* sql`DELETE FROM maintenance_probe WHERE n <= 5000`
          const probe = (steps: ReadonlyArray<{ readonly table: string }>) =>
            steps.find((s) => s.table === "public.maintenance_probe")
          const step = yield* untilCounted(Effect.map(maintenance.due, probe))
          expect(step).toEqual({ table: "public.maintenance_probe", vacuum: true, analyze: true })
          // Never analyzed: the planner has no row count yet.
          const [before] = yield* sql<{ reltuples: number }>`
            SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'maintenance_probe'`
          expect(before?.reltuples).toBe(-1)

          const done = yield* maintenance.pass
          expect(probe(done)).toEqual(step)
          const [after] = yield* sql<{ reltuples: number; vacuums: string; analyzes: string }>`
            SELECT c.reltuples::float8 AS reltuples, s.vacuum_count AS vacuums, s.analyze_count AS analyzes
            FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = 'maintenance_probe'`
          expect(after?.reltuples).toBe(15000)
          expect(Number(after?.vacuums)).toBe(1)
          expect(Number(after?.analyzes)).toBe(1)
          expect(probe(yield* maintenance.due)).toBeUndefined()
        }))
    })
  })
}
