import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { PGlite, type Results } from "@electric-sql/pglite"
import type { Scope } from "effect"
import { Chunk, Context, Effect, Layer, Stream } from "effect"
import { fork } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { POSTGRES_CONF } from "./PgliteSettings.js"
import { pgliteParsers } from "./PgTypes.js"
import * as ReadChanges from "./ReadChanges.js"
import type { ReadChangesShape } from "./ReadChanges.js"

export interface PgliteClientOptions {
  /** Folder the database persists to; omitted for an in-memory database. */
  readonly dataDir?: string | undefined
}

/**
 * A data folder that does not hold a database yet is created by a child process (`PgliteInit`), so that the memory
 * `initdb` leaves behind goes with that process instead of staying in this one.
 */
const initializeDataDir = (dataDir: string) =>
  Effect.async<void, SqlError>((resume) => {
    if (Fs.existsSync(Path.join(dataDir, "PG_VERSION"))) return resume(Effect.void)
    const here = fileURLToPath(import.meta.url)
    const child = fork(Path.join(Path.dirname(here), `PgliteInit${Path.extname(here)}`), [dataDir], {
      stdio: ["ignore", "ignore", "pipe", "ipc"]
    })
    let stderr = ""
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    child.once("error", (cause) =>
      resume(Effect.fail(new SqlError({ cause, message: `PGlite: cannot create ${dataDir}` }))))
    child.once("exit", (code) =>
      resume(
        code === 0 ? Effect.void : Effect.fail(
          new SqlError({
            cause: stderr.trim(),
            message: `PGlite: creating ${dataDir} failed (exit ${code}): ${stderr.trim()}`
          })
        )
      ))
  })

/**
 * A `SqlClient` over PGlite (PostgreSQL compiled to WebAssembly, in process). PGlite has a single session, so one
 * permit guards it: a statement outside a transaction holds it for that statement, a transaction holds it from
 * BEGIN to COMMIT, and nothing interleaves into someone else's transaction.
 */
export const make = (
  options: PgliteClientOptions
): Effect.Effect<
  { readonly client: Client.SqlClient; readonly changes: ReadChangesShape },
  SqlError,
  Scope.Scope | Reactivity.Reactivity
> =>
  Effect.gen(function*() {
    // Where no child can be started (or it fails), PGlite creates the folder in this process as before.
    if (options.dataDir !== undefined) yield* Effect.ignore(initializeDataDir(options.dataDir))
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create({
            ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
            postgresqlconf: POSTGRES_CONF,
            parsers: pgliteParsers
          }),
        catch: (cause) =>
          new SqlError({ cause, message: `PGlite: failed to open ${options.dataDir ?? "in-memory database"}` })
      }),
      (db) => Effect.promise(() => db.close())
    )
    const permit = yield* Effect.makeSemaphore(1)
    const compiler = PgClient.makeCompiler()

    const failed = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

    // Statements without parameters go through the simple protocol, which accepts several statements at once
    // (migrations); the extended protocol would reject them.
    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
      Effect.tryPromise({
        try: (): Promise<Array<Results<any>>> =>
          params.length === 0
            ? db.exec(sql, { rowMode })
            : db.query(sql, params as Array<unknown>, { rowMode }).then((result) => [result]),
        catch: failed
      })

    const rowsOf = (results: Array<Results<any>>): ReadonlyArray<any> =>
      results.length === 1 ? results[0]!.rows : results.map((result) => result.rows)

    class PgliteConnection implements Connection {
      constructor(private readonly inTransaction: boolean) {}

      private guard<A>(effect: Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> {
        return this.inTransaction ? effect : permit.withPermits(1)(effect)
      }

      execute(
        sql: string,
        params: ReadonlyArray<unknown>,
        transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) {
        const rows = Effect.map(query(sql, params, "object"), rowsOf)
        return this.guard(transformRows ? Effect.map(rows, transformRows) : rows)
      }
      executeRaw(sql: string, params: ReadonlyArray<unknown>) {
        return this.guard(
          Effect.map(query(sql, params, "object"), (results) => results.length === 1 ? results[0] : results)
        )
      }
      executeValues(sql: string, params: ReadonlyArray<unknown>) {
        return this.guard(Effect.map(query(sql, params, "array"), (results) =>
          results[results.length - 1]!.rows as ReadonlyArray<ReadonlyArray<unknown>>))
      }
      executeUnprepared(
        sql: string,
        params: ReadonlyArray<unknown>,
        transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) {
        return this.execute(sql, params, transformRows)
      }
      // PGlite has no server-side cursor for a plain query: the rows arrive at once and are emitted in chunks.
      executeStream(
        sql: string,
        params: ReadonlyArray<unknown>,
        transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) {
        return Stream.flatMap(
          Stream.fromEffect(this.execute(sql, params, transformRows)),
          (rows) =>
            Stream.fromChunk(Chunk.unsafeFromArray(rows as Array<any>)),
          { concurrency: 1 }
        )
      }
    }

    const transactionAcquirer = Effect.acquireRelease(permit.take(1), () => permit.release(1)).pipe(
      Effect.as(new PgliteConnection(true))
    )

    const client = yield* Client.make({
      acquirer: Effect.succeed(new PgliteConnection(false)),
      transactionAcquirer,
      compiler,
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", options.dataDir ?? "pglite:memory"]]
    })
    // Before any other statement runs (so the LISTEN cannot fall inside someone's transaction).
    const changes = yield* ReadChanges.inProcess((channel, onPayload) => db.listen(channel, onPayload))
    return { client, changes }
  })

export const layer = (
  options: PgliteClientOptions
): Layer.Layer<Client.SqlClient | ReadChanges.ReadChanges, SqlError> =>
  Layer.scopedContext(
    Effect.map(
      make(options),
      ({ changes, client }) =>
        Context.make(Client.SqlClient, client).pipe(Context.add(ReadChanges.ReadChanges, changes))
    )
  ).pipe(Layer.provide(Reactivity.layer))
