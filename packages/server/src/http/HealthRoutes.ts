import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import * as Database from "@scaledger/db/Database"
import { Effect, Layer } from "effect"

/** `/healthz`: the process answers. `/readyz`: the database answers and every migration has run. No auth. */
export const HealthRoutes = Layer.mergeAll(
  HttpLayerRouter.add("GET", "/healthz", Effect.succeed(HttpServerResponse.unsafeJson({ status: "ok" }))),
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* router.add(
        "GET",
        "/readyz",
        sql<{ applied: string }>`SELECT count(*) AS applied FROM scaledger_migrations`.pipe(
          Effect.map(([row]) => Number(row?.applied ?? 0)),
          Effect.map((applied) =>
            applied >= Database.migrationCount
              ? HttpServerResponse.unsafeJson({ status: "ready", migrations: applied })
              : HttpServerResponse.unsafeJson({ status: "migrating", migrations: applied }, { status: 503 })
          ),
          Effect.catchAll((error) =>
            Effect.as(
              Effect.logWarning("readiness check failed", error),
              HttpServerResponse.unsafeJson({ status: "database_unreachable" }, { status: 503 })
            )
          )
        )
      )
    })
  )
)
