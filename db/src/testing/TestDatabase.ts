import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import type { Scope } from "effect"
import { Config, Effect, Layer, Redacted } from "effect"
import * as Database from "../Database.js"
import { randomBase62 } from "../Ids.js"
import { pgTypes } from "../PgTypes.js"
import type * as RoleLocks from "../RoleLocks.js"

/** Where tests find PostgreSQL: `DATABASE_URL`, else the project machines' local server. */
export const AdminUrl = Config.string("DATABASE_URL").pipe(
  Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres")
)

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const unreachable = (url: string, cause: unknown) =>
  new Error(
    `PostgreSQL is not reachable at ${new URL(url).host} (${String(cause)}). The tests need a real PostgreSQL: ` +
      `set DATABASE_URL to a server where the user may create databases, or start the machine's cluster with ` +
      `'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start'.`
  )

/**
 * A fresh PostgreSQL database for one test file, migrated, dropped when the layer is released. Fails loudly
 * (never skips) when no server answers.
 */
export const postgresUrl: Effect.Effect<string, never, Scope.Scope> = Effect.gen(function*() {
  const adminUrl = yield* Effect.orDie(AdminUrl)
  const name = `scaledger_test_${randomBase62(10).toLowerCase()}`
  const admin = PgClient.layer({ url: Redacted.make(adminUrl), types: pgTypes, maxConnections: 1 })
  const runAdmin = (statement: string) =>
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(admin))
  yield* Effect.acquireRelease(
    runAdmin(`CREATE DATABASE "${name}"`).pipe(Effect.mapError((cause) => unreachable(adminUrl, cause)), Effect.orDie),
    () => Effect.ignore(runAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
  )
  return withDatabase(adminUrl, name)
})

export const postgres: Layer.Layer<SqlClient.SqlClient | RoleLocks.RoleLocks> = Layer.unwrapScoped(
  Effect.map(postgresUrl, (url) => Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie))
)

/** An in-memory PGlite database, migrated. */
export const pglite: Layer.Layer<SqlClient.SqlClient | RoleLocks.RoleLocks> = Database.layerWith({
  _tag: "Pglite",
  dataDir: undefined
}).pipe(
  Layer.orDie
)
