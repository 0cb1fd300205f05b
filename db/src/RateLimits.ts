import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  readonly hits: number
  /** Milliseconds until the current window ends. */
  readonly resetInMs: number
}

/**
 * Fixed one-minute windows of request counts per key, counted in the database so that every API process on one
 * PostgreSQL shares them. The database's clock decides the window, so processes with skewed clocks agree.
 */
export class RateLimitsRepo extends Effect.Service<RateLimitsRepo>()("@scaledger/db/RateLimitsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Counts `count` (default one) requests of `key` in the current window. */
    const hit = (key: string, count = 1) =>
      Effect.map(
        sql<{ hits: number | string; reset_in_ms: number | string }>`
          INSERT INTO rate_limit_windows (limit_key, window_start, hits)
          VALUES (${key}, date_trunc('minute', clock_timestamp()), ${count})
          ON CONFLICT (limit_key, window_start) DO UPDATE SET hits = rate_limit_windows.hits + excluded.hits
          RETURNING hits,
            ceil(extract(epoch FROM (window_start + interval '1 minute' - clock_timestamp())) * 1000)::integer
              AS reset_in_ms`,
        (rows): WindowCount => ({
          hits: Number(rows[0]?.hits ?? count),
          resetInMs: Math.max(0, Number(rows[0]?.reset_in_ms ?? 0))
        })
      )

    /** Deletes windows that ended more than two minutes ago. */
    const prune = sql`DELETE FROM rate_limit_windows WHERE window_start < clock_timestamp() - interval '3 minutes'`
      .pipe(
        Effect.asVoid
      )

    return { hit, prune } as const
  })
}) {}
