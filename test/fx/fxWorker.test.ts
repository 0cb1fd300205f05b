import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { FxWorkerSettings, makeFxWorker } from "@scaledger/workers/fx/FxWorker"
import type { RefreshResult } from "@scaledger/workers/fx/index"
import { ConfigProvider, Effect, Exit, Layer, Option, Queue, Scope, TestClock } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bundledCsv, startFakeEcb } from "./fakeFxServers.js"

const config = (entries: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(entries)))

const worker = (options: Parameters<typeof makeFxWorker>[0] = {}) =>
  makeFxWorker(options).pipe(Layer.provide([FxRates.Default, FetchHttpClient.layer, FxWorkerSettings.Live]))

/** Starts the worker in a scope of its own, as a process start does; returns the wall-clock time the start took. */
const start = (layer: Layer.Layer<never, unknown, SqlClient.SqlClient>, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const started = performance.now()
    yield* Layer.buildWithScope(layer, scope)
    return Math.round(performance.now() - started)
  }).pipe(Effect.orDie)

const startAndStop = (layer: Layer.Layer<never, unknown, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const millis = yield* start(layer, scope)
    yield* Scope.close(scope, Exit.void)
    return millis
  })

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

for (const [name, database] of backends) {
  layer(Layer.merge(database, FxRates.Default.pipe(Layer.provide(database))), { timeout: 120_000 })(
    `FX worker on ${name}`,
    (it) => {
      it.scoped("loads the bundled history into an empty database once, and makes no request with FX_REFRESH=off", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          const sql = yield* SqlClient.SqlClient
          const ecb = yield* startFakeEcb()
          const offline = worker().pipe(
            Layer.provide(Layer.setConfigProvider(config({ FX_REFRESH: "off", FX_BASE_URL: ecb.baseUrl })))
          )

          const firstAt = Date.parse("2025-05-12T06:00:00Z")
          yield* TestClock.setTime(firstAt)
          expect((yield* rates.status()).storedDays).toBe(0)
          const millis = yield* startAndStop(offline)
          console.log(`${name}: first start loaded the bundled history in ${millis} ms`)
          const loaded = yield* rates.status()
          expect(loaded).toMatchObject({
            newestDay: "2025-05-09",
            storedDays: 6747,
            historyDays: 6747,
            historyLoadedAt: new Date(firstAt),
            refreshAttemptedAt: null,
            stale: false
          })

          yield* TestClock.setTime(Date.parse("2025-05-12T07:00:00Z"))
          const again = yield* startAndStop(offline)
          console.log(`${name}: second start (nothing to load) took ${again} ms`)
          expect(yield* rates.status()).toMatchObject({
            storedDays: 6747,
            historyDays: 6747,
            historyLoadedAt: new Date(firstAt)
          })

          // A store that lacks a bundled day gets it back on the next start, and only that day.
          yield* sql`DELETE FROM fx_rates WHERE day = '2003-03-03'`
          const thirdAt = Date.parse("2025-05-12T08:00:00Z")
          yield* TestClock.setTime(thirdAt)
          yield* startAndStop(offline)
          expect(yield* rates.status()).toMatchObject({
            storedDays: 6747,
            historyDays: 1,
            historyLoadedAt: new Date(thirdAt)
          })
          expect(Option.map(yield* rates.latestWith("GBP", "2003-03-03"), (d) => d.date)).toEqual(
            Option.some("2003-03-03")
          )

          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
          expect(ecb.requests).toEqual([])
        }))
    }
  )
}

/** The bundled history cut at `lastDay`, as a file of its own (newest row first, like the ECB's). */
const truncatedHistory = (lastDay: string) => {
  const dir = mkdtempSync(join(tmpdir(), "scaledger-fx-"))
  const path = join(dir, "eurofxref-hist.csv")
  const csv = bundledCsv()
  writeFileSync(path, `${csv.header}\n${csv.lines.filter((line) => line.slice(0, 10) <= lastDay).join("\n")}\n`)
  return Effect.as(Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))), path)
}

layer(Layer.merge(TestDatabase.pglite, FxRates.Default.pipe(Layer.provide(TestDatabase.pglite))), { timeout: 120_000 })(
  "FX worker refresh",
  (it) => {
    it.scoped("refreshes from the fake ECB after loading, records each outcome, and stops with its scope", () =>
      Effect.gen(function*() {
        const rates = yield* FxRates
        const ecb = yield* startFakeEcb()
        const bundledPath = yield* truncatedHistory("2025-04-30")
        const outcomes = yield* Queue.unbounded<Exit.Exit<RefreshResult, unknown>>()
        const live = worker({ bundledPath, refresh: { retryTimes: 0, onRun: (exit) => Queue.offer(outcomes, exit) } })
          .pipe(
            Layer.provide(Layer.setConfigProvider(config({ FX_PROVIDER: "ecb", FX_BASE_URL: ecb.baseUrl })))
          )

        // Friday 2025-05-09, 17:00 in Frankfurt: that day's rates are out.
        const friday = Date.parse("2025-05-09T15:00:00Z")
        yield* TestClock.setTime(friday)
        const scope = yield* Scope.make()
        yield* start(live, scope)

        const first = yield* Queue.take(outcomes)
        expect(Exit.isSuccess(first) && first.value).toMatchObject({
          source: "ecb-via-eurofxref",
          fetchedDays: 7,
          newestBefore: Option.some("2025-04-30"),
          newestAfter: Option.some("2025-05-09"),
          upToDate: true
        })
        expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-hist-90d.xml"])
        expect(yield* rates.status()).toMatchObject({
          newestDay: "2025-05-09",
          storedDays: 6747,
          historyDays: 6741,
          refreshAttemptedAt: new Date(friday),
          refreshSucceededAt: new Date(friday),
          refreshSource: "ecb-via-eurofxref",
          refreshError: null
        })
        expect(Option.getOrThrow(yield* rates.latestWith("GBP", "2025-05-09")).perEur).toMatchObject({
          GBP: "0.8477",
          USD: "1.1252"
        })

        // The next run is Monday 16:15 in Frankfurt (14:15 UTC); this one fails and the failure is recorded.
        ecb.failNext({ kind: "status", status: 404 })
        const monday = Date.parse("2025-05-12T14:15:00Z")
        yield* TestClock.adjust(monday - friday - 1)
        expect(yield* Queue.size(outcomes)).toBe(0)
        yield* TestClock.adjust(1)
        const second = yield* Queue.take(outcomes)
        expect(Exit.isFailure(second)).toBe(true)
        expect(ecb.requests).toEqual([
          "/stats/eurofxref/eurofxref-hist-90d.xml",
          "/stats/eurofxref/eurofxref-daily.xml"
        ])
        const failed = yield* rates.status()
        expect(failed).toMatchObject({ refreshAttemptedAt: new Date(monday), refreshSucceededAt: new Date(friday) })
        expect(failed.refreshError).toContain("404")

        // Closing the scope interrupts the fiber: Tuesday's run never happens.
        yield* Scope.close(scope, Exit.void)
        yield* TestClock.adjust(Date.parse("2025-05-14T00:00:00Z") - monday)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
        expect(yield* Queue.size(outcomes)).toBe(0)
        expect(ecb.requests).toHaveLength(2)
      }))
  }
)
