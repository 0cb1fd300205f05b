import { describe, expect, it } from "@effect/vitest"
import { FxStore } from "@scaledger/domain/fx/FxStore"
import type { DayRates } from "@scaledger/domain/fx/Schemas"
import {
  bundledHistoryPath,
  FxProvider,
  FxProviderError,
  type FxProviderShape,
  parseEcbCsv,
  refreshOnce,
  type RefreshResult,
  runDailyRefresh
} from "@scaledger/workers/fx/index"
import { Duration, Effect, Either, Exit, Fiber, Layer, Option, TestClock } from "effect"
import { readFileSync } from "node:fs"

const history = Either.getOrThrow(parseEcbCsv(readFileSync(bundledHistoryPath, "utf8")))
const upTo = (date: string) => history.filter((d) => d.date <= date)

/** A provider over the real history that has published up to `published.date`, and counts its calls. */
const fakeProvider = (published: { date: string }, failures: { remaining: number } = { remaining: 0 }) => {
  const calls: Array<string> = []
  const failOrElse = <A>(a: () => A) =>
    Effect.suspend(() => {
      if (failures.remaining > 0) {
        failures.remaining--
        return Effect.fail(
          new FxProviderError({
            source: "ecb-via-eurofxref",
            reason: "http-status",
            url: "fake",
            detail: "500",
            status: 500
          })
        )
      }
      return Effect.succeed(a())
    })
  const provider: FxProviderShape = {
    source: "ecb-via-eurofxref",
    latest: () => {
      calls.push("latest")
      return failOrElse(() => ({ source: "ecb-via-eurofxref" as const, days: upTo(published.date).slice(-1) }))
    },
    since: (date) => {
      calls.push(`since ${date}`)
      return failOrElse(() => ({
        source: "ecb-via-eurofxref" as const,
        days: upTo(published.date).filter((d) => d.date >= date)
      }))
    }
  }
  return { calls, layer: Layer.succeed(FxProvider, provider) }
}

const stored = (days: ReadonlyArray<DayRates>) => days.map((d) => ({ ...d, source: "ecb-via-eurofxref" as const }))

describe("refreshOnce", () => {
  it.effect("fills an empty store with the full history", () => {
    const { calls, layer } = fakeProvider({ date: "2025-05-09" })
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-05-09T15:00:00Z"))
      const result = yield* refreshOnce
      expect(calls).toEqual(["since 1999-01-04"])
      expect(result).toMatchObject({ fetchedDays: 6747, newestAfter: Option.some("2025-05-09"), upToDate: true })
      expect(yield* (yield* FxStore).newestDay()).toEqual(Option.some("2025-05-09"))
    }).pipe(Effect.provide(layer), Effect.provide(FxStore.layerInMemory()))
  })

  it.effect("reads the daily file when one business day behind", () => {
    const { calls, layer } = fakeProvider({ date: "2025-05-09" })
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-05-09T15:00:00Z"))
      const result = yield* refreshOnce
      expect(calls).toEqual(["latest"])
      expect(result).toMatchObject({ fetchedDays: 1, newestBefore: Option.some("2025-05-08"), upToDate: true })
    }).pipe(Effect.provide(layer), Effect.provide(FxStore.layerInMemory(stored(upTo("2025-05-08")))))
  })

  it.effect("asks for everything since the newest stored day otherwise", () => {
    const { calls, layer } = fakeProvider({ date: "2025-05-09" })
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-05-12T08:00:00Z"))
      const result = yield* refreshOnce
      expect(calls).toEqual(["since 2025-04-30"])
      expect(result).toMatchObject({ fetchedDays: 7, expectedNewest: "2025-05-09", upToDate: true })
    }).pipe(Effect.provide(layer), Effect.provide(FxStore.layerInMemory(stored(upTo("2025-04-30")))))
  })

  it.effect("reports not up to date before the day is published", () => {
    const { layer } = fakeProvider({ date: "2025-05-08" })
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-05-09T14:20:00Z"))
      const result = yield* refreshOnce
      expect(result).toMatchObject({
        newestAfter: Option.some("2025-05-08"),
        expectedNewest: "2025-05-09",
        upToDate: false
      })
    }).pipe(Effect.provide(layer), Effect.provide(FxStore.layerInMemory(stored(upTo("2025-05-08")))))
  })
})

// The weeks used below are real ECB weeks: Friday 2025-04-25 and Monday 2025-04-28 (CEST, 16:15 = 14:15 UTC).
describe("runDailyRefresh", () => {
  it.scoped("runs at 16:15 Frankfurt time and retries until the day is published", () => {
    const published = { date: "2025-04-24" }
    const { calls, layer } = fakeProvider(published)
    const outcomes: Array<Exit.Exit<RefreshResult, unknown>> = []
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-04-25T10:00:00Z"))
      const fiber = yield* Effect.forkScoped(
        runDailyRefresh({ runAtStart: false, onRun: (exit) => Effect.sync(() => void outcomes.push(exit)) })
      )
      yield* TestClock.adjust(Duration.hours(4))
      expect(calls).toEqual([])
      yield* TestClock.adjust(Duration.minutes(15)) // 14:15 UTC = 16:15 CEST
      expect(calls).toEqual(["latest"])
      yield* TestClock.adjust(Duration.minutes(15))
      expect(calls).toEqual(["latest", "latest"])
      published.date = "2025-04-25"
      yield* TestClock.adjust(Duration.minutes(15))
      expect(calls).toHaveLength(3)
      expect(outcomes).toHaveLength(1)
      expect(Exit.isSuccess(outcomes[0]!) && outcomes[0].value.upToDate).toBe(true)
      yield* TestClock.adjust(Duration.hours(2))
      expect(calls).toHaveLength(3)
      published.date = "2025-04-28"
      yield* TestClock.adjust(Duration.days(3)) // Monday 16:15
      expect(calls).toHaveLength(4)
      expect(outcomes).toHaveLength(2)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
    }).pipe(Effect.provide(layer), Effect.provide(FxStore.layerInMemory(stored(upTo("2025-04-24")))))
  })

  it.scoped("survives failures: retries, reports the failure, and runs again the next day", () => {
    const failures = { remaining: 100 }
    const { calls, layer } = fakeProvider({ date: "2025-04-28" }, failures)
    const outcomes: Array<Exit.Exit<RefreshResult, unknown>> = []
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-04-25T14:00:00Z"))
      yield* Effect.forkScoped(
        runDailyRefresh({
          runAtStart: false,
          retryTimes: 2,
          retryEvery: Duration.minutes(10),
          onRun: (exit) => Effect.sync(() => void outcomes.push(exit))
        })
      )
      yield* TestClock.adjust(Duration.minutes(15))
      yield* TestClock.adjust(Duration.minutes(10))
      yield* TestClock.adjust(Duration.minutes(10))
      expect(calls).toHaveLength(3)
      expect(outcomes).toHaveLength(1)
      expect(Exit.isFailure(outcomes[0]!)).toBe(true)
      failures.remaining = 0
      yield* TestClock.adjust(Duration.days(3))
      expect(calls).toHaveLength(4)
      expect(outcomes).toHaveLength(2)
      expect(Exit.isSuccess(outcomes[1]!)).toBe(true)
    }).pipe(Effect.provide(layer), Effect.provide(FxStore.layerInMemory(stored(upTo("2025-04-24")))))
  })
})
