import type { SqlError } from "@effect/sql/SqlError"
import { ServiceUnavailable } from "@scaledger/domain"
import { Effect } from "effect"

/** A database failure is an outage, not the caller's fault: 503, logged with its cause. */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => (error as { _tag?: string })._tag === "SqlError",
    (error) =>
      Effect.zipRight(
        Effect.logError("database request failed", error),
        Effect.fail(new ServiceUnavailable({ message: "The database is not reachable; retry later." }))
      )
  ) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R>
