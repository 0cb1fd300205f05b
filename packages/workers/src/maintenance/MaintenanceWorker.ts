import { TableMaintenance } from "@scaledger/db/TableMaintenance"
import { Duration, Effect, Layer, Schedule } from "effect"
import { asSingleton } from "../Singleton.js"

/** How often tables are checked against autovacuum's thresholds where no autovacuum runs. */
export const MAINTENANCE_CHECK = Duration.minutes(1)

/**
 * Vacuum and statistics where the database keeps none itself (PGlite; a server with `autovacuum = off`): a fiber of
 * this layer's scope that, every `interval`, vacuums and analyzes the tables past autovacuum's thresholds, one worker
 * process at a time. Where autovacuum runs it does nothing. A failed pass is logged and tried again next time.
 */
export const MaintenanceWorkerLayer = (interval: Duration.DurationInput = MAINTENANCE_CHECK) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const maintenance = yield* TableMaintenance
    const autovacuum = yield* maintenance.autovacuumRuns.pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(
          Effect.logWarning("maintenance: cannot tell whether autovacuum runs; maintaining tables", cause),
          false
        )
      )
    )
    if (autovacuum) return
    yield* Effect.logInfo(
      "maintenance: no autovacuum serves this database; worker processes vacuum and analyze tables, one at a time"
    )
    const pass = maintenance.pass.pipe(
      Effect.tap((steps) =>
        steps.length === 0 ? Effect.void : Effect.logDebug(
          `maintenance: ${
            steps.map((s) => `${s.table} (${[s.vacuum ? "vacuum" : "", s.analyze ? "analyze" : ""].join(" ").trim()})`)
              .join(", ")
          }`
        )
      ),
      Effect.catchAllCause((cause) => Effect.logWarning("maintenance: pass failed", cause))
    )
    // The first pass after one interval: a starting service has its own work to do first.
    yield* Effect.sleep(interval).pipe(
      Effect.zipRight(Effect.repeat(pass, Schedule.spaced(interval))),
      asSingleton("table maintenance"),
      Effect.forkScoped
    )
  })).pipe(Layer.provide(TableMaintenance.Default))
