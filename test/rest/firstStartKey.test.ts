import { it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { FirstStartKey } from "@scaledger/server/Bootstrap"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { expect } from "vitest"

const Services = Layer.mergeAll(ApiKeys.Default, AccountsRepo.Default).pipe(
  Layer.provide(Layer.succeed(KeyHashSecret, Redacted.make("test-key-hash-secret"))),
  Layer.provideMerge(TestDatabase.pglite)
)

it.effect("the first start's key is printed even when LOG_LEVEL hides information lines", () =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const capture = Logger.make(({ message }) => {
      lines.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
    const start = FirstStartKey.pipe(
      Layer.provide(Logger.replace(Logger.defaultLogger, capture)),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
    )
    yield* Layer.build(start).pipe(Effect.scoped)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^First start: created account "default" with API key sk_\S+ /)
    // A second start finds the account and prints nothing.
    yield* Layer.build(start).pipe(Effect.scoped)
    expect(lines).toHaveLength(1)
  }).pipe(Effect.provide(Services)), { timeout: 60_000 })
