import { Cause, ConfigError, Option } from "effect"

/** One line saying why the process could not start (no stack trace for a configuration mistake). */
export const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return Cause.pretty(cause)
  const error = failure.value as { _tag?: string; message?: string; cause?: unknown }
  if (ConfigError.isConfigError(error)) return `configuration error: ${String(error).replace(/\s+/g, " ")}`
  switch (error._tag) {
    case "SqlError":
      return `database error: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}`
    case "MigrationError":
      return `migration failed: ${error.message}`
    case "ServeError":
      return `could not start the HTTP server: ${
        error.cause instanceof Error ? error.cause.message : String(error.cause)
      }`
    default:
      return error.message || String(error)
  }
}
