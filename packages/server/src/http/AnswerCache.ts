import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ReadChanges } from "@scaledger/db/ReadChanges"
import { Effect, Option, Schema } from "effect"
import { AnswerLru } from "./AnswerLru.js"

/** How many encoded answers are kept, and how many bytes of them at most (least recently served dropped first). */
export const ANSWER_CACHE_ENTRIES = 1024
export const ANSWER_CACHE_BYTES = 32 * 1024 * 1024

/** The bytes an answer holds: its encoded body (the headers are a few short strings). */
const bodyBytes = (response: HttpServerResponse.HttpServerResponse): number =>
  response.body._tag === "Uint8Array" ? response.body.body.byteLength : 0

interface Entry {
  readonly token: string
  readonly response: HttpServerResponse.HttpServerResponse
}

/**
 * Encoded answers of an account's reads, kept per (account, read) with the `ReadChanges` token of the data they
 * were computed from and served again while that token holds. A response is an immutable value, so the same one is
 * returned to every request (the edge adds each request's own headers to a copy). Without `ReadChanges` (a client
 * layer that does not follow changes), or while changes cannot be followed, every request computes its answer.
 */
export const makeAnswerCache = Effect.gen(function*() {
  const changes = yield* Effect.serviceOption(ReadChanges)
  const entries = new AnswerLru<Entry>(ANSWER_CACHE_ENTRIES, ANSWER_CACHE_BYTES)

  const remember = (key: string, entry: Entry) => entries.set(key, entry, bodyBytes(entry.response) + key.length)

  /**
   * The answer of `read` for the account, encoded with the endpoint's success schema as `HttpApi` would (JSON,
   * status 200). `cacheable`: false when the answer shows the clock itself (no build yet: `asOf` is now).
   */
  return <A, I, E, R>(
    accountId: string,
    name: string,
    schema: Schema.Schema<A, I>,
    read: Effect.Effect<{ readonly value: A; readonly cacheable: boolean }, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> => {
    const encode = (value: A) =>
      Effect.flatMap(Schema.encode(schema)(value), (encoded) => HttpServerResponse.json(encoded)).pipe(Effect.orDie)
    if (Option.isNone(changes)) return Effect.flatMap(read, ({ value }) => encode(value))
    const key = `${accountId}\u0000${name}`
    const { sync, token: tokenOf } = changes.value
    return Effect.flatMap(sync, (live) => {
      const token = tokenOf(accountId)
      const known = entries.get(key)
      if (live && known !== undefined && known.token === token) return Effect.succeed(known.response)
      return Effect.flatMap(read, ({ cacheable, value }) =>
        Effect.tap(encode(value), (response) => {
          // Stored under the token taken before reading: a change committed meanwhile moves the token on.
          if (live && cacheable) remember(key, { token, response })
        }))
    })
  }
})
