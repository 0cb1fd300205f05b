import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ReadChanges } from "@scaledger/db/ReadChanges"
import { Effect, Option, Schema } from "effect"

/** How many encoded answers are kept (least recently served dropped first). */
export const ANSWER_CACHE_ENTRIES = 1024

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
  const entries = new Map<string, Entry>()

  const remember = (key: string, entry: Entry) => {
    entries.delete(key)
    if (entries.size >= ANSWER_CACHE_ENTRIES) entries.delete(entries.keys().next().value!)
    entries.set(key, entry)
  }

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
      if (live && known !== undefined && known.token === token) {
        remember(key, known)
        return Effect.succeed(known.response)
      }
      return Effect.flatMap(read, ({ cacheable, value }) =>
        Effect.tap(encode(value), (response) => {
          // Stored under the token taken before reading: a change committed meanwhile moves the token on.
          if (live && cacheable) remember(key, { token, response })
        }))
    })
  }
})
