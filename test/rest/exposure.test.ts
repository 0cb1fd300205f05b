import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Ledger, type LedgerInput } from "@scaledger/domain/ledger/index"
import { ROBINHOOD_CHAIN_ID } from "@scaledger/workers/chain/ChainConfig"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const WALLET = addr(1)
const SELLER = addr(0x99)
const unix = (iso: string) => Date.parse(iso) / 1000
const raw = (tokens: number) => (BigInt(tokens) * 10n ** 18n).toString()

// Five held tokens, one per status; addresses double as token keys.
const TOKENS = { AAPL: addr(0xa1), TSLA: addr(0xa2), F: addr(0xa3), CRWD: addr(0xa4), MU: addr(0xa5) } as const
const FEEDS = { AAPL: addr(0xf1), TSLA: addr(0xf2), CRWD: addr(0xf4), MU: addr(0xf5) } as const

const buy = (block: number, symbol: keyof typeof TOKENS, tokens: number) => ({
  id: `buy-${block}`,
  kind: "transfer" as const,
  token: symbol,
  tokenAddress: TOKENS[symbol],
  from: SELLER,
  to: WALLET,
  raw: raw(tokens),
  block,
  logIndex: 0,
  txHash: `0x${block.toString(16).padStart(64, "0")}`,
  timestamp: unix("2026-11-02T15:00:00Z")
})

const input: LedgerInput = {
  wallets: [{ address: WALLET, self: true }],
  country: "US",
  // Only AAPL is priced in the ledger's own table ($200 since 1 November): the other figures stay unknown.
  prices: {
    AAPL: [{ roundId: "1", answer: "20000000000", updatedAt: unix("2026-11-01T00:00:00Z"), feed: addr(0xf1) }]
  },
  events: [buy(1, "AAPL", 10), buy(2, "TSLA", 2), buy(3, "F", 100), buy(4, "CRWD", 1), buy(5, "MU", 3)],
  asOf: unix("2026-11-20T12:00:00Z")
}

const round = (symbol: keyof typeof FEEDS, roundId: number, usd: string, iso: string) => ({
  feed: FEEDS[symbol],
  token: TOKENS[symbol],
  roundId: BigInt(roundId),
  answer: BigInt(Math.round(Number(usd) * 100)) * 10n ** 6n,
  decimals: 8,
  startedAt: unix(iso),
  updatedAt: unix(iso),
  answeredInRound: BigInt(roundId)
})

// Friday 2026-11-20: the close is 16:00 EST = 21:00 UTC. Saturday nothing; Monday 2026-11-23 the overnight session
// trades before the 14:30 UTC open.
const ROUNDS = [
  round("AAPL", 10, "230", "2026-11-20T20:59:30Z"),
  round("AAPL", 11, "231", "2026-11-20T23:00:00Z"),
  round("AAPL", 12, "235", "2026-11-23T09:00:00Z"),
  round("TSLA", 20, "400", "2026-11-20T20:58:00Z"),
  round("TSLA", 21, "380", "2026-11-23T09:00:00Z"),
  round("CRWD", 40, "500", "2026-11-21T10:00:00Z"), // recorded only from Saturday on
  round("MU", 50, "100", "2026-11-18T20:00:00Z") // nothing since Wednesday
]

const seed = (accountName: string, ledgerInput: LedgerInput = input) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const account = Option.getOrThrow(yield* (yield* AccountsRepo).findByName(accountName))
    const report = Either.getOrThrow(Ledger.run(ledgerInput))
    const { disposals: _d, income: _i, lots: _l, movements: _m, positions: _p, splits: _s, ...summary } = report
    yield* sql`INSERT INTO ledger_builds (account_id, requested_version, lease_owner, lease_until)
               VALUES (${account.id}, 1, 'test', now() + interval '1 hour')`
    yield* (yield* LedgerStore).store(account.id, "test", 1, {
      report: summary,
      positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
      lots: [],
      disposals: [],
      events: []
    })
  })

const serverOn = (database: Layer.Layer<SqlClient.SqlClient>) =>
  restServer(database).pipe(
    Layer.provideMerge(Layer.mergeAll(LedgerStore.Default, PriceRounds.Default)),
    Layer.provideMerge(database)
  )
const server = serverOn(TestDatabase.postgres)

for (const [engine, database] of [["PostgreSQL", TestDatabase.postgres], ["PGlite", TestDatabase.pglite]] as const) {
  layer(serverOn(database), { timeout: 60_000 })(`GET /v1/exposure/weekend (${engine})`, (it) => {
    const setup = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const existing = yield* sql`SELECT 1 FROM price_rounds LIMIT 1`
      if (existing.length === 0) {
        yield* (yield* PriceRounds).store(ROBINHOOD_CHAIN_ID, ROUNDS)
        // TSLA paused by its issuer early Monday, as the recorder stores the Paused() log.
        yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                 VALUES (${ROBINHOOD_CHAIN_ID}, ${"0x" + "ab".repeat(32)}, 0, 777, ${new Date("2026-11-23T01:00:00Z")},
                         ${TOKENS.TSLA}, 'Paused')`
      }
    })

    describe("over a weekend", () => {
      it.effect("Saturday: Friday's close round against the overnight round, every status explained", () =>
        Effect.gen(function*() {
          yield* setup
          const { key } = yield* newKey("exp-saturday")
          yield* seed("exp-saturday")
          yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
          const reply = yield* call("GET", "/v1/exposure/weekend", { key })
          expect(reply.status, reply.text).toBe(200)
          expect(reply.body).toMatchObject({
            asOf: "2026-11-21T12:00:00.000Z",
            marketOpen: false,
            lastClose: "2026-11-20T21:00:00.000Z",
            nextOpen: "2026-11-23T14:30:00.000Z",
            currency: "USD",
            rate: { rate: "1", source: "identity" }
          })
          const bySymbol = Object.fromEntries(reply.body.tokens.map((t: any) => [t.symbol, t]))
          expect(Object.keys(bySymbol).sort()).toEqual(["AAPL", "CRWD", "F", "MU", "TSLA"])
          expect(bySymbol.AAPL).toMatchObject({
            status: "ok",
            balance: "10",
            lastClose: {
              at: "2026-11-20T21:00:00.000Z",
              round: { feed: FEEDS.AAPL, roundId: "10", updatedAt: "2026-11-20T20:59:30.000Z", answer: "230" }
            },
            current: { roundId: "11", answer: "231" },
            // 10 × (231 − 230) = 10; 1 / 230 = 0.43478…%
            driftUsd: "10",
            drift: "10",
            driftPercent: "0.4348",
            paused: { paused: false, since: null }
          })
          expect(bySymbol.F).toMatchObject({
            status: "no_feed",
            current: null,
            driftUsd: null,
            lastClose: { round: null }
          })
          expect(bySymbol.CRWD).toMatchObject({
            status: "no_round_at_close",
            lastClose: { round: null },
            current: { roundId: "40" },
            driftUsd: null
          })
          expect(bySymbol.MU).toMatchObject({
            status: "feed_stale",
            lastClose: { round: { roundId: "50", updatedAt: "2026-11-18T20:00:00.000Z" } },
            driftUsd: null,
            driftPercent: null
          })
          // Not paused yet on Saturday (the pause event comes Monday 01:00 UTC): drift 0 from the same round.
          expect(bySymbol.TSLA).toMatchObject({ status: "ok", driftUsd: "0", driftPercent: "0" })
          expect(reply.body.evidence.rounds).toContain(`${FEEDS.AAPL}:10`)
          // USD: no exchange rate behind the figures.
          expect(reply.body.evidence.rates).toEqual([])
        }))

      it.effect("a round answering zero or less is no price; a rate more than 7 days old converts nothing", () =>
        Effect.gen(function*() {
          yield* setup
          const sql = yield* SqlClient.SqlClient
          const NVDA = addr(0xa6)
          const feed = addr(0xf6)
          const { key } = yield* newKey("exp-invalid")
          yield* seed("exp-invalid", {
            ...input,
            rates: { currency: "SGD", rates: [] },
            events: [{ ...buy(6, "AAPL", 2), token: "NVDA", tokenAddress: NVDA }]
          })
          yield* (yield* PriceRounds).store(ROBINHOOD_CHAIN_ID, [
            { ...round("AAPL", 60, "100", "2026-11-20T20:00:00Z"), feed, token: NVDA, roundId: 60n },
            { ...round("AAPL", 61, "0", "2026-11-21T10:00:00Z"), feed, token: NVDA, roundId: 61n, answer: -5n }
          ])
          // The newest SGD rate is of 2026-11-11, ten days before.
          yield* sql`INSERT INTO fx_rates (day, source, per_eur)
                     VALUES ('2026-11-11', 'ecb-via-eurofxref', '{"USD":"1.1","SGD":"1.43"}') ON CONFLICT DO NOTHING`
          yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
          const reply = yield* call("GET", "/v1/exposure/weekend", { key })
          expect(reply.status, reply.text).toBe(200)
          expect(reply.body).toMatchObject({ currency: "SGD", rate: null })
          expect(reply.body.tokens).toHaveLength(1)
          expect(reply.body.tokens[0]).toMatchObject({
            symbol: "NVDA",
            status: "no_price",
            lastClose: { round: { roundId: "60", answer: "100" } },
            driftUsd: null,
            driftPercent: null,
            drift: null
          })
          // A rate of three days before is used.
          yield* sql`INSERT INTO fx_rates (day, source, per_eur)
                     VALUES ('2026-11-18', 'ecb-via-eurofxref', '{"USD":"1.1","SGD":"1.43"}') ON CONFLICT DO NOTHING`
          const fresh = yield* call("GET", "/v1/exposure/weekend", { key })
          expect(fresh.body.rate).toMatchObject({ currency: "SGD", rateDate: "2026-11-18", rate: "1.3" })
          // The rate behind the converted figures is in the evidence.
          expect(reply.body.evidence.rates).toEqual([])
          expect(fresh.body.evidence.rates).toEqual([fresh.body.rate])
          const summary = yield* call("GET", "/v1/portfolio/summary", { key })
          expect(summary.status, summary.text).toBe(200)
          // The summary converts at the rate its build used (none here: the build had no SGD rates).
          expect(summary.body).toMatchObject({ currency: "SGD", rate: null, evidence: { rates: [] } })
        }))

      it.effect("an account holding nothing answers in its reporting currency, as its other reads do", () =>
        Effect.gen(function*() {
          yield* setup
          const sql = yield* SqlClient.SqlClient
          const { key } = yield* newKey("exp-empty-sgd")
          yield* seed("exp-empty-sgd", { ...input, rates: { currency: "SGD", rates: [] }, events: [] })
          yield* sql`INSERT INTO fx_rates (day, source, per_eur)
                     VALUES ('2026-11-18', 'ecb-via-eurofxref', '{"USD":"1.1","SGD":"1.43"}') ON CONFLICT DO NOTHING`
          yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
          const reply = yield* call("GET", "/v1/exposure/weekend", { key })
          expect(reply.status, reply.text).toBe(200)
          expect(reply.body.tokens).toEqual([])
          // Not USD with the identity rate: the account reports in SGD.
          expect(reply.body).toMatchObject({ currency: "SGD", rate: { currency: "SGD", rateDate: "2026-11-18" } })
          const summary = yield* call("GET", "/v1/portfolio/summary", { key })
          expect(summary.body.currency).toBe("SGD")
        }))

      it.effect("Monday before the open: the Monday round moves the drift; a paused token says so", () =>
        Effect.gen(function*() {
          yield* setup
          const { key } = yield* newKey("exp-monday")
          yield* seed("exp-monday")
          yield* TestClock.setTime(Date.parse("2026-11-23T12:00:00Z"))
          const reply = yield* call("GET", "/v1/exposure/weekend", { key })
          const bySymbol = Object.fromEntries(reply.body.tokens.map((t: any) => [t.symbol, t]))
          // 10 × (235 − 230) = 50; 5 / 230 = 2.17391…%
          expect(bySymbol.AAPL).toMatchObject({ status: "ok", current: { roundId: "12" }, driftUsd: "50" })
          expect(bySymbol.AAPL.driftPercent).toBe("2.1739")
          // 2 × (380 − 400) = −40, −5 %.
          expect(bySymbol.TSLA).toMatchObject({
            status: "token_paused",
            driftUsd: "-40",
            driftPercent: "-5",
            paused: { paused: true, since: "2026-11-23T01:00:00.000Z", block: 777 }
          })
          // But the stored event, not a guess: the oracle was never paused.
          expect(bySymbol.TSLA.oraclePaused.paused).toBe(false)
        }))

      it.effect("Monday during the session: market_open, still measured from Friday's close; one symbol", () =>
        Effect.gen(function*() {
          yield* setup
          const { key } = yield* newKey("exp-open")
          yield* seed("exp-open")
          yield* TestClock.setTime(Date.parse("2026-11-23T15:00:00Z"))
          const reply = yield* call("GET", "/v1/exposure/weekend?symbol=aapl", { key })
          expect(reply.body.marketOpen).toBe(true)
          expect(reply.body.lastClose).toBe("2026-11-20T21:00:00.000Z")
          expect(reply.body.tokens).toHaveLength(1)
          expect(reply.body.tokens[0]).toMatchObject({ symbol: "AAPL", status: "market_open", driftUsd: "50" })
          const missing = yield* call("GET", "/v1/exposure/weekend?symbol=NVDA", { key })
          expect(missing.status).toBe(404)
          expect(missing.body.error.code).toBe("not_found")
        }))
    })
  })
}

layer(server, { timeout: 60_000 })("GET /v1/portfolio/summary", (it) => {
  it.effect("value, basis, gain, accrued income, the rate in use, paused tokens and whether the market is open", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                 VALUES (${ROBINHOOD_CHAIN_ID}, ${"0x" + "cd".repeat(32)}, 0, 777, ${new Date("2026-11-23T01:00:00Z")},
                         ${TOKENS.TSLA}, 'Paused')`
      const { key } = yield* newKey("sum-monday")
      yield* seed("sum-monday")
      yield* TestClock.setTime(Date.parse("2026-11-23T12:00:00Z"))
      const reply = yield* call("GET", "/v1/portfolio/summary", { key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({
        asOf: "2026-11-20T12:00:00.000Z",
        currency: "USD",
        marketOpen: false,
        lastClose: "2026-11-20T21:00:00.000Z",
        nextOpen: "2026-11-23T14:30:00.000Z",
        positionCount: 5,
        rate: { currency: "USD", rate: "1", source: "identity", carriedForward: false },
        pausedTokens: [{ symbol: "TSLA", since: "2026-11-23T01:00:00.000Z", block: 777 }]
      })
      // Only AAPL is priced: 10 × $200. The four others make the totals unknown, never a silent partial sum.
      expect(reply.body.value).toEqual({
        amount: null,
        formatted: null,
        usd: null,
        knownAmount: "2000",
        unknownCount: 4
      })
      expect(reply.body.costBasis).toMatchObject({ amount: null, knownAmount: "2000", unknownCount: 4 })
      expect(reply.body.accruedDividendIncome).toMatchObject({ amount: "0", formatted: "$0.00", unknownCount: 0 })
      expect(reply.body.evidence.rounds).toEqual([`${addr(0xf1)}:1`])
      yield* TestClock.setTime(Date.parse("2026-11-23T15:00:00Z"))
      const open = yield* call("GET", "/v1/portfolio/summary", { key })
      expect(open.body.marketOpen).toBe(true)
      const noKey = yield* call("GET", "/v1/portfolio/summary")
      expect(noKey.status).toBe(401)
    }))
})

layer(server, { timeout: 60_000 })("GET /v1/portfolio/summary of a position sold this year", (it) => {
  it.effect("cites the income of a token no longer held, which its accrued income includes", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("sum-sold")
      const step = {
        id: "step",
        kind: "multiplier" as const,
        token: "AAPL",
        tokenAddress: TOKENS.AAPL,
        from: "1000000000000000000",
        to: "1001000000000000000",
        effectiveAt: unix("2026-11-10T15:10:00Z"),
        block: 2,
        logIndex: -1,
        stepKind: "dividend" as const
      }
      // 10 AAPL bought, a dividend step (10 × 0.001 × $200 = $2 of income), then all 10 sent away.
      const sell = { ...buy(3, "AAPL", 10), from: WALLET, to: SELLER, timestamp: unix("2026-11-12T15:00:00Z") }
      yield* seed("sum-sold", { ...input, events: [buy(1, "AAPL", 10), step, sell] })
      yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
      const positions = yield* call("GET", "/v1/positions", { key })
      expect(positions.body.positions).toMatchObject([{ token: "AAPL", balance: "0", unreportedIncome: "$2.00" }])
      const reply = yield* call("GET", "/v1/portfolio/summary", { key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.accruedDividendIncome).toMatchObject({ amount: "2", formatted: "$2.00" })
      // The income is in the answer: the change behind it is in its evidence.
      expect(reply.body.evidence.incomeEventIds).toEqual(["step"])
    }))
})

layer(server, { timeout: 60_000 })("GET /v1/portfolio/summary's rate", (it) => {
  it.effect("is the portfolio's: the identity of the build's valuation date when nothing is priced", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("sum-unpriced")
      // Only F, which has no price; the build was made on Friday the 20th, the read comes on Saturday.
      yield* seed("sum-unpriced", { ...input, events: [buy(3, "F", 100)] })
      yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
      const portfolio = yield* call("GET", "/v1/portfolio", { key })
      expect(portfolio.body.totals.rate).toMatchObject({ source: "identity", rateDate: "2026-11-20" })
      const reply = yield* call("GET", "/v1/portfolio/summary", { key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.rate).toEqual(portfolio.body.totals.rate)
    }))
})

layer(server, { timeout: 60_000 })("GET /v1/portfolio with a position no longer held", (it) => {
  it.effect("a zero balance is worth zero, priced or not: it leaves the total value known", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("pf-sold-unpriced")
      // F has no price: its dividend step's income is unknown, so the position stays listed after all of it left.
      const step = {
        id: "f-step",
        kind: "multiplier" as const,
        token: "F",
        tokenAddress: TOKENS.F,
        from: "1000000000000000000",
        to: "1001000000000000000",
        effectiveAt: unix("2026-11-10T15:10:00Z"),
        block: 4,
        logIndex: -1,
        stepKind: "dividend" as const
      }
      const sell = { ...buy(5, "F", 100), from: WALLET, to: SELLER, timestamp: unix("2026-11-12T15:00:00Z") }
      yield* seed("pf-sold-unpriced", { ...input, events: [buy(1, "AAPL", 10), buy(3, "F", 100), step, sell] })
      yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
      const positions = yield* call("GET", "/v1/positions", { key })
      const f = positions.body.positions.find((p: any) => p.token === "F")
      expect(f).toMatchObject({ balance: "0", valueUsd: "0" })
      const portfolio = yield* call("GET", "/v1/portfolio", { key })
      expect(portfolio.status, portfolio.text).toBe(200)
      // AAPL: 10 × $200; F: nothing held.
      expect(portfolio.body.totals.value).toMatchObject({ amount: "2000", usd: "2000", unknownCount: 0 })
      expect(portfolio.body.summary.valueUsd).toBe("2000")
      expect(portfolio.body.notices.filter((n: any) => n.kind === "missing_prices")).toEqual([])
    }))
})
