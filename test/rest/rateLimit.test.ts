import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { memoryRateLimiter, RateLimiter, sqlRateLimiter } from "@scaledger/server/http/RateLimit"
import type { Layer } from "effect"
import { Effect } from "effect"
import { edgeServer } from "../support/EdgeHarness.js"
import { call, newKey } from "../support/RestHarness.js"

// A fixed clock (mid-minute), so the window cannot roll over between the 5th and the 6th request.
const midMinute = () => 1_800_000_000_000 + 15_000

layer(edgeServer(TestDatabase.pglite, memoryRateLimiter(5, midMinute)), { timeout: 60_000 })(
  "rate limits per key over HTTP",
  (it) => {
    it.effect("the 6th request of a key in a minute is 429 rate_limited with Retry-After; other keys are unaffected", () =>
      Effect.gen(function*() {
        const busy = yield* newKey("busy")
        const quiet = yield* newKey("quiet")
        for (let i = 0; i < 5; i++) expect((yield* call("GET", "/v1/settings", { key: busy.key })).status).toBe(200)
        const limited = yield* call("GET", "/v1/settings", { key: busy.key })
        expect(limited.status).toBe(429)
        expect(limited.body.error.code).toBe("rate_limited")
        expect(limited.headers["request-id"]).toBe(limited.body.error.requestId)
        const retryAfter = Number(limited.headers["retry-after"])
        expect(retryAfter).toBe(45)
        expect(limited.body.error.details.retryAfterSeconds).toBe(retryAfter)
        expect((yield* call("GET", "/v1/settings", { key: quiet.key })).status).toBe(200)
        // Requests without a valid key are not counted against anyone (they are 401).
        expect((yield* call("GET", "/v1/settings")).status).toBe(401)
      }))
  }
)

const limiterOn = <R>(layer: Layer.Layer<RateLimiter, never, R>) => Effect.provide(RateLimiter, layer)

describe("rate limiter stores", () => {
  it.effect("in memory: a fixed one-minute window per key", () =>
    Effect.gen(function*() {
      let now = 60_000 * 1000 + 10_000
      const limiter = yield* limiterOn(memoryRateLimiter(2, () => now))
      expect((yield* limiter.consume("a")).allowed).toBe(true)
      expect((yield* limiter.consume("a")).allowed).toBe(true)
      const third = yield* limiter.consume("a")
      expect(third).toEqual({ allowed: false, retryAfterSeconds: 50 })
      expect((yield* limiter.consume("b")).allowed).toBe(true)
      now += 50_000
      expect((yield* limiter.consume("a")).allowed).toBe(true)
    }))

  it.effect("0 turns the limit off", () =>
    Effect.gen(function*() {
      const limiter = yield* limiterOn(memoryRateLimiter(0))
      for (let i = 0; i < 50; i++) expect((yield* limiter.consume("a")).allowed).toBe(true)
    }))
})

layer(TestDatabase.postgres, { timeout: 60_000 })("rate limits shared through PostgreSQL", (it) => {
  it.effect("two API processes (two limiters on one database) share one count per key", () =>
    Effect.gen(function*() {
      // Not in the last seconds of a minute: the four requests below must fall in one window.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ s: string }>`SELECT extract(second FROM clock_timestamp())::text AS s`
      if (Number(row!.s) > 55) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 6000)))
      const first = yield* limiterOn(sqlRateLimiter(3))
      const second = yield* limiterOn(sqlRateLimiter(3))
      expect((yield* first.consume("shared")).allowed).toBe(true)
      expect((yield* second.consume("shared")).allowed).toBe(true)
      expect((yield* first.consume("shared")).allowed).toBe(true)
      const fourth = yield* second.consume("shared")
      expect(fourth.allowed).toBe(false)
      if (!fourth.allowed) {
        expect(fourth.retryAfterSeconds).toBeGreaterThanOrEqual(1)
        expect(fourth.retryAfterSeconds).toBeLessThanOrEqual(60)
      }
      expect((yield* first.consume("other")).allowed).toBe(true)
    }))
})
