import type { SqlError } from "@effect/sql/SqlError"
import { type ErrorCode, InvalidRequest, ServiceUnavailable } from "@scaledger/domain/Errors"
import { Data, Effect } from "effect"

/**
 * A failure already logged where it happened (once, without the statement or its parameters); the edge answers it
 * with `code` and does not log it again.
 */
export class LoggedFailure extends Data.TaggedError("LoggedFailure")<{
  readonly code: ErrorCode
  readonly message: string
}> {}

/** What a database error means for the caller. */
export type DatabaseFailureKind = "bad_input" | "unavailable" | "internal"

const sqlstateOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let i = 0; i < 5 && current !== null && typeof current === "object"; i++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * SQLSTATE classes: 22 (data exception: a value the type cannot hold, a NUL in text, an out-of-range date or number)
 * is the caller's input → 400; 08 (connection), 53 (insufficient resources), 57P (shutting down), 40001/40P01
 * (serialization, deadlock: retryable) and errors with no SQLSTATE (no connection at all) → 503; the rest is a fault
 * of the service → 500.
 */
export const classifySqlError = (
  error: SqlError
): { readonly kind: DatabaseFailureKind; readonly sqlstate: string | undefined } => {
  const sqlstate = sqlstateOf(error.cause)
  if (sqlstate === undefined) return { kind: "unavailable", sqlstate }
  if (sqlstate.startsWith("22")) return { kind: "bad_input", sqlstate }
  if (
    sqlstate.startsWith("08") || sqlstate.startsWith("53") || sqlstate.startsWith("57P") || sqlstate === "57014" ||
    sqlstate === "40001" || sqlstate === "40P01"
  ) return { kind: "unavailable", sqlstate }
  return { kind: "internal", sqlstate }
}

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
          return Effect.fail(new ServiceUnavailable({ message: "The database is not reachable; retry later." }))
        case "internal":
          return Effect.die(
            new LoggedFailure({ code: "internal_error", message: "The service failed unexpectedly." })
          )
      }
    })
  )
