import { Backfills } from "@scaledger/db/chain/Backfills"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { Duration, Effect, FiberMap, Layer, Option, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { runBackfill } from "./Backfill.js"
import { IngestConfig } from "./IngestConfig.js"
import { wakePrices } from "./PriceWake.js"

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

/**
 * Runs wallets' backfills: every `backfillPollMs` it leases due jobs (new ones, ones whose retry time has come,
 * ones a dead worker left) up to `backfillConcurrency`, each in its own fiber keyed by wallet, and interrupts the
 * fiber of a job that disappeared (its wallet was deleted), so no more RPC calls are made for it. A failed
 * attempt is retried later with a doubling wait; after the last attempt the wallet shows `failed`.
 */
export const makeBackfillRunner = Effect.gen(function*() {
  const backfills = yield* Backfills
  const chain = yield* ChainClient
  const config = yield* IngestConfig
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`
  const running = yield* FiberMap.make<string>()

  const attempt = (job: Parameters<typeof runBackfill>[0]) =>
    runBackfill(job, owner).pipe(
      // Its transfers may be older than the price history recorded so far: walk it back now, not at the next poll.
      Effect.zipRight(wakePrices),
      Effect.catchTag("BackfillAbandoned", () => Effect.void),
      Effect.catchAllCause((cause) =>
        Effect.gen(function*() {
          const error = describe(cause._tag === "Fail" ? cause.error : cause)
          // Counted from the stored job, not the claim: every checkpoint stored since then reset the count.
          const { attempt, held, last } = yield* backfills.attemptFailed(job.walletId, owner, error, {
            maxAttempts: config.backfillMaxAttempts,
            retryBaseMs: config.backfillRetryBaseMs
          })
          if (!held) {
            return yield* Effect.logWarning(
              `backfill ${job.address}: attempt failed after another worker took it: ${error}`
            )
          }
          yield* Effect.logWarning(
            `backfill ${job.address}: attempt ${attempt} failed${last ? " (giving up)" : ""}: ${error}`
          )
        })
      ),
      Effect.ensuring(Effect.ignore(backfills.release(job.walletId, owner)))
    )

  const poll = Effect.gen(function*() {
    // A job whose row is gone was deleted with its wallet: stop it. The others keep their lease.
    for (const walletId of Array.from(running, ([walletId]) => walletId)) {
      if (Option.isNone(yield* backfills.find(walletId))) yield* FiberMap.remove(running, walletId)
      else yield* backfills.renew(walletId, owner, config.backfillLeaseSeconds)
    }
    const free = config.backfillConcurrency - (yield* FiberMap.size(running))
    if (free <= 0) return
    const jobs = yield* backfills.claim(chain.chainId, owner, free, config.backfillLeaseSeconds)
    for (const job of jobs) {
      yield* FiberMap.run(running, job.walletId, attempt(job), { onlyIfMissing: true })
    }
  })

  const run = poll.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("backfill runner: poll failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(config.backfillPollMs)))
  )

  return { run, poll } as const
})

export const BackfillRunnerLive = Layer.scopedDiscard(
  Effect.flatMap(makeBackfillRunner, (runner) => Effect.forkScoped(runner.run))
)
