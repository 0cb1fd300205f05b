import { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { FxStore } from "@scaledger/domain/fx/FxStore"
import { quoteWith } from "@scaledger/domain/fx/Quote"
import type { DayRates } from "@scaledger/domain/fx/Schemas"
import {
  FxParseError,
  FxProvider,
  FxProviderError,
  FxProviderLive,
  type HttpPolicy,
  makeEcbProvider,
  makeFrankfurterProvider,
  parseFrankfurterDay,
  refreshOnce
} from "@scaledger/workers/fx/index"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import {
  bundledCsv,
  clockAt,
  type CsvDay,
  rateLimited,
  startFakeEcb,
  startFakeFrankfurter,
  status500
} from "./fakeFxServers.js"

// The expected days come from the CSV as written, read by the fake's own reader (not by the workers' parsers).
const canonical = (r: string) => (r.includes(".") ? r.replace(/0+$/, "").replace(/\.$/, "") : r)
const asDayRates = (d: CsvDay): DayRates => ({
  date: d.date,
  perEur: Object.fromEntries(d.rates.map(([c, r]) => [c, canonical(r)]))
})
const csvDays = bundledCsv().days.map(asDayRates).reverse()
const csvFrom = (date: string) => csvDays.filter((d) => d.date >= date)
const same = (actual: ReadonlyArray<DayRates>, expected: ReadonlyArray<DayRates>) =>
  expect(JSON.stringify(actual.map((d) => ({ date: d.date, perEur: sortKeys(d.perEur) }))))
    .toBe(JSON.stringify(expected.map((d) => ({ date: d.date, perEur: sortKeys(d.perEur) }))))
const sortKeys = (r: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1)))

const fast: Partial<HttpPolicy> = { retryBaseDelay: Duration.millis(10), timeout: Duration.seconds(10) }
const Http = NodeHttpClient.layer
/** Providers read "today" from the clock: these tests run on Monday 2025-05-12 in the morning. */
const onMonday = Effect.withClock(clockAt("2025-05-12T08:00:00Z"))

describe("ECB provider against the fake ECB server", () => {
  it.scopedLive("latest() reads eurofxref-daily.xml", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast })
      const result = yield* provider.latest()
      expect(result.source).toBe("ecb-via-eurofxref")
      same(result.days, csvFrom("2025-05-09"))
      expect(result.days[0]!.perEur).toMatchObject({ USD: "1.1252", GBP: "0.8477", JPY: "163.36" })
      expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-daily.xml"])
    }).pipe(Effect.provide(Http)))

  it.scopedLive("since(date) within 90 days reads the 90-day file", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast })
      const result = yield* onMonday(provider.since("2025-03-03"))
      same(result.days, csvFrom("2025-03-03"))
      expect(result.days[0]!.date).toBe("2025-03-03")
      expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-hist-90d.xml"])
    }).pipe(Effect.provide(Http)))

  it.scopedLive("since(date) further back reads the zip (the full history)", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast })
      const result = yield* onMonday(provider.since("2024-01-01"))
      same(result.days, csvFrom("2024-01-01"))
      expect(result.days[0]!.date).toBe("2024-01-02")
      expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-hist.zip"])
      const all = yield* onMonday(provider.since("1999-01-04"))
      expect(all.days).toHaveLength(6747)
      same(all.days, csvDays)
    }).pipe(Effect.provide(Http)))

  it.scopedLive("falls back to the full history when the 90-day file does not reach back far enough", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      ecb.setWindowDays(30)
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast })
      const result = yield* onMonday(provider.since("2025-03-03"))
      same(result.days, csvFrom("2025-03-03"))
      expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-hist-90d.xml", "/stats/eurofxref/eurofxref-hist.zip"])
    }).pipe(Effect.provide(Http)))

  it.scopedLive("the full history as XML parses to the same numbers as the CSV", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast, fullHistory: "xml" })
      const result = yield* onMonday(provider.since("1999-01-04"))
      same(result.days, csvDays)
      expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-hist.xml"])
    }).pipe(Effect.provide(Http)))

  it.scopedLive("retries 500s and 429s (honouring Retry-After), then succeeds", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast })
      ecb.failNext(status500, status500, rateLimited(1))
      const started = Date.now()
      const result = yield* provider.latest()
      const elapsed = Date.now() - started
      same(result.days, csvFrom("2025-05-09"))
      expect(ecb.count("eurofxref-daily.xml")).toBe(4)
      expect(elapsed).toBeGreaterThanOrEqual(950)
    }).pipe(Effect.provide(Http)))

  it.scopedLive("gives up after its retries with a typed error", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: { ...fast, retries: 2 } })
      ecb.failNext(status500, status500, status500, status500)
      const error = yield* Effect.flip(provider.latest())
      expect(error).toBeInstanceOf(FxProviderError)
      expect(error).toMatchObject({ reason: "http-status", status: 500, source: "ecb-via-eurofxref" })
      expect(error.url).toBe(`${ecb.baseUrl}/eurofxref-daily.xml`)
      expect(ecb.count()).toBe(3)
      ecb.failNext(rateLimited(0), rateLimited(0), rateLimited(0))
      const limited = yield* Effect.flip(provider.latest())
      expect(limited).toMatchObject({ reason: "rate-limited", status: 429, retryAfterMs: 0 })
    }).pipe(Effect.provide(Http)))

  it.scopedLive("does not retry other 4xx", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: `${ecb.origin}/wrong/path`, http: fast })
      const error = yield* Effect.flip(provider.latest())
      expect(error).toMatchObject({ reason: "http-status", status: 404 })
      expect(ecb.count()).toBe(1)
    }).pipe(Effect.provide(Http)))

  it.scopedLive("retries connection resets and time-outs", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({
        baseUrl: ecb.baseUrl,
        http: { ...fast, timeout: Duration.millis(300), retries: 3 }
      })
      ecb.failNext({ kind: "reset" }, { kind: "hang" })
      same((yield* provider.latest()).days, csvFrom("2025-05-09"))
      expect(ecb.count()).toBe(3)
      ecb.failNext({ kind: "hang" }, { kind: "hang" }, { kind: "hang" }, { kind: "hang" })
      const error = yield* Effect.flip(provider.latest())
      expect(error.reason).toBe("timeout")
      expect(ecb.count()).toBe(7)
    }).pipe(Effect.provide(Http)))

  it.scopedLive("malformed XML, an HTML page and a broken zip are typed errors, not empty results", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const provider = yield* makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast })
      ecb.failNext({ kind: "malformed" })
      const truncated = yield* Effect.flip(provider.latest())
      expect(truncated.reason).toBe("malformed")
      expect(truncated.cause).toBeInstanceOf(FxParseError)
      expect(ecb.count()).toBe(1)
      ecb.failNext({ kind: "html" })
      expect((yield* Effect.flip(provider.latest())).reason).toBe("malformed")
      ecb.failNext({ kind: "malformed" })
      const zip = yield* Effect.flip(onMonday(provider.since("2020-01-01")))
      expect(zip).toMatchObject({ reason: "malformed" })
      expect((zip.cause as FxParseError).format).toBe("ecb-zip")
    }).pipe(Effect.provide(Http)))
})

describe("Frankfurter provider against the fake Frankfurter server", () => {
  it.scopedLive("latest() reads /v1/latest?base=EUR", () =>
    Effect.gen(function*() {
      const ff = yield* startFakeFrankfurter()
      const provider = yield* makeFrankfurterProvider({ baseUrl: ff.baseUrl, http: fast })
      const result = yield* provider.latest()
      expect(result.source).toBe("ecb-via-frankfurter")
      same(result.days, csvFrom("2025-05-09"))
      expect(ff.requests).toEqual(["/v1/latest?base=EUR"])
    }).pipe(Effect.provide(Http)))

  it.scopedLive("since(date) reads ranges in 90-day windows with the same numbers as the CSV", () =>
    Effect.gen(function*() {
      const ff = yield* startFakeFrankfurter()
      const provider = yield* makeFrankfurterProvider({ baseUrl: ff.baseUrl, http: fast })
      const result = yield* onMonday(provider.since("2025-01-01"))
      same(result.days, csvFrom("2025-01-01"))
      expect(ff.requests).toEqual([
        "/v1/2025-01-01..2025-03-31?base=EUR",
        "/v1/2025-04-01..2025-05-12?base=EUR"
      ])
      const long = yield* onMonday(provider.since("2020-01-01"))
      same(long.days, csvFrom("2020-01-01"))
      expect(ff.count("/v1/")).toBe(2 + 22)
    }).pipe(Effect.provide(Http)))

  it.scopedLive("a range with no publication is empty, not an error", () =>
    Effect.gen(function*() {
      const ff = yield* startFakeFrankfurter()
      const provider = yield* makeFrankfurterProvider({ baseUrl: ff.baseUrl, http: fast })
      const saturday = yield* Effect.withClock(clockAt("2025-05-11T08:00:00Z"))(provider.since("2025-05-10"))
      expect(saturday.days).toEqual([])
      ff.setToday("2025-05-08")
      const ahead = yield* Effect.withClock(clockAt("2025-05-11T08:00:00Z"))(provider.since("2025-05-10"))
      expect(ahead.days).toEqual([])
      const wrong = yield* makeFrankfurterProvider({ baseUrl: `${ff.origin}/nothing`, http: fast })
      const error = yield* Effect.flip(Effect.withClock(clockAt("2025-05-11T08:00:00Z"))(wrong.since("2025-05-10")))
      expect(error).toMatchObject({ reason: "http-status", status: 404 })
    }).pipe(Effect.provide(Http)))

  it.scopedLive("the fake rolls a weekend date back to Friday, as Frankfurter does", () =>
    Effect.gen(function*() {
      const ff = yield* startFakeFrankfurter()
      const client = yield* HttpClient.HttpClient
      const body = yield* Effect.flatMap(client.get(`${ff.baseUrl}/v1/2025-05-10?base=EUR`), (r) => r.json)
      const day = parseFrankfurterDay(body)
      expect(day._tag === "Right" && day.right.date).toBe("2025-05-09")
      same(day._tag === "Right" ? [day.right] : [], csvFrom("2025-05-09"))
      const good = yield* Effect.flatMap(client.get(`${ff.baseUrl}/v1/2025-04-18?base=EUR`), (r) => r.json)
      expect(good).toMatchObject({ date: "2025-04-17" })
    }).pipe(Effect.provide(Http)))

  it.scopedLive("retries 429 and 500, and rejects malformed JSON", () =>
    Effect.gen(function*() {
      const ff = yield* startFakeFrankfurter()
      const provider = yield* makeFrankfurterProvider({ baseUrl: ff.baseUrl, http: fast })
      ff.failNext(rateLimited(0), status500)
      same((yield* provider.latest()).days, csvFrom("2025-05-09"))
      expect(ff.count()).toBe(3)
      ff.failNext({ kind: "malformed" })
      const error = yield* Effect.flip(provider.latest())
      expect(error).toMatchObject({ reason: "malformed", source: "ecb-via-frankfurter" })
      expect(ff.count()).toBe(4)
    }).pipe(Effect.provide(Http)))
})

describe("FxProviderLive from Config", () => {
  const withEnv = (env: Record<string, string>) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.scopedLive("FX_PROVIDER=frankfurter with FX_BASE_URL", () =>
    Effect.gen(function*() {
      const ff = yield* startFakeFrankfurter()
      const result = yield* Effect.flatMap(FxProvider, (p) => p.latest()).pipe(
        Effect.provide(
          FxProviderLive.pipe(Layer.provide(withEnv({ FX_PROVIDER: "frankfurter", FX_BASE_URL: ff.baseUrl })))
        )
      )
      expect(result.source).toBe("ecb-via-frankfurter")
      expect(ff.count()).toBe(1)
    }).pipe(Effect.provide(Http)))

  it.scopedLive("defaults to the ECB", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      const result = yield* Effect.flatMap(FxProvider, (p) => p.latest()).pipe(
        Effect.provide(FxProviderLive.pipe(Layer.provide(withEnv({ FX_BASE_URL: ecb.baseUrl }))))
      )
      expect(result.source).toBe("ecb-via-eurofxref")
      const provider = yield* Effect.provide(FxProvider, FxProviderLive.pipe(Layer.provide(withEnv({}))))
      expect(provider.source).toBe("ecb-via-eurofxref")
    }).pipe(Effect.provide(Http)))

  it.live("rejects an unknown FX_PROVIDER", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(FxProvider, FxProviderLive.pipe(Layer.provide(withEnv({ FX_PROVIDER: "oanda" }))))
      )
      expect(String(error)).toContain("FX_PROVIDER")
    }).pipe(Effect.provide(Http)))
})

describe("end to end: refresh into a store, then quote", () => {
  it.scopedLive("fills the store from the fake ECB and quotes GBP for Saturday 2025-05-10", () =>
    Effect.gen(function*() {
      const ecb = yield* startFakeEcb()
      ecb.setToday("2025-05-08")
      const store = yield* FxStore
      const providerLayer = Layer.effect(FxProvider, makeEcbProvider({ baseUrl: ecb.baseUrl, http: fast }))
      const refresh = (at: string) => Effect.withClock(clockAt(at))(refreshOnce.pipe(Effect.provide(providerLayer)))
      const first = yield* refresh("2025-05-08T15:00:00Z")
      expect(first).toMatchObject({ fetchedDays: 6746, upToDate: true })
      expect(ecb.requests).toEqual(["/stats/eurofxref/eurofxref-hist.zip"])
      ecb.setToday("2025-05-09")
      const second = yield* refresh("2025-05-09T15:00:00Z")
      expect(second).toMatchObject({ fetchedDays: 1, upToDate: true })
      expect(ecb.requests[1]).toBe("/stats/eurofxref/eurofxref-daily.xml")
      const quote = yield* quoteWith(store.latestWith)({ currency: "GBP", date: "2025-05-10", today: "2025-05-10" })
      expect(quote).toMatchObject({
        quote: "GBP",
        date: "2025-05-09",
        rate: "0.75337717739068610025",
        source: "ecb-via-eurofxref",
        carriedForward: true
      })
    }).pipe(Effect.provide(Http), Effect.provide(FxStore.layerInMemory())))
})
