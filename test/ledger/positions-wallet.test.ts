import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, LedgerInput } from "@scaledger/domain/ledger/LedgerInput"
import { Effect, Either, Layer, Option } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

const A = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
const EXCHANGE = "0x00000000000000000000000000000000000000e1"
const at = (iso: string) => Date.parse(iso) / 1000
const feed = "0x000000000000000000000000000000000000feed"
type Transfer = Extract<LedgerEvent, { readonly kind: "transfer" }>
const buy = (id: string, to: string, tokens: number, iso: string, block: number): Transfer => ({
  kind: "transfer",
  id,
  token: "AAPL",
  tokenAddress: "0x00000000000000000000000000000000000000aa",
  from: EXCHANGE,
  to,
  raw: (BigInt(tokens) * 10n ** 18n).toString(),
  block,
  logIndex: 0,
  txHash: `0x${block.toString(16).padStart(64, "0")}`,
  timestamp: at(iso),
  classification: { type: "transfer.in", relationship: "exchange", classifiedBy: "user", confirmed: true }
})

const Db = TestDatabase.pglite
const Services = Layer.mergeAll(restServer(Db), Layer.mergeAll(LedgerStore.Default, WalletsRepo.Default)).pipe(
  Layer.provideMerge(Db)
)

const prices = {
  AAPL: [
    { roundId: "1", answer: "10000000000", updatedAt: at("2026-01-02T00:00:00Z"), feed },
    { roundId: "2", answer: "11000000000", updatedAt: at("2026-03-01T00:00:00Z"), feed }
  ]
}

/** Stores a build of the account's ledger, as the ledger worker would, and returns the account's key. */
const storedAccount = (
  name: string,
  settings: Pick<LedgerInput, "country" | "rates">,
  events: ReadonlyArray<LedgerEvent>
) =>
  Effect.gen(function*() {
    const { key } = yield* newKey(name)
    const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(name)))
    for (const address of [A, B]) {
      yield* Effect.orDie((yield* WalletsRepo).insert({
        accountId: account.id,
        address,
        label: "",
        self: true,
        watchingFromBlock: null,
        watchingFromAt: null,
        chainId: 31337
      }))
    }
    const report = Either.getOrThrow(Ledger.run({
      wallets: [{ address: A, self: true }, { address: B, self: true }],
      ...settings,
      prices,
      events,
      asOf: at("2026-03-02T00:00:00Z")
    }))
    const sql = yield* SqlClient.SqlClient
    yield* Effect.orDie(sql`INSERT INTO ledger_builds (account_id, lease_owner, lease_until)
                            VALUES (${account.id}, 'test', now() + interval '1 minute')
                            ON CONFLICT (account_id) DO UPDATE SET lease_owner = 'test', lease_until = now() + interval '1 minute'`)
    const { disposals, income: _i, lots: _l, movements: _m, positions: _p, splits: _s, ...summary } = report
    const stored = yield* Effect.orDie((yield* LedgerStore).store(account.id, "test", 1, {
      report: summary,
      positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
      lots: report.lots.map((row) => ({ token: row.token, row })),
      disposals: disposals.map((row) => ({ token: row.token, day: row.date, row })),
      events: []
    }))
    expect(stored).toBe(true)
    return key
  })

/** A DE build: account lot scope, USD. */
const deAccount = storedAccount("de-account", { country: "DE" }, [
  buy("a1", A, 3, "2026-01-05T15:00:00Z", 1),
  buy("b1", B, 1, "2026-01-06T15:00:00Z", 2)
])

const identity = { currency: "USD", rate: "1", source: "identity", rateDate: "2026-03-02", carriedForward: false }

layer(Services, { timeout: 60_000 })("GET /v1/positions?wallet= under the DE account scope", (it) => {
  it.effect("shows the wallet's own holding; without the parameter, the pooled position", () =>
    Effect.gen(function*() {
      const key = yield* deAccount
      const pooled = yield* call("GET", "/v1/positions", { key })
      expect(pooled.status).toBe(200)
      expect(pooled.body.positions).toHaveLength(1)
      expect(pooled.body.positions[0]).toMatchObject({
        wallet: null,
        balance: "4",
        holdings: [{ wallet: B, balance: "1" }, { wallet: A, balance: "3" }],
        costBasisAmount: "400",
        valueUsd: "440",
        // USD: the value's rate is the identity of the valuation date.
        rate: identity
      })

      const own = yield* call("GET", `/v1/positions?wallet=${B.toLowerCase()}`, { key })
      expect(own.status).toBe(200)
      expect(own.body.positions).toEqual([{
        ...pooled.body.positions[0],
        wallet: B,
        holdings: [{ wallet: B, balance: "1" }],
        balance: "1",
        sharesEquivalent: "1",
        costBasis: "$100.00",
        costBasisAmount: "100",
        unreportedIncome: "$0.00",
        unreportedIncomeAmount: "0",
        value: "$110.00",
        valueAmount: "110",
        valueUsd: "110",
        unrealisedGain: "10",
        rate: identity
      }])

      const a = yield* call("GET", `/v1/positions?wallet=${A}`, { key })
      expect(a.body.positions[0]).toMatchObject({ wallet: A, balance: "3", costBasisAmount: "300", valueUsd: "330" })

      const stranger = yield* call("GET", `/v1/positions?wallet=${EXCHANGE}`, { key })
      expect(stranger.status).toBe(404)
    }))
})

layer(Services, { timeout: 60_000 })("the rate behind each converted figure over REST", (it) => {
  const source = "ecb-via-eurofxref"
  const entry = (date: string, rate: string) => ({ date, rate, source, rateDate: date, carriedForward: false })
  /** SGD per USD on business days only: the Saturday sale (2026-01-10) borrows Friday's rate. */
  const sgd = {
    currency: "SGD" as const,
    rates: [entry("2026-01-05", "1.35"), entry("2026-01-09", "1.36"), entry("2026-03-02", "1.3")]
  }
  const sold: LedgerEvent = {
    ...buy("s1", EXCHANGE, 1, "2026-01-10T15:00:00Z", 2),
    from: A,
    classification: { type: "transfer.out", relationship: "exchange", classifiedBy: "user", confirmed: true }
  }

  it.effect("positions, the portfolio's totals, lots and disposals carry rate, source, rate date, carried forward", () =>
    Effect.gen(function*() {
      const key = yield* storedAccount("sgd-account", { country: "US", rates: sgd }, [
        buy("a1", A, 3, "2026-01-05T15:00:00Z", 1),
        sold
      ])
      const valuation = { currency: "SGD", rate: "1.3", source, rateDate: "2026-03-02", carriedForward: false }
      const positions = yield* call("GET", "/v1/positions", { key })
      expect(positions.status).toBe(200)
      expect(positions.body.positions).toEqual([
        expect.objectContaining({ wallet: A, valueUsd: "220", valueAmount: "286", value: "S$286.00", rate: valuation })
      ])

      const portfolio = yield* call("GET", "/v1/portfolio", { key })
      expect(portfolio.status).toBe(200)
      expect(portfolio.body.totals.rate).toEqual(valuation)
      expect(portfolio.body.positions[0].rate).toEqual(valuation)

      const basis = yield* call("GET", "/v1/basis?token=AAPL", { key })
      expect(basis.status).toBe(200)
      expect(basis.body.lots).toEqual([expect.objectContaining({
        acquired: "2026-01-05",
        rate: "1.35",
        rateDate: "2026-01-05",
        source,
        carriedForward: false
      })])
      expect(basis.body.disposals).toEqual([expect.objectContaining({
        date: "2026-01-10",
        rate: "1.36",
        rateDate: "2026-01-09",
        source,
        carriedForward: true
      })])
    }))

  it.effect("a USD account's portfolio totals carry the identity", () =>
    Effect.gen(function*() {
      const key = yield* deAccount
      const portfolio = yield* call("GET", "/v1/portfolio", { key })
      expect(portfolio.status).toBe(200)
      expect(portfolio.body.totals.rate).toEqual(identity)
      const basis = yield* call("GET", "/v1/basis?token=AAPL", { key })
      expect(basis.body.lots[0]).toMatchObject({ rate: "1", source: "identity", carriedForward: false })
    }))
})
