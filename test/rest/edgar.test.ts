import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { EdgarReads } from "@scaledger/db/market/EdgarReads"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Ledger } from "@scaledger/domain/ledger/index"
import { EdgarConfig, makeEdgarHttp } from "@scaledger/workers/market/EdgarHttp"
import { ConfigProvider, Context, Duration, Effect, Either, Exit, Layer, Option } from "effect"
import { type EdgarServer, edgarServer } from "../support/EdgarServer.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

class Edgar extends Context.Tag("test/EdgarServer")<Edgar, EdgarServer>() {}

const USER_AGENT = "Scaledger Tests tests@example.com"

/** The REST server over a fresh PostgreSQL database, with EDGAR settings pointing at the local EDGAR server. */
const withEdgar = (settings: (baseUrl: string) => ReadonlyArray<readonly [string, string]>) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const edgar = yield* edgarServer
    const provider = ConfigProvider.fromMap(new Map(settings(edgar.baseUrl))).pipe(
      ConfigProvider.orElse(() => ConfigProvider.fromEnv())
    )
    const database = TestDatabase.postgres
    return Layer.merge(
      restServer(database).pipe(
        Layer.provide(Layer.setConfigProvider(provider)),
        Layer.provideMerge(LedgerStore.Default),
        Layer.provideMerge(database)
      ),
      Layer.succeed(Edgar, edgar)
    )
  }))

const unix = (iso: string) => Date.parse(iso) / 1000
const hex = (n: number, width: number) => `0x${n.toString(16).padStart(width, "0")}`

/**
 * Stores a real ledger build for the account: 10 AAPL bought 1 May 2024 at $180, then a dividend step on
 * 16 May 2024 from 1 to 1.00095 with the feed at $190 (paid per share 0.00095 × 190 = 0.1805).
 */
/** An account holding AAPL over one dividend step, in one address (or a second one too, `holders: 2`). */
const seedDividendStep = (accountName: string, holders: 1 | 2 = 1) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { account } = yield* (yield* AccountsRepo).findOrCreate(accountName)
    const wallet = hex(1, 40)
    const second = hex(2, 40)
    const token = hex(0xaa, 40)
    const feed = hex(0xfeed, 40)
    const report = Either.getOrThrow(Ledger.run({
      wallets: holders === 1
        ? [{ address: wallet, self: true }]
        : [{ address: wallet, self: true }, { address: second, self: true }],
      country: "US",
      prices: {
        AAPL: [
          { roundId: "1", answer: "18000000000", updatedAt: unix("2024-05-01T14:00:00Z"), feed },
          { roundId: "2", answer: "19000000000", updatedAt: unix("2024-05-15T20:00:00Z"), feed }
        ]
      },
      events: [
        {
          id: "buy",
          kind: "transfer",
          token: "AAPL",
          tokenAddress: token,
          from: hex(0x99, 40),
          to: wallet,
          raw: (10n * 10n ** 18n).toString(),
          block: 1,
          logIndex: 0,
          txHash: hex(1, 64),
          timestamp: unix("2024-05-01T15:00:00Z")
        },
        ...(holders === 1 ? [] : [{
          id: "buy-2",
          kind: "transfer" as const,
          token: "AAPL",
          tokenAddress: token,
          from: hex(0x99, 40),
          to: second,
          raw: (5n * 10n ** 18n).toString(),
          block: 1,
          logIndex: 1,
          txHash: hex(1, 64),
          timestamp: unix("2024-05-01T15:00:00Z")
        }]),
        {
          id: "step",
          kind: "multiplier",
          token: "AAPL",
          tokenAddress: token,
          from: "1000000000000000000",
          to: "1000950000000000000",
          effectiveAt: unix("2024-05-16T15:10:00Z"),
          block: 2,
          logIndex: -1,
          stepKind: "dividend"
        }
      ],
      asOf: unix("2024-06-01T00:00:00Z")
    }))
    yield* sql`INSERT INTO ledger_builds (account_id, requested_version, lease_owner, lease_until)
               VALUES (${account.id}, 1, 'test', now() + interval '1 hour')`
    yield* (yield* LedgerStore).store(account.id, "test", 1, {
      report: {},
      positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
      lots: [],
      disposals: [],
      events: report.income.map((row) => ({
        id: row.id,
        type: row.type,
        token: row.token,
        day: row.date,
        needsReview: row.needsReview,
        row
      }))
    })
  })

const AAPL_QUARTERS_AND_YEARS = [
  ["2022-09-25", "2022-12-31", "quarter", "0.23"],
  ["2022-09-25", "2023-09-30", "annual", "0.94"],
  ["2023-01-01", "2023-04-01", "quarter", "0.23"],
  ["2023-04-02", "2023-07-01", "quarter", "0.24"],
  ["2023-07-02", "2023-09-30", "quarter", "0.24"],
  ["2023-10-01", "2023-12-30", "quarter", "0.24"],
  ["2023-10-01", "2024-09-28", "annual", "0.98"],
  ["2023-12-31", "2024-03-30", "quarter", "0.24"],
  ["2024-03-31", "2024-06-29", "quarter", "0.25"],
  ["2024-06-30", "2024-09-28", "quarter", "0.25"]
]

layer(
  withEdgar((baseUrl) => [
    ["EDGAR_USER_AGENT", USER_AGENT],
    ["EDGAR_BASE_URL", baseUrl],
    ["EDGAR_RETRY_BASE_MS", "2000"],
    ["EDGAR_READ_WAIT_MS", "300"]
  ]),
  { timeout: 60_000, excludeTestServices: true }
)("EDGAR slow to answer (retries of seconds, reads wait 300 ms)", (it) => {
  it.effect("a read answers edgar_unavailable without waiting out EDGAR's retries; the request goes on, once", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const { key } = yield* newKey("edgar-slow")
      const path = "/submissions/CIK0001067983.json"
      edgar.failAlways(path, 503)
      const asked = () => edgar.requests.filter((r) => r.path === path).length
      const start = Date.now()
      const down = yield* call("GET", "/v1/filings?symbol=BRK.B", { key })
      // The retries wait 2 s, 4 s, 8 s, 16 s: the answer came long before the first of them ended.
      expect(Date.now() - start).toBeLessThan(1_500)
      expect(down.status, down.text).toBe(200)
      expect(down.body).toMatchObject({ status: "edgar_unavailable", filings: null })
      expect(down.body.issuers[0]).toMatchObject({ symbol: "BRK.B", status: "edgar_unavailable" })
      // Asked again meanwhile: the same request, not a second one.
      const again = yield* call("GET", "/v1/filings?symbol=BRK.B", { key })
      expect(again.status, again.text).toBe(200)
      expect(again.body.status).toBe("edgar_unavailable")
      expect(asked()).toBe(1)
    }))
})

layer(
  withEdgar((baseUrl) => [
    ["EDGAR_USER_AGENT", USER_AGENT],
    ["EDGAR_BASE_URL", baseUrl],
    ["EDGAR_RETRY_BASE_MS", "20"]
  ]),
  { timeout: 60_000, excludeTestServices: true }
)("EDGAR configured (local EDGAR server)", (it) => {
  it.effect("GET /v1/filings lists an issuer's recent filings newest first, with links, User-Agent and data age", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const { key } = yield* newKey("edgar-filings")
      const before = edgar.requests.length
      const reply = yield* call("GET", "/v1/filings?symbol=aapl&limit=3", { key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.status).toBe("ok")
      expect(reply.body.filings.map((f: any) => [f.form, f.filingDate, f.accessionNumber])).toEqual([
        ["10-K", "2024-11-01", "0000320193-24-000123"],
        ["8-K", "2024-10-31", "0000320193-24-000120"],
        ["4", "2024-10-16", "0001140361-24-043245"]
      ])
      expect(reply.body.filings[0]).toEqual({
        symbol: "AAPL",
        cik: 320193,
        accessionNumber: "0000320193-24-000123",
        form: "10-K",
        filingDate: "2024-11-01",
        reportDate: "2024-09-28",
        acceptedAt: "2024-11-01T06:01:36.000Z",
        description: "10-K",
        url: `${edgar.baseUrl}/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm`
      })
      expect(reply.body.issuers).toEqual([expect.objectContaining({
        symbol: "AAPL",
        cik: 320193,
        name: "Apple Inc.",
        status: "ok",
        stale: false
      })])
      expect(reply.body.evidence.accessionNumbers).toHaveLength(3)
      expect(Date.now() - Date.parse(reply.body.dataAsOf)).toBeLessThan(60_000)
      expect(reply.body.dataAgeSeconds).toBeGreaterThanOrEqual(0)
      const made = edgar.requests.slice(before)
      expect(made.map((r) => r.path).sort()).toEqual(["/files/company_tickers.json", "/submissions/CIK0000320193.json"])
      for (const r of made) expect(r.userAgent).toBe(USER_AGENT)
      // Served from the database cache the second time: no request at all.
      const again = yield* call("GET", "/v1/filings?symbol=AAPL", { key })
      expect(again.body.filings).toHaveLength(4)
      expect(edgar.requests.length).toBe(before + 2)
    }))

  it.effect("several issuers merge newest first; an unknown ticker says so", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-multi")
      const jnj = yield* call("GET", "/v1/filings?symbol=JNJ", { key })
      expect(jnj.body.filings.map((f: any) => f.filingDate)).toEqual(["2024-10-25", "2024-10-15"])
      // Without a symbol: the account's held tokens; this account holds none.
      const none = yield* call("GET", "/v1/filings", { key })
      expect(none.body).toMatchObject({ status: "no_holdings", filings: [], issuers: [] })
      const unknown = yield* call("GET", "/v1/filings?symbol=NOPE", { key })
      expect(unknown.status).toBe(200)
      expect(unknown.body.status).toBe("unknown_ticker")
      expect(unknown.body.filings).toBeNull()
      const dividends = yield* call("GET", "/v1/dividends?symbol=NOPE", { key })
      expect(dividends.body).toMatchObject({ status: "unknown_ticker", dividends: null, cik: null })
    }))

  it.effect("GET /v1/dividends deduplicates a 10-K's repeated quarters by period and drops year-to-date sums", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-dividends")
      const reply = yield* call("GET", "/v1/dividends?symbol=AAPL", { key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({
        symbol: "AAPL",
        status: "ok",
        cik: 320193,
        name: "Apple Inc.",
        concept: "CommonStockDividendsPerShareDeclared",
        stale: false,
        withholding: []
      })
      expect(reply.body.dividends.map((d: any) => [d.start, d.end, d.period, d.perShare])).toEqual(
        AAPL_QUARTERS_AND_YEARS
      )
      // The most recent filing of a repeated period is the one shown.
      expect(reply.body.dividends[0]).toMatchObject({ form: "10-K", filed: "2024-11-01" })
      expect(reply.body.dividends[5]).toMatchObject({
        accessionNumber: "0000320193-24-000123",
        fiscalYear: 2024,
        fiscalPeriod: "FY"
      })
      expect(reply.body.dataAgeSeconds).toBeGreaterThanOrEqual(0)
    }))

  it.effect("the withholding estimate: a dividend step the account received beside the declared dividend", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-withholding")
      yield* seedDividendStep("edgar-withholding")
      const reply = yield* call("GET", "/v1/dividends?symbol=AAPL", { key })
      expect(reply.status, reply.text).toBe(200)
      // Declared 0.25 for the quarter 2024-03-31..2024-06-29 containing the step; paid 0.1805: 1 − 0.1805 / 0.25.
      expect(reply.body.withholding).toEqual([{
        eventId: "step",
        wallet: hex(1, 40),
        date: "2024-05-16",
        from: "1",
        to: "1.00095",
        sharePriceUsd: "190",
        paidPerShare: "0.1805",
        declaredPerShare: "0.25",
        declaredPeriod: { start: "2024-03-31", end: "2024-06-29" },
        matchedBy: "containing_quarter",
        impliedWithholdingRate: "0.278",
        accessionNumber: "0000320193-24-000123"
      }])
      expect(reply.body.evidence.eventIds).toEqual(["step"])
      // The account holds AAPL: GET /v1/filings without a symbol looks it up.
      const held = yield* call("GET", "/v1/filings", { key })
      expect(held.body.issuers.map((i: any) => i.symbol)).toEqual(["AAPL"])
      expect(held.body.status).toBe("ok")
    }))

  it.effect("a step paid to two addresses: a withholding row for each, its change cited once in the evidence", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-two-holders")
      yield* seedDividendStep("edgar-two-holders", 2)
      const reply = yield* call("GET", "/v1/dividends?symbol=AAPL", { key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.withholding.map((w: any) => [w.eventId, w.wallet])).toEqual([
        ["step", hex(1, 40)],
        ["step", hex(2, 40)]
      ])
      expect(reply.body.evidence.eventIds).toEqual(["step"])
    }))

  it.effect("income events carry the same withholding estimate as GET /v1/dividends, from the EDGAR cache", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const { key } = yield* newKey("edgar-income-events")
      yield* seedDividendStep("edgar-income-events")
      const dividends = yield* call("GET", "/v1/dividends?symbol=AAPL", { key })
      expect(dividends.status, dividends.text).toBe(200)
      const before = edgar.requests.length
      const events = yield* call("GET", "/v1/events?type=income.multiplier_increase&token=aapl", { key })
      expect(events.status, events.text).toBe(200)
      const { date: _, eventId: __, from: ___, to: ____, wallet: _____, ...figures } = dividends.body.withholding[0]
      expect(events.body.events).toHaveLength(1)
      expect(events.body.events[0].withholding).toEqual(figures)
      // The change the estimate cites is the income event's eventId.
      expect(events.body.events[0].eventId).toBe(dividends.body.withholding[0].eventId)
      expect(events.body.events[0].withholding).toMatchObject({
        paidPerShare: "0.1805",
        declaredPerShare: "0.25",
        impliedWithholdingRate: "0.278"
      })
      // The events read uses the cache only: it never calls EDGAR.
      expect(edgar.requests.length).toBe(before)
      const other = yield* call("GET", "/v1/events?token=MSFT", { key })
      expect(other.body.events).toEqual([])
    }))

  it.effect("falls back to CommonStockDividendsPerShareCashPaid; an ETF (no concept, or no facts at all) is null", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-fallback")
      const jnj = yield* call("GET", "/v1/dividends?symbol=JNJ", { key })
      expect(jnj.body.concept).toBe("CommonStockDividendsPerShareCashPaid")
      expect(jnj.body.dividends.map((d: any) => [d.start, d.perShare])).toEqual([
        ["2024-01-01", "1.19"],
        ["2024-04-01", "1.24"]
      ])
      const spy = yield* call("GET", "/v1/dividends?symbol=SPY", { key })
      expect(spy.status).toBe(200)
      expect(spy.body).toMatchObject({ status: "no_dividend_data", cik: 884394, dividends: null, concept: null })
      // SGOV: EDGAR answers 404 for its company facts.
      const sgov = yield* call("GET", "/v1/dividends?symbol=SGOV", { key })
      expect(sgov.body).toMatchObject({ status: "no_dividend_data", cik: 1100663, dividends: null })
    }))

  it.effect("a 429 and a 503 are retried; an outage with nothing cached says edgar_unavailable", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const { key } = yield* newKey("edgar-retry")
      edgar.failNext("/api/xbrl/companyfacts/CIK0001067983.json", { status: 429, retryAfter: "0" }, { status: 503 })
      const before = edgar.requests.length
      const brk = yield* call("GET", "/v1/dividends?symbol=BRK.B", { key })
      // Three attempts: 429, 503, then the real answer (404 here: no facts for this fixture).
      expect(edgar.requests.slice(before).map((r) => r.path)).toEqual([
        "/api/xbrl/companyfacts/CIK0001067983.json",
        "/api/xbrl/companyfacts/CIK0001067983.json",
        "/api/xbrl/companyfacts/CIK0001067983.json"
      ])
      expect(brk.body).toMatchObject({ symbol: "BRK.B", status: "no_dividend_data", cik: 1067983 })

      edgar.failAlways("/submissions/CIK0001067983.json", 500)
      const start = edgar.requests.length
      const down = yield* call("GET", "/v1/filings?symbol=BRK.B", { key })
      expect(down.status).toBe(200)
      expect(down.body.status).toBe("edgar_unavailable")
      expect(down.body.filings).toBeNull()
      expect(down.body.issuers[0]).toMatchObject({ symbol: "BRK.B", cik: 1067983, status: "edgar_unavailable" })
      expect(edgar.requests.length - start).toBe(5) // the first attempt and 4 retries
      // Asked again during the outage: answered at once, EDGAR not asked again for a minute.
      const again = yield* call("GET", "/v1/filings?symbol=BRK.B", { key })
      expect(again.body.status).toBe("edgar_unavailable")
      expect(edgar.requests.length - start).toBe(5)
    }))
})

layer(
  withEdgar((baseUrl) => [["EDGAR_BASE_URL", baseUrl]]),
  { timeout: 60_000, excludeTestServices: true }
)("EDGAR not configured (no EDGAR_USER_AGENT)", (it) => {
  it.effect("filings and dividends answer 200 edgar_not_configured with nulls, and no request is made", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const { key } = yield* newKey("edgar-off")
      const filings = yield* call("GET", "/v1/filings?symbol=AAPL", { key })
      expect(filings.status).toBe(200)
      expect(filings.body).toEqual({
        status: "edgar_not_configured",
        dataAsOf: null,
        dataAgeSeconds: null,
        filings: null,
        issuers: [{
          symbol: "AAPL",
          cik: null,
          name: null,
          status: "edgar_not_configured",
          stale: false,
          dataAsOf: null,
          dataAgeSeconds: null
        }],
        evidence: { accessionNumbers: [] }
      })
      const dividends = yield* call("GET", "/v1/dividends?symbol=AAPL", { key })
      expect(dividends.status).toBe(200)
      expect(dividends.body).toMatchObject({ status: "edgar_not_configured", dividends: null, concept: null })
      const all = yield* call("GET", "/v1/filings", { key })
      expect(all.body.status).toBe("edgar_not_configured")
      expect(edgar.requests).toEqual([])
    }))

  it.effect("income events still show the income per share; the declared figure and the rate are null", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-off-income")
      yield* seedDividendStep("edgar-off-income")
      const events = yield* call("GET", "/v1/events", { key })
      expect(events.status, events.text).toBe(200)
      expect(events.body.events.map((e: any) => e.withholding)).toEqual([{
        sharePriceUsd: "190",
        paidPerShare: "0.1805",
        declaredPerShare: null,
        declaredPeriod: null,
        matchedBy: null,
        impliedWithholdingRate: null,
        accessionNumber: null
      }])
    }))

  it.effect("bad input is a 400 invalid_request", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("edgar-bad")
      const missing = yield* call("GET", "/v1/dividends", { key })
      expect(missing.status).toBe(400)
      expect(missing.body.error.code).toBe("invalid_request")
      const limit = yield* call("GET", "/v1/filings?limit=0", { key })
      expect(limit.status).toBe(400)
      expect(limit.body.error.code).toBe("invalid_request")
      // The bounds, not the parameter's description taken for a type name.
      expect(limit.body.error.details.issues).toEqual([
        { path: ["limit"], message: "Expected a number between 1 and 500, actual 0" }
      ])
      // A list's limit, as DECISIONS gives every list: up to 500.
      expect((yield* call("GET", "/v1/filings?limit=500", { key })).status).toBe(200)
      expect((yield* call("GET", "/v1/filings?limit=501", { key })).status).toBe(400)
      const noKey = yield* call("GET", "/v1/filings")
      expect(noKey.status).toBe(401)
    }))
})

layer(
  withEdgar((baseUrl) => [["EDGAR_USER_AGENT", " "], ["EDGAR_BASE_URL", baseUrl]]),
  { timeout: 60_000, excludeTestServices: true }
)("EDGAR_USER_AGENT set but empty (`EDGAR_USER_AGENT=` in a compose file)", (it) => {
  it.effect("counts as unset: edgar_not_configured, and no request without a User-Agent is made", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const { key } = yield* newKey("edgar-empty-agent")
      const filings = yield* call("GET", "/v1/filings?symbol=AAPL", { key })
      expect(filings.status).toBe(200)
      expect(filings.body).toMatchObject({ status: "edgar_not_configured", filings: null })
      const dividends = yield* call("GET", "/v1/dividends?symbol=AAPL", { key })
      expect(dividends.body).toMatchObject({ status: "edgar_not_configured", dividends: null })
      expect(edgar.requests).toEqual([])
    }))
})

describe("EDGAR rate limit", () => {
  layer(Layer.empty, { excludeTestServices: true })((it) => {
    it.effect("a pace above the SEC's 10 per second is a configuration error", () =>
      Effect.gen(function*() {
        const read = (value: string) =>
          Effect.exit(
            Effect.withConfigProvider(
              EdgarConfig,
              ConfigProvider.fromMap(new Map([["EDGAR_MAX_REQUESTS_PER_SECOND", value]]))
            )
          )
        expect(Exit.isFailure(yield* read("20"))).toBe(true)
        expect(Exit.isFailure(yield* read("0"))).toBe(true)
        const ok = yield* read("5")
        expect(Exit.isSuccess(ok) && ok.value.maxRequestsPerSecond).toBe(5)
        expect(Exit.isSuccess(ok) && Option.isNone(ok.value.userAgent)).toBe(true)
      }))

    it.effect("25 concurrent requests start at most 10 in any one second", () =>
      Effect.scoped(Effect.gen(function*() {
        const edgar = yield* edgarServer
        const source = yield* makeEdgarHttp({ userAgent: USER_AGENT, baseUrl: edgar.baseUrl }).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
        const started = performance.now()
        yield* Effect.forEach(Array.from({ length: 25 }), () => source.submissions(320193), { concurrency: 25 })
        const elapsed = performance.now() - started
        const times = edgar.requests.map((r) => r.at).sort((a, b) => a - b)
        expect(times).toHaveLength(25)
        for (let i = 0; i + 10 < times.length; i++) {
          // The 11th start after any start comes more than a second later.
          expect(times[i + 10]! - times[i]!).toBeGreaterThan(1000)
        }
        expect(elapsed).toBeGreaterThan(Duration.toMillis("2 seconds"))
      })))
  })
})

// The service itself on the embedded database (PGlite), refreshing everything at once (refresh interval 0).
const onPglite = Layer.unwrapScoped(Effect.gen(function*() {
  const edgar = yield* edgarServer
  const source = yield* makeEdgarHttp({
    userAgent: USER_AGENT,
    baseUrl: edgar.baseUrl,
    retryBaseDelay: Duration.millis(10)
  }).pipe(Effect.provide(FetchHttpClient.layer))
  return Layer.merge(EdgarReads.withSource(Option.some(source), 0), Layer.succeed(Edgar, edgar))
})).pipe(Layer.provide(TestDatabase.pglite))

layer(onPglite, { timeout: 60_000, excludeTestServices: true })("EDGAR cache on PGlite", (it) => {
  it.effect("caches what it read, and the refresh fetches again what is due", () =>
    Effect.gen(function*() {
      const edgar = yield* Edgar
      const reads = yield* EdgarReads
      const filings = yield* reads.filings("acct_pglite", { symbol: "AAPL" })
      expect(filings.status).toBe("ok")
      expect(filings.filings).toHaveLength(4)
      const dividends = yield* reads.dividends("acct_pglite", "AAPL")
      expect(dividends.dividends).toHaveLength(10)
      expect(edgar.requests.map((r) => r.path)).toEqual([
        "/files/company_tickers.json",
        "/submissions/CIK0000320193.json",
        "/files/company_tickers.json",
        "/api/xbrl/companyfacts/CIK0000320193.json"
      ])
      // Everything is due at once with a refresh interval of 0: three documents fetched again.
      const before = edgar.requests.length
      expect(yield* reads.refreshDue).toBe(3)
      expect(edgar.requests.slice(before).map((r) => r.path).sort()).toEqual([
        "/api/xbrl/companyfacts/CIK0000320193.json",
        "/files/company_tickers.json",
        "/submissions/CIK0000320193.json"
      ])
      // EDGAR down: the stale copy is served and says so.
      edgar.failAlways("/submissions/CIK0000320193.json", 503)
      edgar.failAlways("/files/company_tickers.json", 503)
      const stale = yield* reads.filings("acct_pglite", { symbol: "AAPL" })
      expect(stale.status).toBe("ok")
      expect(stale.issuers[0]!.stale).toBe(true)
      expect(stale.filings).toHaveLength(4)
    }))
})
