import * as Database from "@scaledger/db/Database"
import { RateLimitsRepo } from "@scaledger/db/RateLimits"
import { Context, Effect, Layer, Option, Schedule } from "effect"
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

/** How often counts kept in memory are added to the shared ones in PostgreSQL. */
export const RATE_FLUSH_MS = 1_000

interface SharedWindow {
  start: number
  /** This window's count in the database when last read (every process's requests, this one's flushed ones). */
  shared: number
  /** Requests counted here and not yet added to the database. */
  pending: number
  /** Requests counted here whose addition to the database is under way. */
  sending: number
  resetInMs: number
}

/**
 * Fixed one-minute windows shared by every process through PostgreSQL, without a write per request: a key well
 * under its limit (its last known count under half the limit) is counted in memory and its count added to the
 * database once a second, in one statement per key; past half the limit every request adds its count at once and
 * decides on the shared figure. So processes agree exactly near the limit, and a burst that crosses half the limit
 * within one flush can pass it by at most what the other processes counted in that second. A database failure lets
 * the request through (the request itself then meets the same database and answers 503 if it is down): the limiter
 * never fails a request.
 */
export const sqlRateLimiter = (limitPerMinute: number, now: () => number = Date.now) =>
  Layer.scoped(
    RateLimiter,
    Effect.gen(function*() {
      const repo = yield* RateLimitsRepo
      const windows = new Map<string, SharedWindow>()
      let lastPrune = 0

      const windowOf = (key: string, t: number) => {
        const start = t - (t % WINDOW_MS)
        let window = windows.get(key)
        if (window === undefined || window.start !== start) {
          if (windows.size > 10_000) {
            for (const [k, w] of windows) if (w.start !== start) windows.delete(k)
          }
          // Counts of an ended window that never reached the database no longer matter.
          window = { start, shared: 0, pending: 0, sending: 0, resetInMs: start + WINDOW_MS - t }
          windows.set(key, window)
        }
        return window
      }

      /** Adds the key's pending count to the database and takes the shared count back. */
      const flush = (key: string, window: SharedWindow) =>
        Effect.suspend(() => {
          const count = window.pending
          if (count === 0) return Effect.void
          window.pending = 0
          window.sending += count
          return repo.hit(key, count).pipe(
            Effect.map((shared) => {
              window.sending -= count
              // Two additions of one key may answer out of order: a window's count only grows.
              window.shared = Math.max(window.shared, shared.hits)
              window.resetInMs = shared.resetInMs
            }),
            Effect.tapError(() =>
              Effect.sync(() => {
                window.sending -= count
                window.pending += count
              })
            )
          )
        })

      const flushAll = Effect.suspend(() =>
        Effect.forEach([...windows].filter(([, w]) => w.pending > 0), ([key, window]) => flush(key, window), {
          discard: true
        }).pipe(Effect.zipRight(
          now() - lastPrune > WINDOW_MS ?
            repo.prune.pipe(Effect.tap(() => {
              lastPrune = now()
            })) :
            Effect.void
        ))
      ).pipe(
        Effect.catchTag("SqlError", (error) => logDatabaseError("rate limit count failed", error))
      )

      yield* flushAll.pipe(Effect.repeat(Schedule.spaced(RATE_FLUSH_MS)), Effect.forkScoped)
      yield* Effect.addFinalizer(() => flushAll)

      return {
        limitPerMinute,
        consume: (key) =>
          limitPerMinute === 0 ? Effect.succeed({ allowed: true } as const) : Effect.suspend(() => {
            const t = now()
            const window = windowOf(key, t)
            window.pending++
            // Counts being added right now are in neither figure yet: they count as well.
            if (window.shared + window.sending + window.pending > limitPerMinute / 2) {
              return flush(key, window).pipe(
                Effect.map(() =>
                  decide(limitPerMinute, window.shared + window.sending + window.pending, window.resetInMs)
                ),
                Effect.catchTag(
                  "SqlError",
                  (error) => Effect.as(logDatabaseError("rate limit count failed", error), { allowed: true } as const)
                )
              )
            }
            return Effect.succeed(decide(
              limitPerMinute,
              window.shared + window.sending + window.pending,
              window.start + WINDOW_MS - t
            ))
          })
      }
    })
  ).pipe(Layer.provide(RateLimitsRepo.Default))

/** Memory with the embedded database, PostgreSQL otherwise; the limit from `RATE_LIMIT_PER_MINUTE`. */
export const RateLimiterLive = Layer.unwrapEffect(Effect.gen(function*() {
  const { perMinute } = yield* RateLimitConfig
  const target = Database.targetOf(yield* Database.DatabaseConfig)
  return target._tag === "Postgres" ? sqlRateLimiter(perMinute) : memoryRateLimiter(perMinute)
}))

/** What a key is counted under: its lookup prefix (`sk_live_` + 8) names it without holding the secret part. */
export const limiterKey = (key: string): string => key.slice(0, 16)

/** The limiter when one is provided (the REST server always has one; embedders may leave it out). */
export const optionalRateLimiter = Effect.serviceOption(RateLimiter).pipe(Effect.map(Option.getOrUndefined))
