import type { SqlError } from "@effect/sql/SqlError"
import { classifySqlError, isTransactionConflict } from "@scaledger/db/SqlErrors"
import { type ErrorCode, InvalidRequest, ServiceUnavailable } from "@scaledger/domain/Errors"
import { Data, Effect } from "effect"

export { classifySqlError, type DatabaseFailureKind } from "@scaledger/db/SqlErrors"

/**
 * A failure already logged where it happened (once, without the statement or its parameters); the edge answers it
 * with `code` and does not log it again.
 */
export class LoggedFailure extends Data.TaggedError("LoggedFailure")<{
  readonly code: ErrorCode
  readonly message: string
}> {}

/**
 * Logs a database error once, as one line: the SQLSTATE and, except for data exceptions (whose messages quote the
 * offending value), the database's message. Never the statement or its parameters: they can hold user data.
 */
export const logDatabaseError = (what: string, error: SqlError) => {
  const { kind, sqlstate } = classifySqlError(error)
  const cause = error.cause as { message?: unknown } | undefined
  const detail = kind === "bad_input"
    ? "data exception (value not logged)"
    : typeof cause?.message === "string"
    ? cause.message.split("\n")[0]!.slice(0, 300)
    : error.message
  const log = kind === "bad_input" ? Effect.logWarning : Effect.logError
  return log(`${what}: ${detail}`).pipe(Effect.annotateLogs({ sqlstate: sqlstate ?? "none", dbFailure: kind }))
}

/**
 * Maps a failed database request: SQLSTATE class 22 → `400 invalid_request`; unreachable → `503
 * service_unavailable`; anything else → `500 internal_error`. Logged once, here.
 */
export const mapDatabaseError = (what: string) => (error: SqlError) =>
  Effect.zipRight(
    logDatabaseError(what, error),
    Effect.suspend((): Effect.Effect<never, InvalidRequest | ServiceUnavailable> => {
      switch (classifySqlError(error).kind) {
        case "bad_input":
          return Effect.fail(
            new InvalidRequest({ message: "A value in the request is outside what the service can store or compare." })
          )
        case "unavailable":
          return Effect.fail(
            new ServiceUnavailable({
              message: isTransactionConflict(error)
                ? "The change collided with another one at the same moment; retry."
                : "The database is not reachable; retry later."
            })
          )
        case "internal":
          return Effect.die(
            new LoggedFailure({ code: "internal_error", message: "The service failed unexpectedly." })
          )
      }
    })
  )
