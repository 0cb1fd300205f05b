import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Backfills } from "@scaledger/db/chain/Backfills"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { makeBackfillRunner } from "@scaledger/workers/ingest/BackfillRunner"
import { Duration, Effect, Layer, Schedule } from "effect"
import { startFaultProxy } from "../chain/faultProxy.js"
import { ingestServices, seededChain } from "../support/ChainHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

describe("backfill attempts", () => {
  it.live(
    "an attempt that stored checkpoints before it failed starts the count of failures again: no `failed` for it",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        yield* Effect.promise(() => chain.node.mine(2_000))
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => startFaultProxy({ target: chain.node.httpUrl, faults: { latencyMs: 40 } })),
          (p) => Effect.promise(() => p.close())
        )
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { account } = yield* (yield* AccountsRepo).findOrCreate("attempts")
          const { wallet } = yield* (yield* WalletsRepo).insert({
            accountId: account.id,
            address: ALICE,
            label: "",
            self: true,
            watchingFromBlock: null,
            watchingFromAt: null,
            chainId: chain.node.chainId
          })
          // One attempt already failed without getting anywhere: one more failure in a row would be the last.
          yield* sql`UPDATE wallet_backfills SET attempts = 1 WHERE wallet_id = ${wallet.id}`
          const state = sql<{ status: string; done: string; attempts: number; last_error: string | null }>`
            SELECT w.backfill_status AS status, w.backfill_blocks_done AS done, b.attempts, b.last_error
            FROM wallets w JOIN wallet_backfills b ON b.wallet_id = w.id WHERE w.id = ${wallet.id}`.pipe(
            Effect.map((rows) => rows[0]!)
          )
          const waitFor = (what: string, ready: (s: Effect.Effect.Success<typeof state>) => boolean) =>
            state.pipe(
              Effect.filterOrFail(ready, () => `not yet: ${what}`),
              Effect.retry(Schedule.spaced(Duration.millis(25)).pipe(Schedule.upTo(Duration.seconds(60)))),
              Effect.orDie
            )

          const runner = yield* makeBackfillRunner
          yield* Effect.forkScoped(runner.run)
          // This attempt makes progress (each checkpoint resets the count), then every read fails.
          yield* waitFor("a first checkpoint", (s) => Number(s.done) > 0)
          proxy.setFaults({ down: true })
          yield* waitFor("the attempt's failure", (s) => s.last_error !== null)
          yield* Effect.sleep(Duration.millis(300))
          const failed = yield* state
          expect(failed.status).toBe("running")
          expect(failed.attempts).toBe(1)

          // The retry finishes the history.
          proxy.setFaults({})
          yield* sql`UPDATE wallet_backfills SET retry_at = now() WHERE wallet_id = ${wallet.id}`
          const done = yield* waitFor("the retried backfill", (s) => s.status !== "running")
          expect(done.status).toBe("complete")
        }).pipe(
          Effect.scoped,
          Effect.provide(
            ingestServices({
              rpcUrl: proxy.url,
              chainId: chain.node.chainId,
              tokenListPath: chain.tokenListPath,
              chain: { maxRetries: 1 },
              ingest: { backfillMaxAttempts: 2, backfillRetryBaseMs: 600_000, backfillCheckpointBlocks: 100 }
            }).pipe(Layer.provideMerge(TestDatabase.postgres))
          )
        )
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("an attempt that fails after its lease lapsed and another worker took the job leaves the job to that worker", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const backfills = yield* Backfills
      const { account } = yield* (yield* AccountsRepo).findOrCreate("lapsed")
      const { wallet } = yield* (yield* WalletsRepo).insert({
        accountId: account.id,
        address: ALICE,
        label: "",
        self: true,
        watchingFromBlock: null,
        watchingFromAt: null,
        chainId: 31337
      })
      // Worker A stalls past its lease; worker B takes the job over.
      const [byA] = yield* backfills.claim(31337, "worker-a", 1, 0)
      expect(byA?.walletId).toBe(wallet.id)
      yield* Effect.sleep(Duration.millis(20))
      const [byB] = yield* backfills.claim(31337, "worker-b", 1, 60)
      expect(byB?.walletId).toBe(wallet.id)
      // A's attempt then fails, on what would be its last try.
      const outcome = yield* backfills.attemptFailed(wallet.id, "worker-a", "stalled", {
        maxAttempts: 1,
        retryBaseMs: 1_000
      })
      const [row] = yield* sql<{ status: string; phase: string; lease_owner: string | null; attempts: number }>`
        SELECT w.backfill_status AS status, b.phase, b.lease_owner, b.attempts
        FROM wallets w JOIN wallet_backfills b ON b.wallet_id = w.id WHERE w.id = ${wallet.id}`
      expect(row).toEqual({ status: "running", phase: "transfers", lease_owner: "worker-b", attempts: 0 })
      expect(outcome.held).toBe(false)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(Backfills.Default, AccountsRepo.Default, WalletsRepo.Default).pipe(
          Layer.provideMerge(TestDatabase.postgres)
        )
      )
    ))
})
