import type { SqlError } from "@effect/sql/SqlError"
import type { InvalidRequest, ServiceUnavailable } from "@scaledger/domain/Errors"
import { Effect } from "effect"
import { mapDatabaseError } from "./DatabaseErrors.js"

/**
 * A database failure, logged once with its SQLSTATE (never the statement's parameters): a data exception (SQLSTATE
 * class 22) is the caller's input, `400 invalid_request`; an unreachable database `503 service_unavailable`;
 * anything else `500 internal_error`.
 */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable | InvalidRequest, R> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => (error as { _tag?: string })._tag === "SqlError",
    mapDatabaseError("database request failed")
  ) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable | InvalidRequest, R>
