import { HttpServerRequest } from "@effect/platform"
import { Authentication, ServiceUnavailable, Unauthorized } from "@scaledger/domain"
import { Effect, Layer, Option } from "effect"
import { ApiKeys } from "./ApiKeys.js"

/** `Bearer <token>`, scheme case-insensitive, exactly one space, a non-empty token without spaces. */
export const bearerToken = (header: string | undefined): Option.Option<string> => {
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header)
  return match === null ? Option.none() : Option.some(match[1]!)
}

// The framework's bearer decoder passes an empty token when the header is missing and ignores the scheme, so the
// header is read here as sent.
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    return {
      bearer: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const header = request.headers["authorization"]
          const token = bearerToken(header)
          if (Option.isNone(token)) {
            return yield* new Unauthorized({
              message: header === undefined
                ? "Missing `Authorization: Bearer <API_KEY>` header."
                : "Malformed Authorization header: expected `Bearer <API_KEY>`."
            })
          }
          const account = yield* keys.authenticate(token.value).pipe(
            Effect.catchTag("SqlError", (error) =>
              Effect.zipRight(
                Effect.logError("key lookup failed", error),
                new ServiceUnavailable({ message: "The database is not reachable; retry later." })
              ))
          )
          if (Option.isNone(account)) {
            return yield* new Unauthorized({ message: "The API key is unknown or revoked." })
          }
          return account.value
        })
    }
  })
)
