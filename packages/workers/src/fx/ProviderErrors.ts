import { Schema } from "effect"

export const FxFormat = Schema.Literal("ecb-csv", "ecb-xml", "ecb-zip", "frankfurter-json")
export type FxFormat = typeof FxFormat.Type

/** A provider's body did not have the expected shape. Nothing is dropped silently: the whole body is rejected. */
export class FxParseError extends Schema.TaggedError<FxParseError>()("FxParseError", {
  format: FxFormat,
  detail: Schema.String,
  /** 1-based line of the offending input, when known. */
  line: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    return `${this.format}: ${this.detail}${this.line === undefined ? "" : ` (line ${this.line})`}`
  }
}

export const FxProviderFailure = Schema.Literal(
  "http-status", // a non-2xx answer other than 429 (5xx are retried first)
  "rate-limited", // 429, retried honouring Retry-After
  "network", // connection refused or reset, body cut off
  "timeout",
  "malformed" // the body did not parse; `cause` holds the FxParseError
)
export type FxProviderFailure = typeof FxProviderFailure.Type

/** A provider request failed after its retries, or its answer could not be used. */
export class FxProviderError extends Schema.TaggedError<FxProviderError>()("FxProviderError", {
  source: Schema.String,
  reason: FxProviderFailure,
  url: Schema.String,
  detail: Schema.String,
  status: Schema.optional(Schema.Number),
  /** Milliseconds the server asked us to wait (Retry-After), when it did. */
  retryAfterMs: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `${this.source} ${this.reason}${
      this.status === undefined ? "" : ` ${this.status}`
    }: ${this.detail} (${this.url})`
  }

  get transient(): boolean {
    return this.reason === "network" || this.reason === "timeout" || this.reason === "rate-limited" ||
      (this.reason === "http-status" && this.status !== undefined && this.status >= 500)
  }
}
