import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { FxRates, FxStoreLive } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ReportingCurrencies } from "@scaledger/domain/Currency"
import { DayIndex, type DayRates, FxStore, quoteFromDays, quoteWith, type StoredDay } from "@scaledger/domain/fx/index"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { readFileSync } from "node:fs"

// The real ECB history, read with a few lines of its own (not the workers' parser): newest row first, `N/A` cells
// left out, numbers exactly as written.
const csv = readFileSync(new URL("../../packages/workers/assets/ecb/eurofxref-hist.csv", import.meta.url), "utf8")
const [headerLine, ...lines] = csv.trim().split("\n")
const header = headerLine!.split(",")
const history: Array<DayRates> = lines.map((line) => {
  const cells = line.split(",")
  const perEur: Record<string, string> = {}
  header.forEach((code, i) => {
    if (i > 0 && code !== "" && cells[i] !== "N/A") {
      perEur[code] = cells[i]!.replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "")
    }
  })
  return { date: cells[0]!, perEur }
}).reverse()
const stored: Array<StoredDay> = history.map((d) => ({ ...d, source: "ecb-via-eurofxref" }))
const index = DayIndex.make(stored)

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

/** A deterministic spread of dates over 1999-2025, weekends and holidays included. */
const sampleDates = (count: number, seed = 7): Array<string> => {
  let x = seed
  const out: Array<string> = []
  const start = Date.UTC(1998, 11, 20)
  const span = Date.UTC(2025, 4, 20) - start
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    out.push(new Date(start + Math.floor((x / 2147483648) * span / 86_400_000) * 86_400_000).toISOString().slice(0, 10))
  }
  return out
}

for (const [name, database] of backends) {
  describe(name, () => {
    layer(
      Layer.provideMerge(Layer.merge(FxRates.Default, FxStoreLive.pipe(Layer.provide(FxRates.Default))), database),
      {
        timeout: 120_000
      }
    )((it) => {
      it.effect("an empty store has no days, answers None and is stale", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          yield* TestClock.setTime(Date.parse("2025-05-12T10:00:00Z"))
          expect(yield* rates.newestDay()).toEqual(Option.none())
          expect(yield* rates.latestWith("GBP", "2025-05-09")).toEqual(Option.none())
          const none = yield* rates.ratesOn("GBP", ["2025-05-09", "2000-01-03"])
          expect([...none.entries()]).toEqual([["2000-01-03", Option.none()], ["2025-05-09", Option.none()]])
          expect(yield* rates.status()).toMatchObject({
            today: "2025-05-12",
            newestDay: null,
            stale: true,
            storedDays: 0
          })
        }))

      it.effect("loads the whole bundled history in one upsert, idempotently", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          const started = Date.now()
          expect(yield* rates.upsert("ecb-via-eurofxref", history)).toBe(6747)
          const took = Date.now() - started
          console.log(`${name}: upserted 6,747 days in ${took} ms`)
          expect(yield* rates.newestDay()).toEqual(Option.some("2025-05-09"))
          expect(yield* rates.countBetween("1999-01-04", "2025-05-09")).toBe(6747)
          // The same days again change nothing; the numbers come back exactly as written.
          expect(yield* rates.upsert("ecb-via-eurofxref", history)).toBe(0)
          expect(yield* rates.insertMissing("ecb-via-eurofxref", history)).toBe(0)
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ jpy: string; n: string }>`
            SELECT per_eur->>'JPY' AS jpy, (per_eur->>'IDR')::numeric * 1 AS n FROM fx_rates WHERE day = '2025-05-09'`
          expect(row).toEqual({ jpy: "163.36", n: "18606.59" })
        }))

      it.effect("latestWith finds the same day as the in-memory index, whole days included", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          const sat = Option.getOrThrow(yield* rates.latestWith("GBP", "2025-05-10"))
          expect(sat).toEqual({
            date: "2025-05-09",
            source: "ecb-via-eurofxref",
            perEur: index.latestWith("GBP", "2025-05-09").pipe(Option.getOrThrow).perEur
          })
          expect(Object.keys(sat.perEur)).toHaveLength(30)
          expect(yield* rates.latestWith("MXN", "2008-01-01")).toEqual(Option.none())
          expect(Option.map(yield* rates.latestWith("MXN", "2008-01-02"), (d) => d.date)).toEqual(
            Option.some("2008-01-02")
          )
          expect(yield* rates.latestWith("USD", "1999-01-03")).toEqual(Option.none())
          const dates = sampleDates(60)
          for (const [i, date] of dates.entries()) {
            const quote = ReportingCurrencies[i % ReportingCurrencies.length]!
            expect(yield* rates.latestWith(quote, date), `${quote} ${date}`).toEqual(index.latestWith(quote, date))
          }
          expect(yield* rates.earliestWith("INR")).toEqual(Option.some("2009-01-02"))
          expect(yield* rates.earliestWith("EUR")).toEqual(Option.some("1999-01-04"))
        }))

      it.effect("ratesOn converts many dates in one query, as the quote rules do one by one", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          const dates = [
            ...sampleDates(400, 11),
            "2025-05-10",
            "2025-04-18",
            "2025-05-09",
            "2007-12-31",
            "1999-01-01",
            "2030-01-01"
          ]
          for (const quote of ["GBP", "EUR", "USD", "MXN", "JPY"] as const) {
            const answers = yield* rates.ratesOn(quote, dates)
            expect(answers.size).toBe(new Set(dates).size)
            for (const date of dates) {
              const expected = Either.getRight(quoteFromDays(index, { currency: quote, date, today: "2030-01-01" }))
              expect(answers.get(date), `${quote} ${date}`).toEqual(
                Option.map(
                  expected,
                  (q) => ({ rate: q.rate, source: q.source, rateDate: q.date, carriedForward: q.carriedForward })
                )
              )
            }
          }
          const gbp = yield* rates.ratesOn("GBP", ["2025-05-10", "2025-04-18", "2025-05-09"])
          expect(gbp.get("2025-05-09")).toEqual(
            Option.some({
              rate: "0.75337717739068610025",
              source: "ecb-via-eurofxref",
              rateDate: "2025-05-09",
              carriedForward: false
            })
          )
          expect(Option.getOrThrow(gbp.get("2025-05-10")!)).toMatchObject({
            rateDate: "2025-05-09",
            carriedForward: true
          })
          expect(Option.getOrThrow(gbp.get("2025-04-18")!)).toMatchObject({
            rateDate: "2025-04-17",
            carriedForward: true
          })
          expect((yield* rates.ratesOn("GBP", [])).size).toBe(0)
          expect(Option.isNone((yield* rates.ratesOn("MXN", ["2007-12-31"])).get("2007-12-31")!)).toBe(true)
        }))

      it.effect("serves the FxStore seam that quotes read", () =>
        Effect.gen(function*() {
          const store = yield* FxStore
          const quote = yield* quoteWith(store.latestWith)({ currency: "gbp", date: "2025-05-11", today: "2025-05-12" })
          expect(quote).toMatchObject({
            quote: "GBP",
            date: "2025-05-09",
            rate: "0.75337717739068610025",
            carriedForward: true
          })
          expect(yield* store.newestDay()).toEqual(Option.some("2025-05-09"))
        }))

      it.effect("status: stale after more than 2 TARGET business days, with the last load and refresh", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          yield* TestClock.setTime(Date.parse("2025-05-13T23:00:00Z"))
          expect(yield* rates.status()).toMatchObject({
            newestDay: "2025-05-09",
            stale: false,
            businessDaysBehind: 2,
            storedDays: 6747
          })
          // Wednesday: Wednesday's publication is due from 16:15 Berlin time (14:15 UTC in summer), not at midnight.
          yield* TestClock.setTime(Date.parse("2025-05-14T14:14:00Z"))
          expect(yield* rates.status()).toMatchObject({ stale: false, businessDaysBehind: 2 })
          yield* TestClock.setTime(Date.parse("2025-05-14T14:15:00Z"))
          expect(yield* rates.status()).toMatchObject({ stale: true, businessDaysBehind: 3 })
          const at = new Date("2025-05-14T00:30:00Z")
          yield* rates.recordHistoryLoad(at, 6747)
          yield* rates.recordRefresh(at, { ok: false, error: "ecb-via-eurofxref timeout" })
          expect(yield* rates.status()).toMatchObject({
            historyLoadedAt: at,
            historyDays: 6747,
            refreshAttemptedAt: at,
            refreshSucceededAt: null,
            refreshError: "ecb-via-eurofxref timeout"
          })
          const later = new Date("2025-05-14T14:20:00Z")
          yield* rates.recordRefresh(later, { ok: true, source: "ecb-via-frankfurter" })
          expect(yield* rates.status()).toMatchObject({
            refreshAttemptedAt: later,
            refreshSucceededAt: later,
            refreshSource: "ecb-via-frankfurter",
            refreshError: null
          })
        }))

      it.effect("upsert replaces whole days; insertMissing keeps stored days", () =>
        Effect.gen(function*() {
          const rates = yield* FxRates
          const original = history.find((d) => d.date === "2025-05-09")!
          const corrected: DayRates = { date: "2025-05-09", perEur: { USD: "1.125", GBP: "0.85" } }
          const next: DayRates = { date: "2025-05-12", perEur: { USD: "1.1106", GBP: "0.8414" } }
          expect(yield* rates.insertMissing("ecb-via-frankfurter", [corrected, next])).toBe(1)
          expect(Option.getOrThrow(yield* rates.latestWith("GBP", "2025-05-09")).perEur).toEqual(original.perEur)
          expect(yield* rates.upsert("ecb-via-frankfurter", [corrected, next])).toBe(1)
          expect(yield* rates.latestWith("JPY", "2025-05-09")).toEqual(index.latestWith("JPY", "2025-05-08"))
          expect(yield* rates.latestWith("GBP", "2025-05-09")).toEqual(
            Option.some({ ...corrected, source: "ecb-via-frankfurter" })
          )
          expect(yield* rates.newestDay()).toEqual(Option.some("2025-05-12"))
          // A later entry for the same date wins, as in the in-memory store.
          expect(yield* rates.upsert("ecb-via-eurofxref", [corrected, original])).toBe(1)
          expect(yield* rates.latestWith("GBP", "2025-05-09")).toEqual(index.latestWith("GBP", "2025-05-09"))
        }))
    })
  })
}
