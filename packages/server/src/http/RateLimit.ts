import { Database, RateLimitsRepo } from "@scaledger/db"
import { Context, Effect, Layer, Option } from "effect"
import { RateLimitConfig } from "../Config.js"
import { logDatabaseError } from "./DatabaseErrors.js"

/** The decision for one request of a key: allowed, or refused with the seconds to wait. */
export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number }

/**
 * Requests per API key and minute (`RATE_LIMIT_PER_MINUTE`), so one integration cannot starve the others: counted in
 * memory with the embedded database (one process), in PostgreSQL when several API processes share one.
 */
export class RateLimiter extends Context.Tag("@scaledger/server/RateLimiter")<RateLimiter, {
  readonly limitPerMinute: number
  readonly consume: (key: string) => Effect.Effect<RateDecision>
}>() {}

const WINDOW_MS = 60_000

const decide = (limit: number, hits: number, resetInMs: number): RateDecision =>
  hits <= limit ? { allowed: true } : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(resetInMs / 1000)) }

/** Fixed one-minute windows in this process's memory. */
export const memoryRateLimiter = (limitPerMinute: number, now: () => number = Date.now) =>
  Layer.sync(RateLimiter, () => {
    const windows = new Map<string, { start: number; hits: number }>()
    return {
      limitPerMinute,
      consume: (key) =>
        Effect.sync(() => {
          if (limitPerMinute === 0) return { allowed: true }
          const t = now()
          const start = t - (t % WINDOW_MS)
          let window = windows.get(key)
          if (window === undefined || window.start !== start) {
            if (windows.size > 10_000) {
              for (const [k, w] of windows) if (w.start !== start) windows.delete(k)
            }
            window = { start, hits: 0 }
            windows.set(key, window)
          }
          window.hits++
          return decide(limitPerMinute, window.hits, start + WINDOW_MS - t)
        })
    }
  })

/**
 * Fixed one-minute windows in PostgreSQL, shared by every process. A database failure lets the request through (the
 * request itself then meets the same database and answers 503 if it is down): the limiter never fails a request.
 */
export const sqlRateLimiter = (limitPerMinute: number) =>
  Layer.effect(
    RateLimiter,
    Effect.gen(function*() {
      const repo = yield* RateLimitsRepo
      let lastPrune = 0
      return {
        limitPerMinute,
        consume: (key) =>
          limitPerMinute === 0 ? Effect.succeed({ allowed: true } as const) : Effect.gen(function*() {
            const count = yield* repo.hit(key)
            if (Date.now() - lastPrune > WINDOW_MS) {
              lastPrune = Date.now()
              yield* Effect.forkDaemon(Effect.ignore(repo.prune))
            }
            return decide(limitPerMinute, count.hits, count.resetInMs)
          }).pipe(
            Effect.catchTag(
              "SqlError",
              (error) => Effect.as(logDatabaseError("rate limit count failed", error), { allowed: true } as const)
            )
          )
      }
    })
  ).pipe(Layer.provide(RateLimitsRepo.Default))

/** Memory with the embedded database, PostgreSQL otherwise; the limit from `RATE_LIMIT_PER_MINUTE`. */
export const RateLimiterLive = Layer.unwrapEffect(Effect.gen(function*() {
  const { perMinute } = yield* RateLimitConfig
  const target = Database.targetOf(yield* Database.DatabaseConfig)
  return target._tag === "Postgres" ? sqlRateLimiter(perMinute) : memoryRateLimiter(perMinute)
}))

/** The limiter when one is provided (the REST server always has one; embedders may leave it out). */
export const optionalRateLimiter = Effect.serviceOption(RateLimiter).pipe(Effect.map(Option.getOrUndefined))
