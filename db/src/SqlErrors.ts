import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Schedule } from "effect"

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

/** Whether a failure is a database error on a value the caller gave (SQLSTATE class 22): bad input, not an outage. */
export const isDataException = (error: { readonly _tag: string }): boolean =>
  error._tag === "SqlError" && classifySqlError(error as SqlError).kind === "bad_input"

/** A deadlock (40P01) or serialization failure (40001): the database rolled the transaction back; run again, it goes. */
export const isTransactionConflict = (error: unknown): boolean => {
  if (error === null || typeof error !== "object" || (error as { _tag?: unknown })._tag !== "SqlError") return false
  const sqlstate = sqlstateOf((error as SqlError).cause)
  return sqlstate === "40P01" || sqlstate === "40001"
}

/** Runs a transaction again (up to 3 more times, after a short jittered wait) when the database broke it off. */
export const retryOnConflict = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(transaction, {
    schedule: Schedule.exponential(Duration.millis(20)).pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3))),
    while: isTransactionConflict
  })
