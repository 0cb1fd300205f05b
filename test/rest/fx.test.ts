import type { HttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ensureBundledHistory } from "@scaledger/workers/fx/FxWorker"
import { BigNumber } from "bignumber.js"
import { Effect, Layer, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { call, newKey, type Reply, restServer } from "../support/RestHarness.js"

// The ECB numbers as written in the bundled CSV, looked up by column name.
const csvLines = readFileSync(new URL("../../packages/workers/assets/ecb/eurofxref-hist.csv", import.meta.url), "utf8")
  .trim()
  .split("\n")
const csvHeader = csvLines[0]!.split(",")
const perEur = (date: string, code: string): string => {
  const cells = csvLines.find((line) => line.startsWith(`${date},`))!.split(",")
  return cells[csvHeader.indexOf(code)]!
}

/** (EUR→X)/(EUR→USD) to 20 significant digits, half-even, as documented for every quote. */
const cross = (numerator: string, denominator: string): string =>
  BigNumber.clone({ DECIMAL_PLACES: 80 })(numerator).div(denominator).precision(20, BigNumber.ROUND_HALF_EVEN).toFixed()

const expectError = (reply: Reply, status: number, code: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(Object.keys(reply.body)).toEqual(["error"])
  const error = reply.body.error
  expect(error.code).toBe(code)
  expect(error.message.length).toBeGreaterThan(0)
  expect(error.requestId).toMatch(/^req_[0-9A-Za-z]{20}$/)
  expect(reply.headers["request-id"]).toBe(error.requestId)
  expect(error.docUrl).toMatch(new RegExp(`^http://[^/]+/docs/errors#${code}$`))
  return error
}

/** Monday 2025-05-12, 10:00 UTC: the newest bundled day (Friday 2025-05-09) is one business day old. */
const MONDAY = Date.parse("2025-05-12T10:00:00Z")

const withHistory = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.orDie
)

layer(restServer(withHistory), { timeout: 60_000 })("GET /v1/fx/{currency}/{date}", (it) => {
  const get = (path: string, key: string): Effect.Effect<Reply, never, HttpClient.HttpClient> =>
    call("GET", path, { key })

  describe("quotes", () => {
    it.effect("GBP on 2025-05-09 is (EUR→GBP)/(EUR→USD) from that day's ECB numbers", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const { key } = yield* newKey("fx-reader")
        expect([perEur("2025-05-09", "GBP"), perEur("2025-05-09", "USD")]).toEqual(["0.8477", "1.1252"])
        const reply = yield* get("/v1/fx/GBP/2025-05-09", key)
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          quote: "GBP",
          date: "2025-05-09",
          rate: cross("0.8477", "1.1252"),
          source: "ecb-via-eurofxref",
          carriedForward: false,
          derivation: "cross rate through EUR: (EUR→GBP)/(EUR→USD)",
          perEur: { GBP: "0.8477", USD: "1.1252" },
          stale: false
        })
        expect(reply.body.rate).toBe("0.75337717739068610025")
      }))

    it.effect("a Saturday and Good Friday carry the previous business day forward", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const { key } = yield* newKey("fx-weekend")
        const saturday = yield* get("/v1/fx/GBP/2025-05-10", key)
        expect(saturday.body).toMatchObject({
          date: "2025-05-09",
          rate: cross("0.8477", "1.1252"),
          carriedForward: true,
          stale: false
        })
        const goodFriday = yield* get("/v1/fx/GBP/2025-04-18", key)
        expect(goodFriday.status).toBe(200)
        expect(goodFriday.body).toMatchObject({
          date: "2025-04-17",
          rate: cross(perEur("2025-04-17", "GBP"), perEur("2025-04-17", "USD")),
          carriedForward: true,
          perEur: { GBP: "0.85873", USD: "1.136" }
        })
        const thursday = yield* get("/v1/fx/GBP/2025-04-17", key)
        expect(thursday.body).toMatchObject({ date: "2025-04-17", carriedForward: false })
      }))

    it.effect("EUR is 1/(EUR→USD); USD is 1; codes are case-insensitive", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const { key } = yield* newKey("fx-eur")
        const eur = yield* get("/v1/fx/eur/2025-05-09", key)
        expect(eur.body).toMatchObject({
          quote: "EUR",
          rate: cross("1", perEur("2025-05-09", "USD")),
          derivation: "cross rate through EUR: 1/(EUR→USD)",
          perEur: { USD: "1.1252" }
        })
        expect(eur.body.rate).toBe("0.88873089228581585496")
        const usd = yield* get("/v1/fx/Usd/2025-05-10", key)
        expect(usd.body).toMatchObject({ quote: "USD", rate: "1", date: "2025-05-09", carriedForward: true })
        const jpy = yield* get("/v1/fx/jPy/2001-06-15", key)
        expect(jpy.body).toMatchObject({
          quote: "JPY",
          date: "2001-06-15",
          rate: cross(perEur("2001-06-15", "JPY"), perEur("2001-06-15", "USD"))
        })
      }))

    it.effect("today is accepted and carried forward until it is published; stale once the data lags", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("fx-today")
        yield* TestClock.setTime(MONDAY)
        expect((yield* get("/v1/fx/GBP/2025-05-12", key)).body).toMatchObject({
          date: "2025-05-09",
          carriedForward: true,
          stale: false
        })
        // Thursday: Monday, Tuesday, Wednesday and Thursday were business days, none stored: stale.
        yield* TestClock.setTime(Date.parse("2025-05-15T10:00:00Z"))
        expect((yield* get("/v1/fx/GBP/2025-05-15", key)).body).toMatchObject({
          date: "2025-05-09",
          carriedForward: true,
          stale: true
        })
        expect((yield* get("/v1/fx/GBP/2025-05-12", key)).body).toMatchObject({
          date: "2025-05-09",
          carriedForward: true,
          stale: true
        })
        // Saturday after the newest day had no publication to miss: its answer is final.
        expect((yield* get("/v1/fx/GBP/2025-05-10", key)).body).toMatchObject({
          date: "2025-05-09",
          carriedForward: true,
          stale: false
        })
        // A day the store covers is final, whatever the lag.
        expect((yield* get("/v1/fx/GBP/2025-05-09", key)).body).toMatchObject({ carriedForward: false, stale: false })
      }))
  })

  describe("errors", () => {
    it.effect("an unsupported currency is 400 unsupported_currency with the 21 codes", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const { key } = yield* newKey("fx-currency")
        // `ſ` and `ı` upper-case to S and I in JavaScript: "uſd" and "ınr" must not pass for USD and INR.
        for (const code of ["XAU", "HUF", "BGN", "usdollar", "uſd", "ınr"]) {
          const error = expectError(yield* get(`/v1/fx/${code}/2025-05-09`, key), 400, "unsupported_currency")
          expect(error.details.currency).toBe(code)
          expect(error.details.supported).toEqual([
            "USD",
            "EUR",
            "GBP",
            "JPY",
            "CHF",
            "CAD",
            "AUD",
            "NZD",
            "SGD",
            "HKD",
            "CNY",
            "KRW",
            "INR",
            "SEK",
            "NOK",
            "DKK",
            "PLN",
            "CZK",
            "MXN",
            "BRL",
            "ZAR"
          ])
        }
        // A long refused value is quoted by its first 64 characters, not echoed whole.
        const long = expectError(yield* get(`/v1/fx/${"Q".repeat(5_000)}/2025-05-09`, key), 400, "unsupported_currency")
        expect(long.details.currency).toBe(`${"Q".repeat(64)}…`)
        expect(long.message.length).toBeLessThan(200)
        const date = expectError(yield* get(`/v1/fx/GBP/${"9".repeat(5_000)}`, key), 400, "invalid_date")
        expect(date.details).toEqual({ date: `${"9".repeat(64)}…`, reason: "malformed" })
        expect(date.message.length).toBeLessThan(200)
      }))

    it.effect("malformed, future and too-early dates are 400 invalid_date, told apart by details.reason", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const { key } = yield* newKey("fx-dates")
        for (const date of ["2025-13-01", "2025-02-30", "yesterday", "2025-5-09", "20250509"]) {
          const error = expectError(yield* get(`/v1/fx/GBP/${date}`, key), 400, "invalid_date")
          expect(error.details, date).toEqual({ date, reason: "malformed" })
        }
        const future = expectError(yield* get("/v1/fx/GBP/2025-05-13", key), 400, "invalid_date")
        expect(future.details).toEqual({ date: "2025-05-13", reason: "in_future", today: "2025-05-12" })
        // "Today" is the UTC date: 23:30 UTC on the 12th is still the 12th, 00:30 UTC on the 13th is the 13th.
        yield* TestClock.setTime(Date.parse("2025-05-12T23:30:00Z"))
        expectError(yield* get("/v1/fx/GBP/2025-05-13", key), 400, "invalid_date")
        yield* TestClock.setTime(Date.parse("2025-05-13T00:30:00Z"))
        expect((yield* get("/v1/fx/GBP/2025-05-13", key)).status).toBe(200)
        const early = expectError(yield* get("/v1/fx/GBP/1998-12-31", key), 400, "invalid_date")
        expect(early.details).toEqual({ date: "1998-12-31", reason: "before_history", earliest: "1999-01-04" })
        expect((yield* get("/v1/fx/GBP/1999-01-04", key)).body).toMatchObject({
          date: "1999-01-04",
          carriedForward: false
        })
      }))

    it.effect("a date before the currency's first ECB rate is 404 not_found", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const { key } = yield* newKey("fx-mxn")
        const error = expectError(yield* get("/v1/fx/MXN/2007-12-31", key), 404, "not_found")
        expect(error.message).toContain("MXN")
        expect(error.details).toEqual({ quote: "MXN", date: "2007-12-31", firstAvailable: "2008-01-02" })
        expect((yield* get("/v1/fx/MXN/2008-01-02", key)).body).toMatchObject({ quote: "MXN", date: "2008-01-02" })
      }))

    it.effect("needs a key, like every /v1 route", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(MONDAY)
        const reply = yield* call("GET", "/v1/fx/GBP/2025-05-09")
        expectError(reply, 401, "unauthorized")
        expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="scaledger"`)
        expectError(
          yield* call("GET", "/v1/fx/GBP/2025-05-09", { key: `sk_live_${"A".repeat(32)}` }),
          401,
          "unauthorized"
        )
      }))

    it.effect("is described in the OpenAPI document", () =>
      Effect.gen(function*() {
        const openapi: Reply = yield* call("GET", "/v1/openapi.json")
        expect(Object.keys(openapi.body.paths)).toContain("/v1/fx/{currency}/{date}")
      }))
  })
})

layer(restServer(TestDatabase.postgres), { timeout: 60_000 })("GET /v1/fx before any rates are loaded", (it) => {
  it.effect("answers 503 service_unavailable, not 404, with Retry-After", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MONDAY)
      const { key } = yield* newKey("fx-early")
      const reply = yield* call("GET", "/v1/fx/GBP/2025-05-09", { key })
      const error = expectError(reply, 503, "service_unavailable")
      expect(error.message).toContain("not loaded")
      expect(reply.headers["retry-after"]).toBe("1")
      // The OpenAPI document declares it.
      const doc = (yield* call("GET", "/v1/openapi.json")).body
      const declared = doc.paths["/v1/fx/{currency}/{date}"].get.responses["503"]
      const response = declared.$ref ? doc.components.responses[declared.$ref.split("/").pop()] : declared
      expect(Object.keys(response.headers)).toContain("Retry-After")
    }))
})
