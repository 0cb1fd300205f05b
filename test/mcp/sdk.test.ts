import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ensureBundledHistory } from "@scaledger/workers/fx/FxWorker"
import { ConfigProvider, Effect, Layer, Option, TestClock } from "effect"
import { ALICE, ledgerScenario, ScenarioChain, watchAndSettle } from "../support/LedgerScenario.js"
import { mcpServer, McpUrl } from "../support/McpHarness.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

const CHAIN_ID = 4663
const AAPL = "0x5aF2b1C5a0E3a1A1fC1dE2b7E0d5d9C1b2A3c4D5"
const WAD = 10n ** 18n

const Database = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.orDie
)

/** What the recorder stores for AAPL's real 2026 dividend step (1 → 1.000566080061092436). */
const seedMultiplierHistory = Effect.gen(function*() {
  const store = yield* ChainStore
  yield* store.upsertTokens(CHAIN_ID, [{
    address: AAPL,
    symbol: "AAPL",
    name: "Apple",
    isin: "US0378331005",
    decimals: 18,
    feedAddress: null,
    feedDecimals: null,
    listed: true,
    isStock: true
  }])
  const effectiveAt = new Date("2026-08-14T15:10:00Z")
  const change = {
    token: AAPL,
    effectiveAt,
    oldMultiplier: WAD,
    newMultiplier: 1000566080061092436n,
    kind: "dividend" as const,
    status: "active" as const,
    source: "chain_storage" as const,
    block: 1_500_100,
    blockTime: new Date("2026-08-14T15:10:01Z"),
    announcedAt: new Date("2026-08-14T15:00:00Z"),
    announcedBlock: 1_494_000
  }
  yield* store.writeBatch(CHAIN_ID, {
    coverage: [{ token: AAPL, fromBlock: 1_400_000, fromTime: new Date("2026-08-01T00:00:00Z"), multiplier: WAD }],
    changes: [change]
  })
}).pipe(Effect.orDie)

const Services = Layer.mergeAll(restServer(Database), mcpServer(Database)).pipe(
  Layer.provideMerge(ChainStore.Default.pipe(Layer.provideMerge(Database))),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CHAIN_ID })))
)

/** The official TypeScript SDK client, connected with an API key. */
const connect = (url: string, key: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "scaledger-test", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: key === undefined ? {} : { headers: { Authorization: `Bearer ${key}` } }
      })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

layer(Services, { timeout: 60_000 })("the official MCP SDK client", (it) => {
  describe("connects, lists and calls with a key", () => {
    it.scoped("every tool answers the same figures as its REST twin, with evidence", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-23T10:00:00Z"))
        yield* seedMultiplierHistory
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-sdk")
        const client = yield* connect(url, key)
        expect(client.getServerVersion()?.name).toBe("scaledger")
        expect(client.getInstructions()).toMatch(/null, never zero/)

        const { tools } = yield* Effect.promise(() => client.listTools())
        expect(tools.map((tool) => tool.name)).toEqual(
          expect.arrayContaining(["get_exchange_rate_on", "get_multiplier_history"])
        )

        const rate = yield* Effect.promise(() =>
          client.callTool({ name: "get_exchange_rate_on", arguments: { currency: "gbp", date: "2025-05-10" } })
        )
        expect(rate.isError).toBeFalsy()
        const restRate = yield* call("GET", "/v1/fx/gbp/2025-05-10", { key })
        expect(restRate.status).toBe(200)
        const { evidence: rateEvidence, ...rateAnswer } = rate.structuredContent as Record<string, any>
        expect(rateAnswer).toEqual(restRate.body)
        expect(rateAnswer).toMatchObject({ quote: "GBP", date: "2025-05-09", carriedForward: true })
        expect(rateEvidence.rates[0]).toMatchObject({ source: "ecb-via-eurofxref", rateDate: "2025-05-09" })
        expect(JSON.parse((rate.content as Array<{ text: string }>)[0]!.text)).toEqual(rate.structuredContent)

        const history = yield* Effect.promise(() =>
          client.callTool({ name: "get_multiplier_history", arguments: { symbol: "aapl", from: "2026-08-01" } })
        )
        expect(history.isError).toBeFalsy()
        const restHistory = yield* call("GET", "/v1/multiplier?token=aapl&from=2026-08-01", { key })
        expect(restHistory.status).toBe(200)
        const { evidence: historyEvidence, ...historyAnswer } = history.structuredContent as Record<string, any>
        expect(historyAnswer).toEqual(restHistory.body)
        expect(historyAnswer.changes).toEqual([expect.objectContaining({
          block: 1_500_100,
          date: "2026-08-14",
          from: "1",
          to: "1.000566080061092436",
          source: "chain_storage",
          kind: "dividend"
        })])
        expect(historyEvidence.changes).toEqual([{
          block: 1_500_100,
          effectiveAt: "2026-08-14T15:10:00.000Z",
          source: "chain_storage"
        }])
      }))

    it.scoped("the market tools answer what their REST twins answer (the same service behind both)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-23T10:00:00Z"))
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-market")
        const client = yield* connect(url, key)
        const pairs: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
          ["get_portfolio_summary", {}, "/v1/portfolio/summary"],
          ["get_alerts", { severity: "warning" }, "/v1/alerts?open=true&severity=warning&limit=500"],
          ["get_weekend_exposure", {}, "/v1/exposure/weekend"],
          ["get_recent_filings", { limit: 5 }, "/v1/filings?limit=5"],
          ["get_dividend_history", { symbol: "AAPL" }, "/v1/dividends?symbol=AAPL"],
          ["get_unlabeled_counterparties", {}, "/v1/counterparties/unlabeled"],
          [
            "estimate_sale",
            { symbol: "AAPL", shares: "1", price: "200" },
            "/v1/estimates/sale?symbol=AAPL&shares=1&price=200"
          ]
        ]
        for (const [name, args, path] of pairs) {
          const answer = yield* Effect.promise(() => client.callTool({ name, arguments: args }))
          const rest = yield* call("GET", path, { key })
          if (rest.status === 200) {
            expect(answer.isError, `${name}: ${JSON.stringify(answer.structuredContent)}`).toBeFalsy()
            // The tool answers the REST payload plus its evidence (a list's page cursor included).
            const { evidence, ...figures } = answer.structuredContent as Record<string, unknown>
            const { evidence: _, ...restFigures } = rest.body
            expect(figures, name).toEqual(restFigures)
            expect(evidence, name).toBeDefined()
          } else {
            expect(answer.isError, name).toBe(true)
            expect((answer.structuredContent as { code: string }).code, name).toBe(rest.body.error.code)
          }
        }
        const edgar = yield* Effect.promise(() =>
          client.callTool({ name: "get_dividend_history", arguments: { symbol: "AAPL" } })
        )
        expect((edgar.structuredContent as { status: string }).status).toBe("edgar_not_configured")
      }))

    it.scoped("get_alerts answers its first 500 open alerts and says whether more are open", () =>
      Effect.gen(function*() {
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-alerts")
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("mcp-alerts")))
        const sql = yield* SqlClient.SqlClient
        const raise = (from: number, to: number) =>
          Effect.orDie(sql`
            INSERT INTO alerts (id, account_id, cause_key, kind, severity, title, detail, raised_at)
            SELECT 'alrt_mcp' || n, ${account.id}, 'test:' || n, 'degraded-read', 'warning', 'Reads degraded', '-',
                   now() FROM generate_series(${from}::int, ${to}::int) AS n`)
        const client = yield* connect(url, key)
        const alerts = (args: Record<string, unknown> = {}) =>
          Effect.map(
            Effect.promise(() => client.callTool({ name: "get_alerts", arguments: args })),
            (answer) =>
              answer.structuredContent as {
                alerts: Array<{ id: string }>
                nextCursor: string | null
              }
          )
        yield* raise(1, 500)
        const full = yield* alerts()
        expect([full.alerts.length, full.nextCursor]).toEqual([500, null])
        yield* raise(501, 501)
        const over = yield* alerts()
        expect(over.alerts.length).toBe(500)
        expect(over.nextCursor).toEqual(expect.any(String))
        expect(over.alerts[0]!.id).toBe("alrt_mcp501")
        // The next page, by the cursor: the one left, and the end.
        const rest = yield* alerts({ cursor: over.nextCursor })
        expect([rest.alerts.map((alert) => alert.id), rest.nextCursor]).toEqual([
          ["alrt_mcp1"],
          null
        ])
        // One cursor for both twins: REST's next page of open alerts is the tool's, and the other way round.
        const restPage = yield* call("GET", "/v1/alerts?open=true&limit=500", { key })
        expect((yield* alerts({ cursor: restPage.body.nextCursor })).alerts.map((alert) => alert.id)).toEqual([
          "alrt_mcp1"
        ])
        const byToolCursor = yield* call("GET", `/v1/alerts?open=true&cursor=${over.nextCursor}`, { key })
        expect(byToolCursor.body.alerts.map((alert: { id: string }) => alert.id)).toEqual(["alrt_mcp1"])
        // A cursor of another list, or made up, is a tool error.
        const bad = yield* Effect.promise(() =>
          client.callTool({ name: "get_alerts", arguments: { cursor: "bm90LWEtY3Vyc29y" } })
        )
        expect(bad.isError).toBe(true)
        expect(bad.structuredContent).toMatchObject({ code: "invalid_request" })
      }))

    it.scoped("during a replay get_positions and get_activity are tool errors with replay_in_progress and retryAfter", () =>
      Effect.gen(function*() {
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-replay")
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("mcp-replay")))
        // Asked for, never built yet: the first build is a replay.
        yield* Effect.orDie((yield* SqlClient.SqlClient)`
          INSERT INTO ledger_builds (account_id, requested_version, replay_version) VALUES (${account.id}, 1, 1)`)
        const client = yield* connect(url, key)
        for (const name of ["get_positions", "get_activity"]) {
          const answer = yield* Effect.promise(() => client.callTool({ name, arguments: {} }))
          expect(answer.isError, name).toBe(true)
          expect(answer.structuredContent, name).toMatchObject({ code: "replay_in_progress", retryAfter: 1 })
        }
        const rest = yield* call("GET", "/v1/positions", { key })
        expect(rest.status).toBe(409)
        expect(rest.body.error.code).toBe("replay_in_progress")
      }))

    it.scoped("without a key the client connects and lists, and a call fails with HTTP 401", () =>
      Effect.gen(function*() {
        const url = yield* McpUrl
        const client = yield* connect(url, undefined)
        expect((yield* Effect.promise(() => client.listTools())).tools.length).toBe(11)
        const failure = yield* Effect.promise(() =>
          client.callTool({ name: "get_exchange_rate_on", arguments: { currency: "EUR", date: "2025-05-09" } }).then(
            () => undefined,
            (error: unknown) => error
          )
        )
        expect((failure as { code?: number }).code).toBe(401)
        expect(String(failure)).toMatch(/needs an API key/)
      }))

    it.scoped("a date before a currency's first ECB rate: nulls and a status, not a tool error (REST answers 404)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-23T10:00:00Z"))
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-fx-before")
        const client = yield* connect(url, key)
        const answer = yield* Effect.promise(() =>
          client.callTool({ name: "get_exchange_rate_on", arguments: { currency: "mxn", date: "2007-12-31" } })
        )
        expect(answer.isError).toBeFalsy()
        expect(answer.structuredContent).toMatchObject({
          quote: "MXN",
          date: null,
          rate: null,
          source: null,
          carriedForward: null,
          status: "no_rate_before",
          firstAvailable: "2008-01-02",
          evidence: { rates: [] }
        })
        expect((yield* call("GET", "/v1/fx/MXN/2007-12-31", { key })).status).toBe(404)
        // The first day it has is answered as usual.
        const first = yield* Effect.promise(() =>
          client.callTool({ name: "get_exchange_rate_on", arguments: { currency: "MXN", date: "2008-01-02" } })
        )
        expect(first.structuredContent).toMatchObject({ quote: "MXN", date: "2008-01-02", carriedForward: false })
        expect((first.structuredContent as { status?: unknown }).status).toBeUndefined()
      }))
  })
})

const ScenarioDatabase = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.orDie
)

const Scenario = Layer.mergeAll(
  restServer(ScenarioDatabase),
  mcpServer(ScenarioDatabase),
  ledgerScenario(ScenarioDatabase)
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(ChainStore.Default, LedgerStore.Default, WalletsRepo.Default).pipe(
      Layer.provideMerge(ScenarioDatabase)
    )
  ),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CHAIN_ID: 31337 })))
)

/** The tool's answer without its evidence, and the evidence. */
const split = (answer: Record<string, unknown>) => {
  expect(answer.isError, JSON.stringify(answer.structuredContent)).toBeFalsy()
  const { evidence, ...figures } = answer.structuredContent as Record<string, any>
  return { figures, evidence }
}

layer(Scenario, { timeout: 120_000, excludeTestServices: true })(
  "the ledger tools on the local chain scenario",
  (it) => {
    it.scoped("get_positions and get_activity answer the figures of GET /v1/positions and GET /v1/events", () =>
      Effect.gen(function*() {
        const chain = yield* ScenarioChain
        const { key } = yield* newKey("mcp-ledger")
        yield* watchAndSettle("mcp-ledger")
        const client = yield* connect(yield* McpUrl, key)

        const { tools } = yield* Effect.promise(() => client.listTools())
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
        expect(byName.get_positions!.annotations?.readOnlyHint).toBe(true)
        expect(Object.keys(byName.get_positions!.inputSchema.properties ?? {})).toEqual(["wallet"])
        expect(Object.keys(byName.get_activity!.inputSchema.properties ?? {}).sort()).toEqual(
          ["cursor", "from", "limit", "symbol", "to", "type"]
        )
        expect((byName.get_activity!.inputSchema.properties as any).type.enum).toContain("income.multiplier_increase")

        // Positions: the same list as REST, with the feed rounds and lots behind them.
        const positions = split(yield* Effect.promise(() => client.callTool({ name: "get_positions", arguments: {} })))
        const restPositions = yield* call("GET", "/v1/positions", { key })
        expect(restPositions.status).toBe(200)
        expect(positions.figures).toEqual(restPositions.body)
        const byToken = Object.fromEntries(positions.figures.positions.map((p: any) => [p.token, p]))
        expect(Object.keys(byToken).sort()).toEqual(["AAPL", "CRWD", "F", "MU"])
        expect(byToken.AAPL).toMatchObject({ balance: "16", multiplier: { at: "1.000566080061092436", from: "1" } })
        // CRWD was paused and unpaused around its split: not paused now.
        expect(byToken.CRWD.paused).toBeNull()
        // The lots cited are the open lots of the positions shown: every lot GET /v1/basis lists but those in transit.
        const basis = yield* call("GET", "/v1/basis", { key })
        expect(basis.status).toBe(200)
        const openLots = basis.body.records.flatMap((t: any) => t.lots).filter((l: any) => l.location !== "in_transit")
        expect(openLots.length).toBeGreaterThanOrEqual(4)
        expect([...positions.evidence.lotIds].sort()).toEqual(openLots.map((l: any) => l.id).sort())
        expect(positions.evidence.feedRounds.map((r: any) => r.token).sort()).toEqual(
          positions.figures.positions.filter((p: any) => p.price !== null).map((p: any) => p.token).sort()
        )
        expect(positions.evidence.feedRounds[0]).toEqual(expect.objectContaining({
          feed: expect.any(String),
          roundId: expect.any(String),
          updatedAt: expect.any(String)
        }))

        const own = split(
          yield* Effect.promise(() => client.callTool({ name: "get_positions", arguments: { wallet: ALICE } }))
        )
        expect(own.figures).toEqual((yield* call("GET", `/v1/positions?wallet=${ALICE}`, { key })).body)
        expect([...own.evidence.lotIds].sort()).toEqual(
          openLots.filter((l: any) => l.wallet?.toLowerCase() === ALICE.toLowerCase()).map((l: any) => l.id).sort()
        )

        // Activity: AAPL's movements and its dividend step, as GET /v1/events?token= lists them.
        const activity = split(
          yield* Effect.promise(() => client.callTool({ name: "get_activity", arguments: { symbol: "aapl" } }))
        )
        const restEvents = yield* call("GET", "/v1/events?token=aapl&limit=100", { key })
        expect(restEvents.status).toBe(200)
        expect(activity.figures).toEqual({ events: restEvents.body.events, nextCursor: null })
        expect(activity.figures.events.every((e: any) => e.token === "AAPL")).toBe(true)
        // A movement is cited by its id, an income or split row by its multiplier change's id, each once.
        const cited = activity.figures.events.map((e: any) =>
          e.type === "income.multiplier_increase" || e.type === "split" ? e.eventId : e.id
        )
        expect(activity.evidence.eventIds).toEqual([...new Set(cited)])
        expect(activity.evidence.eventIds.some((id: string) => /^multiplier:.*:0x[0-9a-f]{40}$/i.test(id))).toBe(false)
        const movements = activity.figures.events.filter((e: any) => e.walletTransaction !== null)
        expect(movements.length).toBeGreaterThan(0)
        expect(activity.evidence.transactions).toEqual(
          movements.map((e: any) => ({ eventId: e.id, txHash: e.walletTransaction.txHash }))
        )
        const step = activity.figures.events.find((e: any) => e.type === "income.multiplier_increase")
        expect(step).toMatchObject({
          date: "2026-08-14",
          from: "1",
          to: "1.000566080061092436",
          walletTransaction: null
        })
        // No EDGAR here: the income per share is known, the declared dividend and the rate are not.
        expect(step.withholding).toMatchObject({ declaredPerShare: null, impliedWithholdingRate: null })
        expect(step.withholding.paidPerShare).not.toBeNull()
        expect(activity.evidence.feedRounds).toHaveLength(1)

        const income = split(
          yield* Effect.promise(() =>
            client.callTool({ name: "get_activity", arguments: { type: "income.multiplier_increase", limit: 1 } })
          )
        )
        const restIncome = yield* call("GET", "/v1/events?type=income.multiplier_increase&limit=1", { key })
        expect(income.figures.events).toEqual(restIncome.body.events)
        expect(income.figures.nextCursor).toBe(restIncome.body.nextCursor)
        // The next page by the cursor, as REST's next page (one cursor for both twins).
        const second = split(
          yield* Effect.promise(() =>
            client.callTool({
              name: "get_activity",
              arguments: { type: "income.multiplier_increase", limit: 1, cursor: income.figures.nextCursor }
            })
          )
        )
        const restSecond = yield* call(
          "GET",
          `/v1/events?type=income.multiplier_increase&limit=1&cursor=${restIncome.body.nextCursor}`,
          { key }
        )
        expect(second.figures.events).toEqual(restSecond.body.events)
        expect(second.figures.events[0].id).not.toBe(income.figures.events[0].id)

        // Bad arguments are tool errors with the REST code.
        const bad: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
          [{ type: "transfer.sideways" }, "invalid_request"],
          [{ limit: 0 }, "invalid_request"],
          [{ limit: 501 }, "invalid_request"],
          [{ from: "2026-13-01" }, "invalid_date"],
          [{ symbol: "AAPL", extra: true }, "invalid_request"],
          [{ cursor: "bm90LWEtY3Vyc29y" }, "invalid_request"]
        ]
        for (const [args, code] of bad) {
          const answer = yield* Effect.promise(() => client.callTool({ name: "get_activity", arguments: args }))
          expect(answer.isError, JSON.stringify(args)).toBe(true)
          expect((answer.structuredContent as { code: string }).code, JSON.stringify(args)).toBe(code)
        }
        const badWallet = yield* Effect.promise(() =>
          client.callTool({ name: "get_positions", arguments: { wallet: "0x123" } })
        )
        expect(badWallet.isError).toBe(true)
        expect((badWallet.structuredContent as { code: string }).code).toBe("invalid_address")

        // AAPL paused on chain: positions say so, REST and tool alike, with the block and transaction as evidence.
        const aaplAddress = chain.tokenList.tokens.find((t) => t.symbol === "AAPL")!.address
        const pauseTx = `0x${"ab".repeat(32)}`
        yield* Effect.orDie((yield* ChainStore).writeBatch(chain.node.chainId, {
          pauses: [{
            txHash: pauseTx,
            logIndex: 0,
            block: 999_999,
            time: new Date("2026-11-20T21:00:00Z"),
            token: aaplAddress,
            kind: "Paused"
          }]
        }))
        const paused = split(yield* Effect.promise(() => client.callTool({ name: "get_positions", arguments: {} })))
        expect(paused.figures).toEqual((yield* call("GET", "/v1/positions", { key })).body)
        const pausedByToken = Object.fromEntries(paused.figures.positions.map((p: any) => [p.token, p]))
        expect(pausedByToken.AAPL.paused).toEqual({
          since: "2026-11-20T21:00:00.000Z",
          block: 999_999,
          txHash: pauseTx,
          provisional: false
        })
        expect(pausedByToken.MU.paused).toBeNull()
        expect(paused.evidence.pauses).toEqual([{ token: "AAPL", block: 999_999, txHash: pauseTx }])
      }))
  }
)

layer(mcpServer(TestDatabase.postgres), { timeout: 60_000 })(
  "the official MCP SDK client, no rates loaded yet",
  (it) => {
    it.scoped("get_exchange_rate_on answers nulls and status rates_not_loaded, not a tool error (REST answers 503)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-23T10:00:00Z"))
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-fx-empty")
        const client = yield* connect(url, key)
        const answer = yield* Effect.promise(() =>
          client.callTool({ name: "get_exchange_rate_on", arguments: { currency: "GBP", date: "2025-05-09" } })
        )
        expect(answer.isError).toBeFalsy()
        expect(answer.structuredContent).toMatchObject({
          quote: "GBP",
          rate: null,
          status: "rates_not_loaded",
          evidence: { rates: [] }
        })
        // A bad argument is still the caller's mistake: a tool error.
        const bad = yield* Effect.promise(() =>
          client.callTool({ name: "get_exchange_rate_on", arguments: { currency: "XAU", date: "2025-05-09" } })
        )
        expect(bad.isError).toBe(true)
        expect(bad.structuredContent).toMatchObject({ code: "unsupported_currency" })
      }))
  }
)
