import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { type Account, Authentication, Unauthorized } from "@scaledger/domain/Auth"
import { RateLimited, type ServiceUnavailable } from "@scaledger/domain/Errors"
import { Effect, Layer, Option } from "effect"
import { mapDatabaseError } from "../http/DatabaseErrors.js"
import { limiterKey, optionalRateLimiter } from "../http/RateLimit.js"
import { ApiKeys } from "./ApiKeys.js"

/** `Bearer <token>`, scheme case-insensitive, one or more spaces (RFC 6750: `1*SP`), a non-empty token without spaces. */
export const bearerToken = (header: string | undefined): Option.Option<string> => {
  const match = header === undefined ? null : /^Bearer +([^\s]+)$/i.exec(header)
  return match === null ? Option.none() : Option.some(match[1]!)
}

/**
 * Every `Authorization` header of the request, as sent. Node keeps only the first in `headers`: a request with a valid
 * key and another header would pass on the first alone, so the caller refuses more than one.
 */
export const authorizationHeaders = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const source = request.source as { readonly headersDistinct?: Readonly<Record<string, ReadonlyArray<string>>> }
  const distinct = typeof source === "object" && source !== null ? source.headersDistinct?.["authorization"] : undefined
  if (distinct !== undefined) return distinct
  const header = request.headers["authorization"]
  return header === undefined ? [] : [header]
}

type Failure = Unauthorized | RateLimited | ServiceUnavailable

// The framework's bearer decoder passes an empty token when the header is missing and ignores the scheme, so the
// header is read here as sent.
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* optionalRateLimiter
    const unknownKey = new Unauthorized({ message: "The API key is unknown or revoked." })
    const limited = (key: string, account: Account): Effect.Effect<Account, RateLimited> =>
      limiter === undefined ? Effect.succeed(account) : Effect.flatMap(
        limiter.consume(limiterKey(key)),
        (decision) =>
          decision.allowed ? Effect.succeed(account) : new RateLimited({
            message:
              `More than ${limiter.limitPerMinute} requests a minute with this key; retry after ${decision.retryAfterSeconds} s.`,
            details: { retryAfterSeconds: decision.retryAfterSeconds, limitPerMinute: limiter.limitPerMinute }
          })
      )
    return {
      bearer: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<Account, Failure> => {
          const sent = authorizationHeaders(request)
          if (sent.length > 1) {
            return new Unauthorized({ message: "More than one Authorization header: send exactly one." })
          }
          const header = sent[0]
          const token = bearerToken(header)
          if (Option.isNone(token)) {
            return new Unauthorized({
              message: header === undefined
                ? "Missing `Authorization: Bearer <API_KEY>` header."
                : "Malformed Authorization header: expected `Bearer <API_KEY>`."
            })
          }
          return keys.authenticate(token.value).pipe(
            Effect.catchTag("SqlError", mapDatabaseError("key lookup failed")),
            // A key lookup never fails on the caller's input (the key's form is checked first).
            Effect.catchTag("InvalidRequest", () => Effect.succeed(Option.none())),
            Effect.flatMap((account): Effect.Effect<Account, Failure> =>
              Option.isNone(account) ? Effect.fail(unknownKey) : limited(token.value, account.value)
            )
          )
        })
    }
  })
)
