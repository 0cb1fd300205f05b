import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import { CurrentRequest } from "./RequestContext.js"

/**
 * Every error code the service answers with, its HTTP status and what it means. The `/docs/errors` page is
 * generated from this table and every error body's `docUrl` points at its anchor there.
 */
export const ErrorCatalog = {
  invalid_request: {
    status: 400,
    title: "Invalid request",
    description:
      "The request is malformed: a field has the wrong type, a required field is missing, an unknown field was sent, " +
      "the JSON does not parse, or a query parameter is out of range. `details.issues` lists each offending field."
  },
  invalid_address: {
    status: 400,
    title: "Invalid address",
    description:
      "The address is not a 20-byte hex address (`0x` followed by 40 hex digits), or it is mixed-case and its EIP-55 " +
      "checksum does not match (usually a typo). All-lowercase addresses are accepted."
  },
  invalid_date: {
    status: 400,
    title: "Invalid date",
    description:
      "The date is not a calendar date in `YYYY-MM-DD` form, lies in the future, or lies before the data begins."
  },
  unsupported_currency: {
    status: 400,
    title: "Unsupported currency",
    description: "The currency is not USD or one of the 20 ECB reference currencies. `details.supported` lists them."
  },
  unsupported_format: {
    status: 400,
    title: "Unsupported export format",
    description: "The export format is unknown. `details.supported` lists the valid formats."
  },
  unknown_alert_kind: {
    status: 400,
    title: "Unknown alert kind",
    description:
      "A webhook request names an alert kind that does not exist; nothing was subscribed. `details.supported` lists the kinds."
  },
  invalid_webhook_url: {
    status: 400,
    title: "Invalid webhook URL",
    description:
      "The webhook URL is not `https`, carries credentials, names port 0, or its host is (or resolves to) a loopback, private, " +
      "link-local, CGNAT, multicast, unique-local or otherwise non-public address. `details.reason` says which."
  },
  not_reviewable: {
    status: 400,
    title: "Not reviewable",
    description:
      "The event has no counterparty a label could settle: income from a multiplier step, a split, a mint or burn " +
      "(the zero address), or a movement between two of the account's own wallets. There is nothing to confirm."
  },
  unauthorized: {
    status: 401,
    title: "Unauthorized",
    description:
      "The request carries no `Authorization: Bearer <API_KEY>` header, or the key is malformed, unknown or revoked. " +
      "Create keys with `scaledger keys create --account <name>`."
  },
  not_found: {
    status: 404,
    title: "Not found",
    description: "The resource does not exist, or it belongs to another account (the two are not distinguished)."
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    description: "The path exists but does not accept this HTTP method."
  },
  replay_in_progress: {
    status: 409,
    title: "Replay in progress",
    description:
      "The account's history is being rebuilt (a country rule, an own address or a label changed). Reads that depend " +
      "on it answer 409 until the replay settles; retry after the `Retry-After` header's seconds."
  },
  request_timeout: {
    status: 408,
    title: "Request timeout",
    description: "The request's headers or body did not arrive in time; the connection is closed."
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    description:
      "The request body exceeds 1 MiB, whether declared by `Content-Length` or counted as a chunked body streams in."
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    description:
      "Request bodies must be JSON: `Content-Type: application/json` (optionally `; charset=utf-8`). Forms, " +
      "multipart and text bodies are refused, and so is a body sent with a `Content-Encoding` (gzip, …)."
  },
  rate_limited: {
    status: 429,
    title: "Rate limited",
    description:
      "The API key sent more requests than its limit allows (`RATE_LIMIT_PER_MINUTE`, per key, shared by every API " +
      "process on one PostgreSQL). Retry after the `Retry-After` header's seconds; `details.retryAfterSeconds` says the " +
      "same."
  },
  headers_too_large: {
    status: 431,
    title: "Request headers too large",
    description: "The request's headers exceed 16 KiB."
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    description: "The service failed unexpectedly. The request id identifies the failure in the service's logs."
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    description:
      "A dependency (the database, the chain node) is not reachable right now; retry after the `Retry-After` " +
      "header's seconds."
  }
} as const satisfies Record<string, { status: number; title: string; description: string }>

export type ErrorCode = keyof typeof ErrorCatalog

/** The one error body shape of every failure. */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    docUrl: Schema.String,
    requestId: Schema.String,
    details: Schema.optional(Schema.Unknown)
  })
}).annotations({ identifier: "ErrorBody" })
export type ErrorBody = typeof ErrorBody.Type

export const errorBody = (code: ErrorCode, message: string, details?: unknown) =>
  Effect.map(FiberRef.get(CurrentRequest), (request): ErrorBody => ({
    error: {
      code,
      message,
      docUrl: `${request.docBase}/docs/errors#${code}`,
      requestId: request.requestId,
      ...(details === undefined ? {} : { details })
    }
  }))

const errorFields = { message: Schema.String, details: Schema.optional(Schema.Unknown) }

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", errorFields) {}
export class InvalidAddress extends Schema.TaggedError<InvalidAddress>()("InvalidAddress", errorFields) {}
export class InvalidDate extends Schema.TaggedError<InvalidDate>()("InvalidDate", errorFields) {}
export class UnsupportedCurrency
  extends Schema.TaggedError<UnsupportedCurrency>()("UnsupportedCurrency", errorFields)
{}
export class UnsupportedFormat extends Schema.TaggedError<UnsupportedFormat>()("UnsupportedFormat", errorFields) {}
export class UnknownAlertKind extends Schema.TaggedError<UnknownAlertKind>()("UnknownAlertKind", errorFields) {}
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()("InvalidWebhookUrl", errorFields) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", errorFields) {}
export class NotReviewable extends Schema.TaggedError<NotReviewable>()("NotReviewable", errorFields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", errorFields) {}
export class ReplayInProgress extends Schema.TaggedError<ReplayInProgress>()("ReplayInProgress", {
  ...errorFields,
  retryAfterSeconds: Schema.optional(Schema.Int)
}) {}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", errorFields) {}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", errorFields) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", errorFields) {}
export class UnsupportedMediaType
  extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", errorFields)
{}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", errorFields) {}
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", errorFields) {}
export class HeadersTooLarge extends Schema.TaggedError<HeadersTooLarge>()("HeadersTooLarge", errorFields) {}

/**
 * The wire form of an error class: encodes the tagged error into the `{ error: { code, message, docUrl,
 * requestId, details } }` envelope (request id and doc origin come from the current request) with its status, and
 * decodes an envelope carrying its code (and no other) back into it.
 */
const wire = <A, Tag extends string>(
  errorClass: Schema.Schema<A, { readonly _tag: Tag; readonly message: string; readonly details?: unknown }>,
  tag: Tag,
  code: ErrorCode
) =>
  Schema.transformOrFail(ErrorBody, errorClass, {
    strict: false,
    // Several errors share a status: a body is this error only with this error's code (a derived client tries each).
    decode: (body, _, ast) =>
      body.error.code === code
        ? ParseResult.succeed({
          _tag: tag,
          message: body.error.message,
          ...(body.error.details === undefined ? {} : { details: body.error.details })
        })
        : ParseResult.fail(new ParseResult.Type(ast, body, `not ${code}: ${body.error.code}`)),
    encode: (error) => errorBody(code, error.message, error.details)
  }).annotations({
    ...HttpApiSchema.annotations({ status: ErrorCatalog[code].status, description: ErrorCatalog[code].title }),
    identifier: `Error_${code}`
  })

export const InvalidRequestError = wire(InvalidRequest, "InvalidRequest", "invalid_request")
export const InvalidAddressError = wire(InvalidAddress, "InvalidAddress", "invalid_address")
export const InvalidDateError = wire(InvalidDate, "InvalidDate", "invalid_date")
export const UnsupportedCurrencyError = wire(UnsupportedCurrency, "UnsupportedCurrency", "unsupported_currency")
export const UnsupportedFormatError = wire(UnsupportedFormat, "UnsupportedFormat", "unsupported_format")
export const UnknownAlertKindError = wire(UnknownAlertKind, "UnknownAlertKind", "unknown_alert_kind")
export const InvalidWebhookUrlError = wire(InvalidWebhookUrl, "InvalidWebhookUrl", "invalid_webhook_url")
export const UnauthorizedError = wire(Unauthorized, "Unauthorized", "unauthorized")
export const NotReviewableError = wire(NotReviewable, "NotReviewable", "not_reviewable")
export const NotFoundError = wire(NotFound, "NotFound", "not_found")
export const ReplayInProgressError = wire(ReplayInProgress, "ReplayInProgress", "replay_in_progress")
export const ServiceUnavailableError = wire(ServiceUnavailable, "ServiceUnavailable", "service_unavailable")
export const RateLimitedError = wire(RateLimited, "RateLimited", "rate_limited")
export const PayloadTooLargeError = wire(PayloadTooLarge, "PayloadTooLarge", "payload_too_large")
export const UnsupportedMediaTypeError = wire(UnsupportedMediaType, "UnsupportedMediaType", "unsupported_media_type")
export const InternalErrorError = wire(InternalError, "InternalError", "internal_error")
export const RequestTimeoutError = wire(RequestTimeout, "RequestTimeout", "request_timeout")
export const HeadersTooLargeError = wire(HeadersTooLarge, "HeadersTooLarge", "headers_too_large")

/** Longest message of one refused field (`details.issues`). */
const MAX_ISSUE_MESSAGE = 200

/**
 * The issues of a refused request as a client reads them: an optional or nullable value that was given but wrong is
 * reported by the schema twice, once as "Expected undefined" or "Expected null" (the absent alternative); only the
 * real issue (at that value or inside it) is kept.
 */
export const decodeIssues = <I extends { readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>(
  issues: ReadonlyArray<I>
): Array<I> => {
  const absent = (issue: I) =>
    issue.message.startsWith("Expected undefined,") || issue.message.startsWith("Expected null,")
  const real = issues.filter((issue) => !absent(issue)).map((issue) => issue.path.map(String))
  const within = (path: ReadonlyArray<string>, outer: ReadonlyArray<string>) =>
    outer.length <= path.length && outer.every((part, i) => part === path[i])
  return issues.filter((issue) => !absent(issue) || !real.some((path) => within(path, issue.path.map(String))))
}

/**
 * The framework's own decode failures (bad path, query, headers or body) in the same envelope: code
 * `invalid_request`, `details.issues` listing each offending field as `{ path, message }`.
 */
export const DecodeErrorAsInvalidRequest = Schema.transformOrFail(
  ErrorBody,
  Schema.instanceOf(HttpApiError.HttpApiDecodeError),
  {
    strict: true,
    decode: (_, __, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, _, "decoded as InvalidRequest instead")),
    encode: (error) =>
      errorBody("invalid_request", "The request does not match the API contract.", {
        // Cut short: a message quotes the value refused, which may be as long as the request.
        issues: decodeIssues(error.issues).map((issue) => ({
          path: issue.path,
          message: issue.message.length <= MAX_ISSUE_MESSAGE
            ? issue.message
            : `${issue.message.slice(0, MAX_ISSUE_MESSAGE)}… (cut)`
        }))
      })
  }
).annotations({
  ...HttpApiSchema.annotations({ status: 400, description: ErrorCatalog.invalid_request.title }),
  identifier: "Error_invalid_request_decode"
})
