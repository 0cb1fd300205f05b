import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import * as Database from "@scaledger/db/Database"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** Runs `use` against the embedded database in `dataDir`, opened as the service opens it, then closes it. */
const withEmbedded = <A, E>(dataDir: string, use: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.provide(use, Database.layerWith({ _tag: "Pglite", dataDir }).pipe(Layer.orDie)))

it.live(
  "the embedded database expires the leases of a process that stopped, when it is opened again",
  () =>
    Effect.gen(function*() {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-leases-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      // A process takes a build and a backfill and dies with them (its leases run for minutes yet).
      yield* withEmbedded(
        dataDir,
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO accounts (id, name) VALUES ('acct_dead', 'dead')`
          yield* sql`INSERT INTO ledger_builds (account_id, lease_owner, lease_until)
                   VALUES ('acct_dead', 'vm:1:gone', now() + interval '300 seconds')`
          const [held] = yield* sql<{ held: boolean }>`SELECT lease_until > now() AS held FROM ledger_builds`
          expect(held?.held).toBe(true)
        })
      )
      const leases = yield* withEmbedded(
        dataDir,
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ lease_owner: string; held: boolean }>`
          SELECT lease_owner, lease_until > now() AS held FROM ledger_builds WHERE account_id = 'acct_dead'`)
      )
      // Expired, not erased: a worker claims it at once, as it would any lease run out.
      expect(leases).toEqual([{ lease_owner: "vm:1:gone", held: false }])
    }).pipe(Effect.scoped),
  { timeout: 60_000 }
)
