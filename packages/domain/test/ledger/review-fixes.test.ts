import { describe, expect, it } from "vitest"
import type { LedgerEvent, RateTable } from "../../src/ledger/index.js"
import { address, multiplier, round, runLedger, transfer, user } from "./fixtures.js"

const A = address(0xa)
const B = address(0xb)
const EXCHANGE = address(0xe)
const exchangeIn = user("transfer.in", "exchange")
const exchangeOut = user("transfer.out", "exchange")

describe("a lot whose acquisition date is unknown has no holding period", () => {
  const prices = { TSLA: [round(1, "100", "2023-01-01T00:00:00Z")] }
  const wallets = [{ address: A, self: true }, { address: B, self: true }]
  // B sends 2 TSLA to A but nothing is recorded at B: A's lot for them has no known acquisition date (nor basis).
  const events: Array<LedgerEvent> = [
    transfer({
      id: "buy",
      token: "TSLA",
      from: EXCHANGE,
      to: A,
      qty: "1",
      time: "2023-06-01T15:00:00Z",
      block: 1,
      classification: exchangeIn
    }),
    transfer({ id: "move", token: "TSLA", from: B, to: A, qty: "2", time: "2023-06-02T15:00:00Z", block: 2 }),
    transfer({
      id: "sell",
      token: "TSLA",
      from: A,
      to: EXCHANGE,
      qty: "3",
      time: "2025-06-03T15:00:00Z",
      block: 3,
      classification: exchangeOut
    })
  ]

  it("gives the unknown-date slice a null holding period, the known one its period", () => {
    const report = runLedger({ wallets, country: "US", prices }, events, "2025-12-31T00:00:00Z")
    expect(report.disposals.map((d) => [d.id, d.lotId, d.qty, d.holdingPeriod, d.gainUsd])).toEqual([
      ["sell:0", "buy", "1", "long", "0"],
      // Held "more than a year" only if it was acquired when it arrived, which nobody knows: not "long", not "short".
      ["sell:1", "move#unmatched", "2", null, null]
    ])
    expect(report.disposals[1]!.nullReasons).toContainEqual({ reason: "incomplete_history", eventId: "move" })
  })

  it("keeps the period of a lot with a known date, even when it moved between own addresses", () => {
    const known: Array<LedgerEvent> = [
      events[0]!,
      transfer({ id: "move", token: "TSLA", from: A, to: B, qty: "1", time: "2023-06-02T15:00:00Z", block: 2 }),
      transfer({
        id: "sell",
        token: "TSLA",
        from: B,
        to: EXCHANGE,
        qty: "1",
        time: "2024-06-01T15:00:00Z",
        block: 3,
        classification: exchangeOut
      })
    ]
    const report = runLedger({ wallets, country: "US", prices }, known, "2025-12-31T00:00:00Z")
    expect(report.disposals.map((d) => [d.lotId, d.acquired, d.holdingPeriod])).toEqual([[
      "buy",
      "2023-06-01",
      "short"
    ]])
  })
})

describe("an account-scope (DE) position shows each address's own share", () => {
  const prices = {
    AAPL: [round(1, "100", "2026-01-02T00:00:00Z"), round(2, "110", "2026-03-01T00:00:00Z")]
  }
  const wallets = [{ address: A, self: true }, { address: B, self: true }]
  const events: Array<LedgerEvent> = [
    transfer({
      id: "a1",
      token: "AAPL",
      from: EXCHANGE,
      to: A,
      qty: "3",
      time: "2026-01-05T15:00:00Z",
      block: 1,
      classification: exchangeIn
    }),
    transfer({
      id: "b1",
      token: "AAPL",
      from: EXCHANGE,
      to: B,
      qty: "1",
      time: "2026-01-06T15:00:00Z",
      block: 2,
      classification: exchangeIn
    }),
    multiplier({
      id: "div",
      token: "AAPL",
      from: "1",
      to: "1.01",
      time: "2026-02-02T15:00:00Z",
      block: 3,
      stepKind: "dividend"
    })
  ]

  it("splits balance, value and income by address, and the pooled basis pro rata", () => {
    const report = runLedger({ wallets, country: "DE", prices }, events, "2026-03-02T00:00:00Z")
    expect(report.positions).toHaveLength(1)
    const position = report.positions[0]!
    expect(position).toMatchObject({ wallet: null, balance: "4", costBasisUsd: "404", unreportedIncomeUsd: "4" })
    const [a, b] = position.holdings
    // Pooled basis 400 + income 4 (4 tokens × 0.01 × 100): A holds 3/4 of the pool, B 1/4.
    expect(a).toMatchObject({ wallet: A, balance: "3" })
    expect(a!.figures).toMatchObject({
      sharesEquivalent: "3.03",
      costBasisUsd: "303",
      unreportedIncomeUsd: "3",
      unreportedIncomeEventIds: [`div:${A.toLowerCase()}`],
      value: { usd: "330" },
      unrealisedGainUsd: "27"
    })
    expect(b!.figures).toMatchObject({ costBasisUsd: "101", unreportedIncomeUsd: "1", value: { usd: "110" } })
  })

  it("leaves wallet-scope holdings as they were (no per-address figures)", () => {
    const report = runLedger({ wallets, country: "US", prices }, events, "2026-03-02T00:00:00Z")
    expect(report.positions.map((p) => p.holdings[0]!.figures)).toEqual([undefined, undefined])
  })
})

describe("a rate carried forward more than 7 days is not used", () => {
  const prices = { AAPL: [round(1, "100", "2026-01-02T00:00:00Z")] }
  const wallets = [{ address: A, self: true }]
  const buy = (time: string) =>
    transfer({ id: "buy", token: "AAPL", from: EXCHANGE, to: A, qty: "2", time, block: 1, classification: exchangeIn })
  const entry = (date: string, rateDate: string) => ({
    date,
    rate: "0.9",
    source: "ecb-via-frankfurter",
    rateDate,
    carriedForward: date !== rateDate
  })

  it("uses a rate carried 7 days; not one carried 8 (the service's own carried-forward entries included)", () => {
    const rates: RateTable = {
      currency: "EUR",
      rates: [entry("2026-01-05", "2026-01-05"), entry("2026-01-12", "2026-01-05"), entry("2026-01-13", "2026-01-05")]
    }
    const seven = runLedger(
      { wallets, country: "US", prices, rates },
      [buy("2026-01-12T15:00:00Z")],
      "2026-01-12T16:00:00Z"
    )
    expect(seven.lots[0]!.basis).toBe("180")
    expect(seven.positions[0]!.costBasisConverted).toBe("180")
    expect(seven.positions[0]!.value.converted).toMatchObject({
      amount: "180",
      rateDate: "2026-01-05",
      carriedForward: true
    })

    const eight = runLedger(
      { wallets, country: "US", prices, rates },
      [buy("2026-01-13T15:00:00Z")],
      "2026-01-13T16:00:00Z"
    )
    expect(eight.lots[0]!.basisUsd).toBe("200")
    expect(eight.lots[0]!.basis).toBeNull()
    expect(eight.lots[0]!.nullReasons).toEqual([{ reason: "stale_rate", eventId: "buy" }])
    const position = eight.positions[0]!
    expect(position.costBasisUsd).toBe("200")
    expect(position.costBasisConverted).toBeNull()
    expect(position.value.converted).toBeNull()
    expect(position.nullReasons).toEqual([
      { reason: "stale_rate", eventId: "buy" },
      { reason: "stale_rate", eventId: "valuation:2026-01-13" }
    ])
    expect(eight.totals.costBasis).toMatchObject({ usd: "200", converted: null, unconvertedCount: 1 })
    // Counted as the positions show it: with a basis in the reporting currency.
    expect(seven.summary.positionsWithBasis).toBe(1)
    expect(eight.summary.positionsWithBasis).toBe(0)
  })

  it("does not borrow across a gap of more than 7 days in the table either", () => {
    const rates: RateTable = { currency: "EUR", rates: [entry("2026-01-05", "2026-01-05")] }
    const report = runLedger(
      { wallets, country: "US", prices, rates },
      [buy("2026-01-14T15:00:00Z")],
      "2026-01-14T16:00:00Z"
    )
    expect(report.positions[0]!.costBasisConverted).toBeNull()
    expect(report.positions[0]!.nullReasons).toContainEqual({ reason: "stale_rate", eventId: "buy" })
  })

  const dividendStep = multiplier({
    id: "m1",
    token: "AAPL",
    from: "1",
    to: "1.01",
    time: "2026-01-20T14:00:00Z",
    block: 2,
    stepKind: "dividend"
  })

  it("says why a disposal's and an income's converted figures are null: stale_rate with the event it comes from", () => {
    // The only rate is of 2026-01-05: the buy uses it; the dividend step (01-20) and the sale (01-21) are 15 and 16
    // days after it, too late to carry it forward.
    const rates: RateTable = { currency: "EUR", rates: [entry("2026-01-05", "2026-01-05")] }
    const report = runLedger(
      { wallets, country: "US", prices, rates },
      [
        buy("2026-01-05T15:00:00Z"),
        dividendStep,
        transfer({
          id: "sell",
          token: "AAPL",
          from: A,
          to: EXCHANGE,
          qty: "1",
          time: "2026-01-21T15:00:00Z",
          block: 3,
          classification: exchangeOut
        })
      ],
      "2026-01-21T16:00:00Z"
    )
    const [income] = report.income
    expect(income!.incomeUsd).not.toBeNull()
    expect(income!.income).toBeNull()
    expect(income!.nullReasons).toEqual([{ reason: "stale_rate", eventId: "m1" }])

    const [disposal] = report.disposals
    expect(disposal!.proceedsUsd).toBe("100")
    expect(disposal!.proceeds).toBeNull()
    expect(disposal!.basisUsd).not.toBeNull()
    expect(disposal!.basis).toBeNull()
    // The proceeds' own date, and the step whose income is part of the lot's basis; the buy's rate was fresh.
    expect(disposal!.nullReasons).toEqual([
      { reason: "stale_rate", eventId: "sell" },
      { reason: "stale_rate", eventId: "m1" }
    ])
  })

  it("gives an income with a fresh rate no reason", () => {
    const rates: RateTable = { currency: "EUR", rates: [entry("2026-01-19", "2026-01-19")] }
    const report = runLedger(
      { wallets, country: "US", prices, rates },
      [
        buy("2026-01-05T15:00:00Z"),
        dividendStep
      ],
      "2026-01-21T16:00:00Z"
    )
    expect(report.income[0]!.income).not.toBeNull()
    expect(report.income[0]!.nullReasons).toEqual([])
  })

  it("a date before any rate is missing, not stale (no reason invented)", () => {
    const rates: RateTable = { currency: "EUR", rates: [entry("2026-02-05", "2026-02-05")] }
    const report = runLedger(
      { wallets, country: "US", prices, rates },
      [buy("2026-01-14T15:00:00Z")],
      "2026-02-05T16:00:00Z"
    )
    expect(report.lots[0]!.basis).toBeNull()
    expect(report.lots[0]!.nullReasons).toEqual([])
  })
})

describe("a position whose income of the year is unknown says why, even once the lots that accrued it are gone", () => {
  const prices = { AAPL: [round(1, "100", "2026-01-02T00:00:00Z"), round(2, "200", "2026-03-01T00:00:00Z")] }
  const wallets = [{ address: A, self: true }]
  const history = (stepTime: string): Array<LedgerEvent> => [
    transfer({
      id: "b1",
      token: "AAPL",
      from: EXCHANGE,
      to: A,
      qty: "1",
      time: "2026-01-05T15:00:00Z",
      block: 1,
      classification: exchangeIn
    }),
    multiplier({ id: "d1", token: "AAPL", from: "1", to: "1.01", time: stepTime, block: 2, stepKind: "dividend" }),
    // The lot that accrued the step is sold whole; a new one is bought: the position still shows the step's income.
    transfer({
      id: "s1",
      token: "AAPL",
      from: A,
      to: EXCHANGE,
      qty: "1",
      time: "2026-03-10T15:00:00Z",
      block: 3,
      classification: exchangeOut
    }),
    transfer({
      id: "b2",
      token: "AAPL",
      from: EXCHANGE,
      to: A,
      qty: "1",
      time: "2026-04-01T15:00:00Z",
      block: 4,
      classification: exchangeIn
    })
  ]

  for (const country of ["US", "DE"] as const) {
    it(`${country}: stale_rate when the step's date has only a stale rate`, () => {
      const rates: RateTable = {
        currency: "EUR",
        rates: ["2026-01-05", "2026-03-10", "2026-04-01"].map((date) => ({
          date,
          rate: "0.8",
          source: "ecb-via-frankfurter",
          rateDate: date,
          carriedForward: false
        }))
      }
      const report = runLedger(
        { wallets, country, prices, rates },
        history("2026-03-02T13:30:00Z"),
        "2026-04-01T18:00:00Z"
      )
      const position = report.positions[0]!
      expect(position.unreportedIncomeUsd).toBe("2")
      expect(position.unreportedIncomeConverted).toBeNull()
      expect(position.unreportedIncome).toBeNull()
      expect(position.costBasisConverted).toBe("160")
      expect(position.nullReasons).toEqual([{ reason: "stale_rate", eventId: "d1" }])
    })

    it(`${country}: missing_price when the step had no price`, () => {
      const report = runLedger(
        {
          wallets,
          country,
          prices: {
            AAPL: [
              round(1, "100", "2026-01-02T00:00:00Z"),
              round(2, "0", "2026-02-01T00:00:00Z"),
              round(3, "200", "2026-03-03T00:00:00Z")
            ]
          }
        },
        history("2026-03-02T13:30:00Z"),
        "2026-04-01T18:00:00Z"
      )
      const position = report.positions[0]!
      expect(position.unreportedIncomeUsd).toBeNull()
      expect(position.costBasisUsd).toBe("200")
      expect(position.nullReasons).toEqual([{ reason: "missing_price", eventId: "d1" }])
    })
  }
})
