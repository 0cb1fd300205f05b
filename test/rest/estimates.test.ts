import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Ledger, type LedgerInput } from "@scaledger/domain/ledger/index"
import { Effect, Either, Layer, Option } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const ALICE = addr(1)
const BOB = addr(2)
const SELLER = addr(0x99)
const FEED = addr(0xfeed)
const unix = (iso: string) => Date.parse(iso) / 1000
const raw = (tokens: number) => (BigInt(tokens) * 10n ** 18n).toString()

const buy = (block: number, to: string, iso: string, tokens: number) => ({
  id: `buy-${block}`,
  kind: "transfer" as const,
  token: "AAPL",
  tokenAddress: addr(0xaa),
  from: SELLER,
  to,
  raw: raw(tokens),
  block,
  logIndex: 0,
  txHash: `0x${block.toString(16).padStart(64, "0")}`,
  timestamp: unix(iso)
})

// Alice: 10 AAPL on 29 February 2024 at $100 and 5 on 15 June 2024 at $120; Bob: 1 on 15 June 2024.
const input: LedgerInput = {
  wallets: [{ address: ALICE, self: true }, { address: BOB, self: true }],
  country: "US",
  prices: {
    AAPL: [
      { roundId: "1", answer: "10000000000", updatedAt: unix("2024-02-29T14:00:00Z"), feed: FEED },
      { roundId: "2", answer: "12000000000", updatedAt: unix("2024-06-15T14:00:00Z"), feed: FEED }
    ]
  },
  events: [
    buy(1, ALICE, "2024-02-29T15:00:00Z", 10),
    buy(2, ALICE, "2024-06-15T15:00:00Z", 5),
    buy(3, BOB, "2024-06-15T16:00:00Z", 1)
  ],
  asOf: unix("2025-02-28T12:00:00Z")
}

/** Stores the real ledger's build of `input` for the account, as the ledger worker would. */
const seedBuild = (accountName: string, ledgerInput: LedgerInput = input) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const account = Option.getOrThrow(yield* (yield* AccountsRepo).findByName(accountName))
    const report = Either.getOrThrow(Ledger.run(ledgerInput))
    yield* sql`INSERT INTO ledger_builds (account_id, requested_version, lease_owner, lease_until)
               VALUES (${account.id}, 1, 'test', now() + interval '1 hour')`
    const stored = yield* (yield* LedgerStore).store(account.id, "test", 1, {
      report: {},
      positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
      lots: report.lots.map((row) => ({ token: row.token, row })),
      disposals: [],
      events: []
    })
    expect(stored).toBe(true)
    return account.id
  })

const database = TestDatabase.postgres
const server = restServer(database).pipe(Layer.provideMerge(LedgerStore.Default), Layer.provideMerge(database))

layer(server, { timeout: 60_000, excludeTestServices: true })("GET /v1/estimates/sale", (it) => {
  describe("figures", () => {
    it.effect("FIFO from the chosen wallet, split by the US calendar rule across 29 February", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-figures")
        yield* seedBuild("est-figures")
        const reply = yield* call(
          "GET",
          `/v1/estimates/sale?symbol=aapl&shares=12&price=150&date=2025-02-28&wallet=${ALICE}`,
          { key }
        )
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body).toMatchObject({
          status: "ok",
          symbol: "AAPL",
          wallet: ALICE,
          lotScope: "wallet",
          date: "2025-02-28",
          currency: "USD",
          shares: "12",
          multiplier: "1",
          price: { usdPerShare: "150", source: "given", round: null },
          rate: { currency: "USD", rate: "1", source: "identity", carriedForward: false },
          proceeds: "1800",
          basis: "1240",
          gain: "560",
          shortTerm: { shares: "12", proceeds: "1800", basis: "1240", gain: "560" },
          longTerm: { shares: "0", proceeds: "0", basis: "0", gain: "0" },
          ifWaited: { date: "2025-06-16", gainBecomingLongTerm: "560" }
        })
        expect(reply.body.lots.map((l: any) => [l.acquired, l.shares, l.holdingPeriod, l.longTermOn])).toEqual([
          ["2024-02-29", "10", "short", "2025-03-01"],
          ["2024-06-15", "2", "short", "2025-06-16"]
        ])
        expect(reply.body.evidence.eventIds).toEqual(["buy-1", "buy-2"])
        // USD's own rate (identity) is no exchange rate to cite.
        expect(reply.body.evidence.rates).toEqual([])

        const dayAfter = yield* call(
          "GET",
          `/v1/estimates/sale?symbol=AAPL&shares=12&price=150&date=2025-03-01&wallet=${ALICE}`,
          { key }
        )
        expect(dayAfter.body.longTerm).toEqual({ shares: "10", proceeds: "1500", basis: "1000", gain: "500" })
        expect(dayAfter.body.shortTerm).toEqual({ shares: "2", proceeds: "300", basis: "240", gain: "60" })
      }))

    it.effect("without a price, the position's feed round prices it (and is the evidence)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-feed")
        yield* seedBuild("est-feed")
        const reply = yield* call("GET", `/v1/estimates/sale?symbol=AAPL&shares=1&date=2025-02-28&wallet=${BOB}`, {
          key
        })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body.price).toEqual({
          usdPerShare: "120",
          source: "feed",
          round: { feed: FEED, roundId: "2", updatedAt: "2024-06-15T14:00:00.000Z", answer: "120" }
        })
        expect(reply.body).toMatchObject({ proceeds: "120", basis: "120", gain: "0" })
      }))

    it.effect("a sale date weeks ahead converts at today's rate, carried forward (the date has none yet)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-ahead")
        const rate = (date: string, rateDate = date) => ({
          date,
          rate: "1.3",
          source: "ecb-via-eurofxref",
          rateDate,
          carriedForward: rateDate !== date
        })
        yield* seedBuild("est-ahead", {
          ...input,
          rates: { currency: "SGD", rates: [rate("2024-02-29"), rate("2024-06-15", "2024-06-14"), rate("2025-02-28")] }
        })
        // Today's ECB publication (SGD per USD = 1.43 / 1.1 = 1.3).
        const today = new Date().toISOString().slice(0, 10)
        yield* Effect.flatMap(
          FxRates,
          (fx) => fx.upsert("ecb-via-eurofxref", [{ date: today, perEur: { USD: "1.1", SGD: "1.43" } }])
        ).pipe(Effect.provide(FxRates.Default))
        const ahead = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)
        const reply = yield* call(
          "GET",
          `/v1/estimates/sale?symbol=AAPL&shares=10&price=150&date=${ahead}&wallet=${ALICE}`,
          { key }
        )
        expect(reply.status, reply.text).toBe(200)
        // 10 × 150 = 1500 USD at 1.3; the 29 February lot's basis 1000 USD at its own 1.3.
        expect(reply.body).toMatchObject({
          status: "ok",
          currency: "SGD",
          rate: { currency: "SGD", rate: "1.3", rateDate: today, source: "ecb-via-eurofxref", carriedForward: true },
          proceeds: "1950",
          basis: "1300",
          gain: "650"
        })
      }))
  })

  describe("bad requests", () => {
    it.effect("each bad input answers its code", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-bad")
        yield* seedBuild("est-bad")
        const get = (query: string) => call("GET", `/v1/estimates/sale?${query}`, { key })
        const ambiguous = yield* get("symbol=AAPL&shares=1&price=1&date=2025-02-28")
        expect(ambiguous.status).toBe(400)
        expect(ambiguous.body.error).toMatchObject({ code: "invalid_request", details: { field: "wallet" } })
        expect(ambiguous.body.error.details.wallets.sort()).toEqual([ALICE, BOB])
        const tooMany = yield* get(`symbol=AAPL&shares=15.5&price=1&date=2025-02-28&wallet=${ALICE}`)
        expect(tooMany.status).toBe(400)
        expect(tooMany.body.error.details).toEqual({ field: "shares", reason: "exceeds_holding", held: "15" })
        for (const shares of ["abc", "0", "-1", "1e2"]) {
          const bad = yield* get(`symbol=AAPL&shares=${shares}&wallet=${ALICE}`)
          expect(bad.status, shares).toBe(400)
          expect(bad.body.error.code).toBe("invalid_request")
        }
        // A symbol is 1 to 64 characters: an empty one names no token (it was "The account holds no .").
        for (const symbol of ["", "A".repeat(65)]) {
          const badSymbol = yield* get(`symbol=${symbol}&shares=1&wallet=${ALICE}`)
          expect(badSymbol.status, symbol).toBe(400)
          expect(badSymbol.body.error.code).toBe("invalid_request")
          expect(badSymbol.body.error.details.issues[0].path).toEqual(["symbol"])
        }
        for (const path of ["/v1/dividends?symbol=", "/v1/exposure/weekend?symbol=", "/v1/filings?symbol="]) {
          const empty = yield* call("GET", path, { key })
          expect([empty.status, empty.body.error?.code], path).toEqual([400, "invalid_request"])
        }
        const badPrice = yield* get(`symbol=AAPL&shares=1&price=0&wallet=${ALICE}`)
        expect(badPrice.body.error).toMatchObject({ code: "invalid_request", details: { field: "price" } })
        // Amounts are kept to 18 decimals: a price with more is refused, not a failure of the service.
        const finePrice = yield* get(`symbol=AAPL&shares=1&price=1.0000000000000000001&wallet=${ALICE}`)
        expect(finePrice.status).toBe(400)
        expect(finePrice.body.error).toMatchObject({ code: "invalid_request", details: { field: "price" } })
        const badDate = yield* get(`symbol=AAPL&shares=1&date=2025-02-30&wallet=${ALICE}`)
        expect(badDate.status).toBe(400)
        expect(badDate.body.error.code).toBe("invalid_date")
        const early = yield* get(`symbol=AAPL&shares=1&date=2024-06-01&wallet=${ALICE}`)
        expect(early.body.error).toMatchObject({ code: "invalid_date", details: { reason: "before_holdings" } })
        expect(early.body.error.message).toMatch(
          /^date \d{4}-\d\d-\d\d is before the position's newest lot \(\d{4}-\d\d-\d\d\): the estimate sells the holding as it stands/
        )
        const badWallet = yield* get("symbol=AAPL&shares=1&wallet=0x123")
        expect(badWallet.body.error.code).toBe("invalid_address")
        const otherWallet = yield* get(`symbol=AAPL&shares=1&wallet=${addr(3)}`)
        expect(otherWallet.status).toBe(404)
        const unknown = yield* get("symbol=NVDA&shares=1")
        expect(unknown.status).toBe(404)
        expect(unknown.body.error.code).toBe("not_found")
        const missing = yield* get("symbol=AAPL")
        expect(missing.status).toBe(400)
        expect(missing.body.error.code).toBe("invalid_request")
      }))

    it.effect("under account lot scope (DE) an address sells at most its own balance, FIFO from the account's lots", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-de")
        yield* seedBuild("est-de", { ...input, country: "DE" })
        const get = (query: string) => call("GET", `/v1/estimates/sale?${query}`, { key })
        // Bob holds 1 of the account's 16: 2 is more than he can sell, though the account's pool holds them.
        const tooMany = yield* get(`symbol=AAPL&shares=2&price=150&date=2025-02-28&wallet=${BOB}`)
        expect(tooMany.status, tooMany.text).toBe(400)
        expect(tooMany.body.error.details).toEqual({ field: "shares", reason: "exceeds_holding", held: "1" })
        // His one share comes, FIFO over the account, out of Alice's lot of 29 February ($100).
        const one = yield* get(`symbol=AAPL&shares=1&price=150&date=2025-02-28&wallet=${BOB}`)
        expect(one.status, one.text).toBe(200)
        expect(one.body).toMatchObject({ lotScope: "account", wallet: null, basis: "100", gain: "50" })
        // Without a wallet the account sells: all 16.
        expect((yield* get("symbol=AAPL&shares=16&price=150&date=2025-02-28")).status).toBe(200)
      }))

    it.effect("answers 409 replay_in_progress while the account is rebuilt", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-replay")
        const accountId = yield* seedBuild("est-replay")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE ledger_builds SET replay_version = 2, requested_version = 2 WHERE account_id = ${accountId}`
        const reply = yield* call("GET", `/v1/estimates/sale?symbol=AAPL&shares=1&wallet=${ALICE}`, { key })
        expect(reply.status).toBe(409)
        expect(reply.body.error.code).toBe("replay_in_progress")
      }))

    it.effect("a malformed wallet is 400 invalid_address even while the account is rebuilt (not 409)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("est-replay-bad-wallet")
        const accountId = yield* seedBuild("est-replay-bad-wallet")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE ledger_builds SET replay_version = 2, requested_version = 2 WHERE account_id = ${accountId}`
        for (
          const path of [
            "/v1/estimates/sale?symbol=AAPL&shares=1&wallet=0x123",
            "/v1/positions?wallet=0x123",
            `/v1/positions?wallet=${ALICE.slice(0, 41)}G`
          ]
        ) {
          const reply = yield* call("GET", path, { key })
          expect(reply.status, path).toBe(400)
          expect(reply.body.error.code, path).toBe("invalid_address")
        }
        // A well-formed one still waits for the replay.
        expect((yield* call("GET", `/v1/positions?wallet=${ALICE}`, { key })).status).toBe(409)
      }))
  })
})
