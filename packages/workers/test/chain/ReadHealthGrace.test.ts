import { describe, expect, it } from "@effect/vitest"
import { ReadHealthStore } from "@scaledger/db/chain/ReadHealth"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ChainClient, type ChainClientService } from "@scaledger/domain/chain/ChainClient"
import { RpcTimeout } from "@scaledger/domain/chain/ChainErrors"
import { ReadHealth, RECOVERY_GRACE_MS } from "@scaledger/workers/chain/ReadHealth"
import { Effect, Layer, Option, TestClock } from "effect"

const Health = ReadHealth.Default.pipe(
  Layer.provide(Layer.succeed(ChainClient, { chainId: 31337 } as unknown as ChainClientService)),
  Layer.provide(ReadHealthStore.Default),
  Layer.provide(TestDatabase.pglite)
)

const timeout = new RpcTimeout({
  method: "eth_getBlockByNumber",
  endpoint: "local",
  timeoutMs: 3_000,
  message: "timed out"
})

describe("chain read health after a recovery", () => {
  it.effect("a failure of a read that began before the recovery is quiet; one after the grace degrades", () =>
    Effect.gen(function*() {
      const health = yield* ReadHealth
      const status = Effect.map(health.state("recorder"), (row) => Option.getOrThrow(row).status)
      expect(yield* health.failed("recorder", timeout)).toBe(true)
      expect(yield* status).toBe("degraded")
      yield* TestClock.adjust(60_000)
      yield* health.succeeded("recorder")
      expect(yield* status).toBe("ok")
      // Another fiber's read, retried since before the recovery, gives up just after it.
      yield* TestClock.adjust(RECOVERY_GRACE_MS / 2)
      expect(yield* health.failed("recorder", timeout)).toBe(true)
      expect(yield* status).toBe("ok")
      // The outage is back: the next failure is reported.
      yield* TestClock.adjust(RECOVERY_GRACE_MS)
      expect(yield* health.failed("recorder", timeout)).toBe(true)
      expect(yield* status).toBe("degraded")
    }).pipe(Effect.provide(Health)))
})
