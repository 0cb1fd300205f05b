import type { SqlClient } from "@effect/sql"
import { Migrator } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import type { SqlError } from "@effect/sql/SqlError"
import { DataDir } from "@scaledger/domain/ConfigValues"
import { Config, type ConfigError, Effect, Layer, Option, Redacted } from "effect"
import * as Path from "node:path"
import { acquireDataDirLock, type DataDirLocked } from "./DataDirLock.js"
import { expireOrphanedLeases } from "./Leases.js"
import { migrations } from "./migrations/index.js"
import * as PgliteClient from "./PgliteClient.js"
import { pgTypes } from "./PgTypes.js"
import * as ReadChanges from "./ReadChanges.js"
import * as RoleLocks from "./RoleLocks.js"

export const DatabaseConfig = Config.all({
  /** Unset or empty: the embedded database. */
  url: Config.option(Config.redacted("DATABASE_URL")).pipe(
    Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
  ),
  dataDir: DataDir
})
export type DatabaseConfig = Config.Config.Success<typeof DatabaseConfig>

export type DatabaseTarget =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted }
  | { readonly _tag: "Pglite"; readonly dataDir: string | undefined }

export const targetOf = (config: DatabaseConfig): DatabaseTarget =>
  Option.match(config.url, {
    onSome: (url) => ({ _tag: "Postgres", url }),
    onNone: () => ({ _tag: "Pglite", dataDir: Path.resolve(config.dataDir) })
  })

/**
 * A `SqlClient` for the target, with `ReadChanges` (what changed, for the read caches) and `RoleLocks` (roles one
 * process plays at a time): PostgreSQL through node-postgres, or PGlite persisted under the data folder.
 */
export const clientLayer = (
  target: DatabaseTarget
): Layer.Layer<SqlClient.SqlClient | ReadChanges.ReadChanges | RoleLocks.RoleLocks, SqlError | DataDirLocked> => {
  if (target._tag === "Postgres") {
    return Layer.mergeAll(
      PgClient.layer({ url: target.url, types: pgTypes, applicationName: "scaledger" }),
      ReadChanges.postgres(target.url),
      RoleLocks.postgres(target.url)
    )
  }
  if (target.dataDir === undefined) return Layer.merge(PgliteClient.layer({}), RoleLocks.singleProcess)
  const dataDir = target.dataDir
  return Layer.merge(
    Layer.unwrapScoped(
      Effect.as(acquireDataDirLock(dataDir), PgliteClient.layer({ dataDir: Path.join(dataDir, "pglite") }))
    ),
    RoleLocks.singleProcess
  )
}

/** How many migrations this build knows: a database with fewer applied is not ready. */
export const migrationCount = Object.keys(migrations).length

export const migrate: Effect.Effect<
  ReadonlyArray<readonly [number, string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "scaledger_migrations" })

/**
 * The client with every migration applied before anything uses it; on the embedded database (one process) with the
 * leases of a process that died expired.
 */
export const layerWith = (target: DatabaseTarget) =>
  Layer.effectDiscard(
    target._tag === "Pglite" ? Effect.zipRight(migrate, expireOrphanedLeases) : Effect.asVoid(migrate)
  ).pipe(Layer.provideMerge(clientLayer(target)))

/** The database named by `DATABASE_URL` / `SCALEDGER_DATA_DIR`, migrated. */
export const layer: Layer.Layer<
  SqlClient.SqlClient,
  SqlError | DataDirLocked | Migrator.MigrationError | ConfigError.ConfigError
> = Layer.unwrapEffect(Effect.map(DatabaseConfig, (config) => layerWith(targetOf(config))))

export const describeTarget = (target: DatabaseTarget): string => {
  if (target._tag === "Pglite") {
    return target.dataDir === undefined
      ? "PGlite (in memory)"
      : `PGlite at ${target.dataDir}`
  }
  try {
    const url = new URL(Redacted.value(target.url))
    return `PostgreSQL at ${url.hostname}:${url.port || "5432"}${url.pathname}`
  } catch {
    return "PostgreSQL"
  }
}
