import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { expect } from "vitest"
import { startFaultProxy } from "../chain/faultProxy.js"
import { addAndBackfill, ingestServices, recordSnapshot, seededChain } from "../support/ChainHarness.js"
import { runEntry } from "../support/Processes.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

interface Progress {
  readonly status: string
  readonly done: number
  readonly total: number | null
}

it.live(
  "a backfill killed with SIGKILL resumes on restart and stores exactly the rows of an uninterrupted run",
  () =>
    Effect.gen(function*() {
      const chain = yield* seededChain
      yield* Effect.promise(() => chain.node.mine(2_500))
      // Slow answers stretch the backfill over many checkpoints, so the kill lands in the middle of it.
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startFaultProxy({ target: chain.node.httpUrl, faults: { latencyMs: 120 } })),
        (p) => Effect.promise(() => p.close())
      )
      const url = yield* TestDatabase.postgresUrl
      const database = Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
      const onDatabase = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | AccountsRepo | WalletsRepo>) =>
        effect.pipe(
          Effect.provide(Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default).pipe(Layer.provideMerge(database)))
        )

      yield* onDatabase(Effect.gen(function*() {
        const { account } = yield* (yield* AccountsRepo).findOrCreate("crash")
        yield* (yield* WalletsRepo).insert({
          accountId: account.id,
          address: ALICE,
          label: "",
          self: true,
          watchingFromBlock: null,
          watchingFromAt: null,
          chainId: chain.node.chainId
        })
      }))
      const progress = onDatabase(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<
          { backfill_status: string; backfill_blocks_done: string; backfill_blocks_total: string | null }
        >`
        SELECT backfill_status, backfill_blocks_done, backfill_blocks_total FROM wallets`
        return {
          status: row!.backfill_status,
          done: Number(row!.backfill_blocks_done),
          total: row!.backfill_blocks_total === null ? null : Number(row!.backfill_blocks_total)
        } satisfies Progress
      }))
      const waitFor = (what: string, ready: (p: Progress) => boolean) =>
        progress.pipe(
          Effect.filterOrFail(ready, () => `not yet: ${what}`),
          Effect.retry(Schedule.spaced(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(60)))),
          Effect.orDie
        )

      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-crash-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      const env = {
        DATABASE_URL: url,
        SCALEDGER_DATA_DIR: dataDir,
        KEY_HASH_SECRET: "crash-test",
        RPC_URL: proxy.url,
        CHAIN_ID: String(chain.node.chainId),
        TOKEN_LIST: chain.tokenListPath,
        FINALITY_DEPTH: "10",
        BACKFILL_CHECKPOINT_BLOCKS: "100",
        BACKFILL_POLL_MS: "100",
        BACKFILL_LEASE_SECONDS: "2",
        FX_REFRESH: "off"
      }
      const first = runEntry("main", ["--workers"], env)
      const midway = yield* waitFor("a first checkpoint", (p) => p.done > 0).pipe(
        Effect.ensuring(Effect.sync(() => first.child.kill("SIGKILL")))
      )
      yield* Effect.promise(() => first.exited)
      expect(midway.status).toBe("running")
      expect(midway.done).toBeLessThan(midway.total!)
      const afterKill = yield* progress
      expect(afterKill.status).toBe("running")

      const second = runEntry("main", ["--workers"], env)
      yield* Effect.addFinalizer(() =>
        Effect.promise(async () => {
          second.child.kill("SIGTERM")
          await second.exited
        })
      )
      // The dead worker's lease has to lapse before another takes the job.
      const finished = yield* waitFor("the resumed backfill", (p) => p.status !== "running").pipe(
        Effect.timeoutFail({ duration: Duration.minutes(3), onTimeout: () => second.output() })
      )
      expect(finished.status).toBe("complete")
      expect(finished.done).toBe(finished.total)
      const resumed = yield* onDatabase(recordSnapshot)

      const clean = yield* addAndBackfill(ALICE, chain.node.chainId).pipe(
        Effect.zipRight(recordSnapshot),
        Effect.provide(
          ingestServices({
            rpcUrl: chain.node.httpUrl,
            chainId: chain.node.chainId,
            tokenListPath: chain.tokenListPath
          })
            .pipe(Layer.provideMerge(TestDatabase.postgres))
        )
      )
      expect(resumed).toEqual(clean)
      expect(clean.transfers.length).toBeGreaterThan(5)
    }).pipe(Effect.scoped),
  240_000
)
