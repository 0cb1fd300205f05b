import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { MaintenanceWorkerLayer } from "@scaledger/workers/maintenance/MaintenanceWorker"
import { Effect, Layer, Schedule } from "effect"
import * as TestServices from "effect/TestServices"

// PGlite: no autovacuum, so the worker maintains the tables itself.
layer(TestDatabase.pglite, { timeout: 60_000 })((it) => {
  it.effect("the worker vacuums and analyzes a grown table on its own, at its interval", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE maintenance_worker_probe (n integer PRIMARY KEY)`
      yield* sql`INSERT INTO maintenance_worker_probe SELECT i FROM generate_series(1, 5000) AS s(i)`
      const counts = sql<{ vacuums: string; analyzes: string; reltuples: number }>`
        SELECT s.vacuum_count AS vacuums, s.analyze_count AS analyzes, c.reltuples::float8 AS reltuples
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'maintenance_worker_probe'`
      const maintained = yield* Effect.scoped(
        Effect.gen(function*() {
          yield* Layer.build(MaintenanceWorkerLayer("200 millis"))
          return yield* counts.pipe(
            Effect.filterOrFail((rows) => Number(rows[0]?.vacuums ?? 0) > 0, () => "not yet"),
            Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo("20 seconds")))
          )
        })
      ).pipe(TestServices.provideLive)
      expect(Number(maintained[0]?.analyzes)).toBeGreaterThan(0)
      expect(maintained[0]?.reltuples).toBe(5000)
    }))
})
