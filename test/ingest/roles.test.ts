import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { pgTypes } from "@scaledger/db/PgTypes"
import * as RoleLocks from "@scaledger/db/RoleLocks"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { asSingleton } from "@scaledger/workers/Singleton"
import { Context, Duration, Effect, Fiber, Layer, Option, Redacted } from "effect"

/** Work that never ends, counting how many copies run at once and the most that ever did. */
const makeWork = () => {
  const seen = { running: 0, most: 0, starts: [] as Array<string> }
  const work = (name: string) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        seen.running++
        seen.most = Math.max(seen.most, seen.running)
        seen.starts.push(name)
      }),
      () => Effect.sync(() => seen.running--)
    ).pipe(Effect.zipRight(Effect.never), Effect.scoped)
  return { seen, work }
}

const poll = (what: string, done: () => boolean, within: Duration.DurationInput) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(Duration.decode(within))
    while (!done()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("100 millis")
    }
  })

describe("roles one worker process plays at a time (PostgreSQL advisory locks)", () => {
  it.scopedLive(
    "one of two processes plays the role; the other takes over when the first stops",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* TestDatabase.postgresUrl)
        const { seen, work } = makeWork()
        let standbyTurns = 0
        const inProcess = (name: string) =>
          asSingleton(
            "test role",
            (wait) => Effect.sleep(wait).pipe(Effect.tap(() => Effect.sync(() => standbyTurns++)))
          )(
            work(name)
          ).pipe(Effect.provide(RoleLocks.postgres(url)), Effect.fork)
        const first = yield* inProcess("first")
        yield* poll("the first process to take the role", () => seen.running === 1, "5 seconds")
        const second = yield* inProcess("second")
        yield* Effect.sleep("6 seconds")
        expect(seen.starts).toEqual(["first"])
        expect(standbyTurns).toBeGreaterThanOrEqual(1)

        yield* Fiber.interrupt(first)
        yield* poll("the second process to take over", () => seen.starts.length === 2, "8 seconds")
        expect(seen.starts).toEqual(["first", "second"])
        expect(seen.running).toBe(1)
        expect(seen.most).toBe(1)
        yield* Fiber.interrupt(second)
        expect(seen.running).toBe(0)
      }),
    40_000
  )

  it.scopedLive(
    "a holder whose connection is cut stops its work: never two at once, and the role is played again",
    () =>
      Effect.gen(function*() {
        const url = Redacted.make(yield* TestDatabase.postgresUrl)
        const { seen, work } = makeWork()
        const inProcess = (name: string) =>
          asSingleton("test role")(work(name)).pipe(Effect.provide(RoleLocks.postgres(url)), Effect.fork)
        const first = yield* inProcess("first")
        yield* poll("the first process to take the role", () => seen.running === 1, "5 seconds")
        const second = yield* inProcess("second")
        yield* Effect.sleep("1 second")

        // The server ends the holder's session, as it does when a process dies or its connection breaks.
        const admin = yield* Layer.build(PgClient.layer({ url, types: pgTypes, maxConnections: 1 }))
        const sql = Context.get(admin, PgClient.PgClient)
        const ended = yield* sql<{ ended: boolean }>`
        SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
        WHERE application_name = 'scaledger-role-test role' AND datname = current_database()`
        expect(ended.map((row) => row.ended)).toEqual([true])
        yield* poll("the work cut off with its hold", () => seen.running === 0 || seen.starts.length > 1, "5 seconds")
        yield* poll("the role played again", () => seen.starts.length === 2 && seen.running === 1, "12 seconds")
        expect(seen.most).toBe(1)
        yield* Fiber.interrupt(first)
        yield* Fiber.interrupt(second)
      }),
    40_000
  )

  it.effect("an embedded database's only process plays every role", () =>
    Effect.gen(function*() {
      const locks = yield* RoleLocks.RoleLocks
      const held = yield* Effect.scoped(locks.tryHold("anything"))
      expect(Option.isSome(held)).toBe(true)
    }).pipe(Effect.provide(RoleLocks.singleProcess)))
})
