import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { Ledger, type LedgerEvent, type LedgerSettings, type RateTable } from "../../src/ledger/index.js"
import { address, at, multiplier, round, runLedger, transfer, user, ZERO } from "./fixtures.js"

const A = address(0xa)
const B = address(0xb)
const EXCHANGE = address(0xe)
const exchangeIn = user("transfer.in", "exchange")
const exchangeOut = user("transfer.out", "exchange")

describe("AAPL dividend step (1.0 → 1.000566080061092436, effective 2026-08-14T15:12:46Z)", () => {
  const prices = {
    AAPL: [
      round(1, "200", "2026-03-02T14:59:00Z"),
      round(2, "229.35", "2026-08-14T15:00:00Z"),
      // after effectiveAt: must not be used for the step
      round(3, "231", "2026-08-14T15:20:00Z"),
      round(4, "230", "2026-09-01T14:00:00Z")
    ]
  }
  const events: Array<LedgerEvent> = [
    transfer({
      id: "buy",
      token: "AAPL",
      from: EXCHANGE,
      to: A,
      qty: "10",
      time: "2026-03-02T15:00:00Z",
      block: 10,
      classification: exchangeIn
    }),
    multiplier({
      id: "div",
      token: "AAPL",
      from: "1",
      to: "1.000566080061092436",
      time: "2026-08-14T15:12:46Z",
      block: 20,
      stepKind: "dividend"
    }),
    transfer({
      id: "sell",
      token: "AAPL",
      from: A,
      to: EXCHANGE,
      qty: "4",
      time: "2026-09-01T15:00:00Z",
      block: 30,
      classification: exchangeOut
    })
  ]
  const settings: LedgerSettings = { wallets: [{ address: A, self: true }], country: "US", prices }
  const report = runLedger(settings, events, "2026-09-05T12:00:00Z")

  it("records the income at effectiveAt from the last round at or before it", () => {
    // income = raw balance × (m' − m) × feedPrice / m
    //        = 10 × 0.000566080061092436 × 229.35 / 1 = 1.2983046201155019660 → 1.298304620115501966
    expect(report.income).toHaveLength(1)
    const income = report.income[0]!
    expect(income).toMatchObject({
      id: `div:${A}`,
      eventId: "div",
      type: "income.multiplier_increase",
      token: "AAPL",
      wallet: A,
      block: 20,
      effectiveAt: at("2026-08-14T15:12:46Z"),
      date: "2026-08-14",
      from: "1",
      to: "1.000566080061092436",
      rawBalance: "10",
      addedShares: "0.00566080061092436", // 10 × 0.000566080061092436
      sharePriceUsd: "229.35", // 229.35 / 1.0
      price: { roundId: "2", answer: "229.35", updatedAt: at("2026-08-14T15:00:00Z") },
      incomeUsd: "1.298304620115501966",
      taxable: true,
      needsReview: false,
      walletTransaction: null,
      lotIds: ["buy"]
    })
  })

  it("adds the income to the basis and sells pro rata", () => {
    // basis before the sale = 10 × 200 + 1.298304620115501966 = 2001.298304620115501966
    // sale of 4 of 10: acquisition 2000 × 4/10 = 800; income 1.298304620115501966 × 0.4 = 0.5193218480462007864
    //   → 0.519321848046200786 (half to even); basis 800.519321848046200786
    // proceeds 4 × 230 = 920; gain 920 − 800.519321848046200786 = 119.480678151953799214
    expect(report.disposals).toHaveLength(1)
    expect(report.disposals[0]).toMatchObject({
      eventId: "sell",
      qty: "4",
      shares: "4.002264320244369744", // 4 × 1.000566080061092436
      lotId: "buy",
      acquired: "2026-03-02",
      holdingPeriod: "short",
      proceedsUsd: "920",
      basisUsd: "800.519321848046200786",
      gainUsd: "119.480678151953799214",
      taxable: true,
      needsReview: false
    })
    expect(report.disposals[0]!.basisComponents.map((c) => [c.kind, c.usd])).toEqual([
      ["acquisition", "800"],
      ["income", "0.519321848046200786"]
    ])
  })

  it("reports the position with multiplier now and at acquisition", () => {
    // remaining basis = 1200 + (1.298304620115501966 − 0.519321848046200786) = 1200.77898277206930118
    // shares = 6 × 1.000566080061092436 = 6.003396480366554616; value = 6 × 230 (round 4) = 1380
    const position = report.positions[0]!
    expect(position).toMatchObject({
      token: "AAPL",
      wallet: A,
      balance: "6",
      multiplier: { at: "1.000566080061092436", from: "1" },
      sharesEquivalent: "6.003396480366554616",
      costBasisUsd: "1200.77898277206930118",
      costBasis: "$1,200.78",
      unreportedIncomeUsd: "1.298304620115501966",
      unreportedIncome: "$1.30",
      unreportedIncomeEventIds: [`div:${A}`],
      value: { usd: "1380", price: { roundId: "4" } },
      unrealisedGainUsd: "179.22101722793069882", // 1380 − 1200.77898277206930118
      nullReasons: [],
      issues: []
    })
    expect(report.tokens[0]).toMatchObject({ accruedIncomeAddedToBasisUsd: "0.77898277206930118", lotMatching: "fifo" })
    expect(report.totals.incomeInYear).toMatchObject({ usd: "1.298304620115501966", count: 1, unknownCount: 0 })
    expect(report.totals.realisedGainInYear.usd).toBe("119.480678151953799214")
  })

  it("counts no income for another year", () => {
    const next = runLedger(settings, events, "2027-01-05T00:00:00Z")
    expect(next.positions[0]!.unreportedIncomeUsd).toBe("0")
    expect(next.totals.incomeInYear).toMatchObject({ usd: "0", count: 0 })
  })

  it("converts each basis component at its own date (SGD)", () => {
    const rates: RateTable = {
      currency: "SGD",
      rates: [
        {
          date: "2026-03-02",
          rate: "1.34",
          source: "ecb-via-frankfurter",
          rateDate: "2026-03-02",
          carriedForward: false
        },
        {
          date: "2026-08-14",
          rate: "1.29",
          source: "ecb-via-frankfurter",
          rateDate: "2026-08-14",
          carriedForward: false
        },
        {
          date: "2026-09-01",
          rate: "1.30",
          source: "ecb-via-frankfurter",
          rateDate: "2026-09-01",
          carriedForward: false
        },
        {
          date: "2026-09-04",
          rate: "1.31",
          source: "ecb-via-frankfurter",
          rateDate: "2026-09-04",
          carriedForward: false
        }
      ]
    }
    const sgd = runLedger({ ...settings, rates }, events, "2026-09-05T12:00:00Z")
    // lot: 1200 × 1.34 (2026-03-02) + 0.77898277206930118 × 1.29 (2026-08-14) = 1608 + 1.004887775969398522
    const position = sgd.positions[0]!
    expect(position.costBasisConverted).toBe("1609.004887775969398522")
    expect(position.costBasis).toBe("S$1,609.00")
    // income 1.298304620115501966 × 1.29 = 1.674812959948997536 (rate of 2026-08-14, not today's)
    expect(sgd.income[0]!.income).toEqual({
      currency: "SGD",
      amount: "1.674812959948997536",
      rate: "1.29",
      rateDate: "2026-08-14",
      source: "ecb-via-frankfurter",
      carriedForward: false
    })
    expect(position.unreportedIncome).toBe("S$1.67")
    // disposal: proceeds 920 × 1.30 = 1196; basis 800 × 1.34 + 0.519321848046200786 × 1.29 = 1072.669925183979599014
    // gain in SGD = 1196 − 1072.669925183979599014 = 123.330074816020400986
    expect(sgd.disposals[0]).toMatchObject({
      proceeds: { amount: "1196", rate: "1.30", rateDate: "2026-09-01" },
      basis: "1072.669925183979599014",
      gain: "123.330074816020400986"
    })
    // value on Saturday 2026-09-05 at Friday's rate, carried forward: 1380 × 1.31 = 1807.8
    expect(position.value.converted).toMatchObject({ amount: "1807.8", rateDate: "2026-09-04", carriedForward: true })
  })

  it("SG: income and disposals recorded with taxable false, income still in basis", () => {
    const sg = runLedger({ ...settings, country: "SG" }, events, "2026-09-05T12:00:00Z")
    expect(sg.income[0]).toMatchObject({ incomeUsd: "1.298304620115501966", taxable: false })
    expect(sg.disposals[0]).toMatchObject({ gainUsd: "119.480678151953799214", taxable: false })
    expect(sg.positions[0]!.costBasisUsd).toBe("1200.77898277206930118")
    expect(sg.totals.incomeTaxableInYear).toMatchObject({ usd: "0", count: 0 })
    expect(sg.totals.realisedGainTaxableInYear).toMatchObject({ usd: "0", count: 0 })
    expect(sg.movements.find((m) => m.id === "sell")!.taxable).toBe(false)
  })

  it("a step without a usable price: income and the lots' basis become unknown, never zero", () => {
    // the last round before the step answers 0 (a broken feed): no price, so no income figure
    const broken = { AAPL: [round(1, "200", "2026-03-02T14:59:00Z"), round(2, "0", "2026-08-14T15:00:00Z")] }
    const noPrice = runLedger({ ...settings, prices: broken }, events.slice(0, 2), "2026-09-05T12:00:00Z")
    expect(noPrice.income[0]).toMatchObject({ incomeUsd: null, sharePriceUsd: null, price: null, rawBalance: "10" })
    expect(noPrice.income[0]!.nullReasons).toEqual([{ reason: "missing_price", eventId: "div" }])
    const position = noPrice.positions[0]!
    expect(position.costBasisUsd).toBeNull()
    expect(position.costBasis).toBeNull()
    // The basis for the step's income; the value because the round in force now still answers 0.
    expect(position.value.usd).toBeNull()
    expect(position.nullReasons).toEqual([
      { reason: "missing_price", eventId: "div" },
      { reason: "missing_price", eventId: "valuation:2026-09-05" }
    ])
    expect(noPrice.lots[0]!.components.map((c) => [c.kind, c.usd])).toEqual([["acquisition", "2000"], ["income", null]])
    expect(noPrice.totals.incomeInYear).toMatchObject({ usd: null, knownUsd: "0", unknownCount: 1 })
    expect(noPrice.totals.costBasis).toMatchObject({ usd: null, unknownCount: 1 })
  })
})

describe("CRWD 4:1 split (1.0 → 4.0, effective 2026-07-02T13:30:00Z)", () => {
  const prices = { CRWD: [round(1, "400", "2026-06-01T14:00:00Z"), round(2, "410", "2026-07-10T14:00:00Z")] }
  const events: Array<LedgerEvent> = [
    transfer({
      id: "buy",
      token: "CRWD",
      from: EXCHANGE,
      to: A,
      qty: "2",
      time: "2026-06-01T15:00:00Z",
      block: 10,
      classification: exchangeIn
    }),
    multiplier({
      id: "split",
      token: "CRWD",
      from: "1",
      to: "4",
      time: "2026-07-02T13:30:00Z",
      block: 20,
      stepKind: "split"
    }),
    transfer({
      id: "sell",
      token: "CRWD",
      from: A,
      to: EXCHANGE,
      qty: "1",
      time: "2026-07-10T15:00:00Z",
      block: 30,
      classification: exchangeOut
    })
  ]
  const report = runLedger(
    { wallets: [{ address: A, self: true }], country: "US", prices },
    events,
    "2026-07-11T00:00:00Z"
  )

  it("changes shares, not basis, and is no income", () => {
    // basis 2 × 400 = 800; the feed quotes a token (4 shares after the split, each a quarter of the price)
    expect(report.income).toEqual([])
    expect(report.splits).toHaveLength(1)
    expect(report.splits[0]).toMatchObject({ rawBalance: "2", sharesBefore: "2", sharesAfter: "8", taxable: false })
    // sale of 1 token = 4 shares: proceeds 1 × 410 = 410; basis 800 × 1/2 = 400; gain 10
    expect(report.disposals[0]).toMatchObject({
      qty: "1",
      shares: "4",
      proceedsUsd: "410",
      basisUsd: "400",
      gainUsd: "10"
    })
    expect(report.positions[0]).toMatchObject({
      balance: "1",
      sharesEquivalent: "4",
      multiplier: { at: "4", from: "1" },
      costBasisUsd: "400"
    })
    expect(report.lots[0]).toMatchObject({ qty: "1", shares: "4", multiplierAtAcquisition: "1", basisUsd: "400" })
  })
})

describe("holding period across the one-year line", () => {
  const prices = { TSLA: [round(1, "100", "2024-01-01T00:00:00Z")] }
  const wallets = [{ address: A, self: true }]
  const buy = (id: string, qty: string, time: string, block: number) =>
    transfer({ id, token: "TSLA", from: EXCHANGE, to: A, qty, time, block, classification: exchangeIn })
  const sell = (id: string, qty: string, time: string, block: number) =>
    transfer({ id, token: "TSLA", from: A, to: EXCHANGE, qty, time, block, classification: exchangeOut })
  const periods = (events: Array<LedgerEvent>) =>
    runLedger({ wallets, country: "US", prices }, events, "2026-12-31T00:00:00Z").disposals.map((
      d
    ) => [d.eventId, d.acquired, d.date, d.holdingPeriod])

  it("bought 2025-01-01: sold 2026-01-01 short, 2026-01-02 long", () => {
    expect(periods([
      buy("b1", "1", "2025-01-01T10:00:00Z", 1),
      buy("b2", "1", "2025-01-01T11:00:00Z", 2),
      sell("s1", "1", "2026-01-01T23:59:59Z", 3),
      sell("s2", "1", "2026-01-02T00:00:00Z", 4)
    ])).toEqual([["s1", "2025-01-01", "2026-01-01", "short"], ["s2", "2025-01-01", "2026-01-02", "long"]])
  })

  it("bought 2024-02-29: sold 2025-02-28 short, 2025-03-01 long", () => {
    // Counting starts 2024-03-01; acquired on the last day of February, the year of holding ends on the last day of
    // February 2025 (Rev. Rul. 66-7), so 2025-02-28 is exactly one year (short) and 2025-03-01 is more (long).
    expect(periods([
      buy("b1", "2", "2024-02-29T15:00:00Z", 1),
      sell("s1", "1", "2025-02-28T15:00:00Z", 2),
      sell("s2", "1", "2025-03-01T15:00:00Z", 3)
    ])).toEqual([["s1", "2024-02-29", "2025-02-28", "short"], ["s2", "2024-02-29", "2025-03-01", "long"]])
  })

  it("one disposal over two lots gives one row per lot slice, each with its own period", () => {
    const rows = runLedger({ wallets, country: "US", prices }, [
      buy("old", "1", "2024-06-01T15:00:00Z", 1),
      buy("new", "1", "2025-06-01T15:00:00Z", 2),
      sell("s", "1.5", "2025-12-01T15:00:00Z", 3)
    ], "2025-12-31T00:00:00Z").disposals
    // proceeds per slice at 100: 1 × 100 and 0.5 × 100; basis 100 and 50
    expect(rows.map((d) => [d.id, d.lotId, d.qty, d.holdingPeriod, d.proceedsUsd, d.basisUsd, d.gainUsd])).toEqual([
      ["s:0", "old", "1", "long", "100", "100", "0"],
      ["s:1", "new", "0.5", "short", "50", "50", "0"]
    ])
  })
})

describe("a self-transfer read as a disposal until the second address is added as own", () => {
  const prices = { TSLA: [round(1, "100", "2026-01-05T00:00:00Z"), round(2, "120", "2026-02-01T00:00:00Z")] }
  const events: Array<LedgerEvent> = [
    transfer({
      id: "buy",
      token: "TSLA",
      from: EXCHANGE,
      to: A,
      qty: "5",
      time: "2026-01-05T15:00:00Z",
      block: 1,
      classification: exchangeIn
    }),
    transfer({ id: "move", token: "TSLA", from: A, to: B, qty: "2", time: "2026-02-01T15:00:00Z", block: 2 })
  ]

  it("first reads as a disposal needing review", () => {
    const before = runLedger(
      { wallets: [{ address: A, self: true }], country: "US", prices },
      events,
      "2026-03-01T00:00:00Z"
    )
    // proceeds 2 × 120 = 240; basis 2 × 100 = 200; gain 40
    expect(before.disposals.map((d) => [d.proceedsUsd, d.basisUsd, d.gainUsd, d.needsReview, d.taxable])).toEqual([
      ["240", "200", "40", true, true]
    ])
    expect(before.movements[1]).toMatchObject({
      type: "transfer.out",
      relationship: null,
      classifiedBy: "rule",
      needsReview: true
    })
    expect(before.positions.map((p) => [p.wallet, p.balance, p.costBasisUsd])).toEqual([[A, "3", "300"]])
  })

  it("becomes a movement once B is own: lots keep their date and basis", () => {
    const after = runLedger(
      { wallets: [{ address: A, self: true }, { address: B, self: true }], country: "US", prices },
      events,
      "2026-03-01T00:00:00Z"
    )
    expect(after.disposals).toEqual([])
    expect(after.movements[1]).toMatchObject({
      type: "transfer.self",
      relationship: "self",
      treatment: "self_transfer",
      taxable: false,
      needsReview: false
    })
    expect(after.positions.map((p) => [p.wallet, p.balance, p.costBasisUsd])).toEqual([[A, "3", "300"], [
      B,
      "2",
      "200"
    ]])
    expect(after.lots.map((l) => [l.id, l.wallet, l.acquired, l.qty, l.basisUsd])).toEqual([
      ["buy", A, "2026-01-05", "3", "300"],
      ["buy@move", B, "2026-01-05", "2", "200"]
    ])
    expect(after.totals.realisedGainInYear).toMatchObject({ usd: "0", count: 0 })
  })

  it("the same log seen from both wallets is processed once", () => {
    const twice = [...events, { ...events[1]!, id: "move-seen-from-B" }]
    const after = runLedger(
      { wallets: [{ address: A, self: true }, { address: B, self: true }], country: "US", prices },
      twice,
      "2026-03-01T00:00:00Z"
    )
    expect(after.duplicates).toEqual([{ eventId: "move-seen-from-B", sameAs: "move" }])
    expect(after.positions.map((p) => p.balance)).toEqual(["3", "2"])
  })
})

describe("model labels", () => {
  const prices = { TSLA: [round(1, "100", "2026-01-05T00:00:00Z"), round(2, "120", "2026-02-01T00:00:00Z")] }
  const settings: LedgerSettings = { wallets: [{ address: A, self: true }], country: "US", prices }
  const buy = transfer({
    id: "buy",
    token: "TSLA",
    from: EXCHANGE,
    to: A,
    qty: "5",
    time: "2026-01-05T15:00:00Z",
    block: 1,
    classification: exchangeIn
  })
  const sale = (confirmed: boolean) =>
    transfer({
      id: "out",
      token: "TSLA",
      from: A,
      to: B,
      qty: "2",
      time: "2026-02-01T15:00:00Z",
      block: 2,
      classification: { type: "transfer.out", relationship: "counterparty", classifiedBy: "ai_labeled", confirmed }
    })

  it("an unconfirmed model label is never a tax figure", () => {
    const report = runLedger(settings, [buy, sale(false)], "2026-03-01T00:00:00Z")
    expect(report.disposals[0]).toMatchObject({
      proceedsUsd: null,
      gainUsd: null,
      basisUsd: "200",
      needsReview: true,
      classifiedBy: "ai_labeled"
    })
    expect(report.disposals[0]!.nullReasons).toEqual([{ reason: "unconfirmed_label", eventId: "out" }])
    expect(report.positions[0]!.issues.map((i) => [i.kind, i.eventId])).toEqual([["unconfirmed_label", "out"]])
    expect(report.movements[1]).toMatchObject({ needsReview: true, classifiedBy: "ai_labeled", confirmed: false })
    expect(report.totals.realisedGainInYear).toMatchObject({ usd: null, unknownCount: 1, count: 1 })
    expect(report.summary.needsReview).toBe(1)
  })

  it("once confirmed it is", () => {
    const report = runLedger(settings, [buy, sale(true)], "2026-03-01T00:00:00Z")
    expect(report.disposals[0]).toMatchObject({
      proceedsUsd: "240",
      basisUsd: "200",
      gainUsd: "40",
      needsReview: false
    })
  })

  it("an unconfirmed model label on an arrival gives an unknown basis", () => {
    const arrival = transfer({
      id: "in",
      token: "TSLA",
      from: B,
      to: A,
      qty: "1",
      time: "2026-02-01T15:00:00Z",
      block: 2,
      classification: { type: "swap", relationship: "contract", classifiedBy: "ai_labeled", confirmed: false }
    })
    const report = runLedger(settings, [buy, arrival], "2026-03-01T00:00:00Z")
    expect(report.lots[1]).toMatchObject({
      id: "in",
      basisUsd: null,
      nullReasons: [{ reason: "unconfirmed_label", eventId: "in" }]
    })
    expect(report.positions[0]).toMatchObject({ balance: "6", costBasisUsd: null, costBasis: null })
  })

  it("a confirmed counterparty label applies to every movement with that address", () => {
    const labelled = runLedger(
      { ...settings, labels: { [B]: { relationship: "exchange", classifiedBy: "user", confirmed: true } } },
      [buy, transfer({ id: "out", token: "TSLA", from: A, to: B, qty: "2", time: "2026-02-01T15:00:00Z", block: 2 })],
      "2026-03-01T00:00:00Z"
    )
    expect(labelled.movements[1]).toMatchObject({
      type: "transfer.out",
      relationship: "exchange",
      classifiedBy: "user",
      needsReview: false
    })
    expect(labelled.disposals[0]!.needsReview).toBe(false)
  })
})

describe("lot scope: DE matches across the account, US per wallet", () => {
  const prices = {
    TSLA: [
      round(1, "100", "2026-01-10T00:00:00Z"),
      round(2, "150", "2026-02-10T00:00:00Z"),
      round(3, "160", "2026-03-10T00:00:00Z")
    ]
  }
  const events: Array<LedgerEvent> = [
    transfer({
      id: "buyA",
      token: "TSLA",
      from: EXCHANGE,
      to: A,
      qty: "1",
      time: "2026-01-10T15:00:00Z",
      block: 1,
      classification: exchangeIn
    }),
    transfer({
      id: "buyB",
      token: "TSLA",
      from: EXCHANGE,
      to: B,
      qty: "1",
      time: "2026-02-10T15:00:00Z",
      block: 2,
      classification: exchangeIn
    }),
    transfer({
      id: "sellB",
      token: "TSLA",
      from: B,
      to: EXCHANGE,
      qty: "1",
      time: "2026-03-10T15:00:00Z",
      block: 3,
      classification: exchangeOut
    })
  ]
  const wallets = [{ address: A, self: true }, { address: B, self: true }]

  it("US: B's sale matches B's own lot (160 − 150 = 10)", () => {
    const us = runLedger({ wallets, country: "US", prices }, events, "2026-04-01T00:00:00Z")
    expect(us.lotScope).toBe("wallet")
    expect(us.disposals.map((d) => [d.lotId, d.basisUsd, d.gainUsd, d.taxable])).toEqual([["buyB", "150", "10", true]])
    expect(us.positions.map((p) => [p.wallet, p.balance, p.costBasisUsd])).toEqual([[A, "1", "100"]])
  })

  it("DE: B's sale matches the account's oldest lot, A's (160 − 100 = 60)", () => {
    const de = runLedger({ wallets, country: "DE", prices }, events, "2026-04-01T00:00:00Z")
    expect(de.lotScope).toBe("account")
    expect(de.disposals.map((d) => [d.lotId, d.basisUsd, d.gainUsd, d.taxable])).toEqual([["buyA", "100", "60", true]])
    expect(de.positions).toHaveLength(1)
    expect(de.positions[0]).toMatchObject({
      scope: "account",
      wallet: null,
      balance: "1",
      costBasisUsd: "150",
      lotIds: ["buyB"]
    })
    expect(de.positions[0]!.holdings.map((h) => [h.wallet, h.balance])).toEqual([[A, "1"]])
  })
})

describe("collateral, bridges and incomplete history", () => {
  const LENDER = address(0x1e4d)
  const BRIDGE = address(0xb41d)
  const prices = { TSLA: [round(1, "100", "2026-01-01T00:00:00Z")] }
  const wallets = [{ address: A, self: true }, { address: B, self: true }]
  const move = (
    id: string,
    from: string,
    to: string,
    qty: string,
    block: number,
    type: "collateral_post" | "collateral_withdraw" | "bridge.out" | "bridge.in"
  ) =>
    transfer({
      id,
      token: "TSLA",
      from,
      to,
      qty,
      time: `2026-02-${String(block).padStart(2, "0")}T15:00:00Z`,
      block,
      classification: user(type, "contract")
    })

  /** Ten TSLA bought from the exchange into A. */
  const buyTen = transfer({
    id: "buy",
    token: "TSLA",
    from: EXCHANGE,
    to: A,
    qty: "10",
    time: "2026-01-05T15:00:00Z",
    block: 1,
    classification: exchangeIn
  })

  it("collateral stays owned and encumbered; bridges move lots through transit", () => {
    const events: Array<LedgerEvent> = [
      buyTen,
      move("post", A, LENDER, "4", 2, "collateral_post"),
      move("out", A, BRIDGE, "3", 3, "bridge.out")
    ]
    const mid = runLedger({ wallets, country: "US", prices }, events, "2026-03-01T00:00:00Z")
    expect(mid.disposals).toEqual([])
    expect(mid.positions[0]).toMatchObject({ balance: "7", encumbered: "4", costBasisUsd: "700" })
    expect(mid.tokens[0]).toMatchObject({ openQty: "7", inTransitQty: "3" })
    expect(mid.lots.map((l) => [l.id, l.location, l.qty])).toEqual([["buy", "wallet", "7"], [
      "buy@out",
      "in_transit",
      "3"
    ]])

    const done = runLedger({ wallets, country: "US", prices }, [
      ...events,
      move("back", LENDER, A, "4", 4, "collateral_withdraw"),
      move("in1", BRIDGE, B, "2", 5, "bridge.in"),
      move("in2", BRIDGE, B, "2", 6, "bridge.in")
    ], "2026-03-01T00:00:00Z")
    expect(done.positions.map((p) => [p.wallet, p.balance, p.encumbered, p.costBasisUsd])).toEqual([
      [A, "7", "0", "700"],
      [B, "4", "0", null]
    ])
    // 3 tokens were in transit: in1 takes 2 of them (a piece), in2 the last one (the whole remaining lot, same id)
    // and 1 more arrives with nothing to match it
    expect(done.lots.filter((l) => l.wallet === B).map((l) => [l.id, l.acquired, l.qty, l.basisUsd])).toEqual([
      ["buy@out", "2026-01-05", "1", "100"],
      ["buy@out@in1", "2026-01-05", "2", "200"],
      ["in2#unmatched", "2026-02-06", "1", null]
    ])
    expect(done.positions[1]!.nullReasons).toEqual([{ reason: "bridge_unmatched", eventId: "in2" }])
  })

  it("a bridge as the contract list classifies it (relationship self) moves lots into transit, not to its address", () => {
    const byRule = (type: "bridge.out" | "bridge.in") =>
      ({ type, relationship: "self", classifiedBy: "rule", confirmed: true }) as const
    const report = runLedger({ wallets, country: "US", prices }, [
      buyTen,
      transfer({
        id: "out",
        token: "TSLA",
        from: A,
        to: BRIDGE,
        qty: "4",
        time: "2026-02-03T15:00:00Z",
        block: 3,
        classification: byRule("bridge.out")
      })
    ], "2026-03-01T00:00:00Z")
    expect(report.movements.find((m) => m.id === "out")).toMatchObject({ treatment: "bridge_out" })
    expect(report.disposals).toEqual([])
    expect(report.positions.map((p) => [p.wallet, p.balance])).toEqual([[A, "6"]])
    expect(report.tokens[0]).toMatchObject({ openQty: "6", inTransitQty: "4" })
    expect(report.lots.map((l) => [l.id, l.location, l.wallet, l.qty])).toEqual([
      ["buy", "wallet", A, "6"],
      ["buy@out", "in_transit", null, "4"]
    ])
  })

  it("more out than recorded: an incomplete-history issue, nothing negative, no invented basis", () => {
    const report = runLedger({ wallets, country: "US", prices }, [
      transfer({
        id: "buy",
        token: "TSLA",
        from: EXCHANGE,
        to: A,
        qty: "1",
        time: "2026-01-05T15:00:00Z",
        block: 1,
        classification: exchangeIn
      }),
      transfer({
        id: "sell",
        token: "TSLA",
        from: A,
        to: EXCHANGE,
        qty: "3",
        time: "2026-01-06T15:00:00Z",
        block: 2,
        classification: exchangeOut
      })
    ], "2026-03-01T00:00:00Z")
    expect(report.disposals.map((d) => [d.lotId, d.qty, d.proceedsUsd, d.basisUsd, d.gainUsd, d.holdingPeriod]))
      .toEqual([
        ["buy", "1", "100", "100", "0", "short"],
        [null, "2", "200", null, null, null]
      ])
    expect(report.disposals[1]!.nullReasons).toEqual([{ reason: "incomplete_history", eventId: "sell" }])
    expect(report.positions[0]).toMatchObject({ balance: "0", costBasisUsd: "0" })
    expect(report.positions[0]!.issues.map((i) => i.kind)).toEqual(["incomplete_history"])
    expect(report.totals.realisedGainInYear).toMatchObject({ usd: null, knownUsd: "0", unknownCount: 1 })
  })
})

describe("rule defaults", () => {
  it("mint, burn, incoming and outgoing transfers without classification", () => {
    const prices = { TSLA: [round(1, "100", "2026-01-01T00:00:00Z")] }
    const report = runLedger({ wallets: [{ address: A, self: true }], country: "US", prices }, [
      transfer({ id: "mint", token: "TSLA", from: ZERO, to: A, qty: "3", time: "2026-01-02T15:00:00Z", block: 1 }),
      transfer({ id: "in", token: "TSLA", from: EXCHANGE, to: A, qty: "1", time: "2026-01-03T15:00:00Z", block: 2 }),
      transfer({ id: "out", token: "TSLA", from: A, to: EXCHANGE, qty: "1", time: "2026-01-04T15:00:00Z", block: 3 }),
      transfer({ id: "burn", token: "TSLA", from: A, to: ZERO, qty: "1", time: "2026-01-05T15:00:00Z", block: 4 }),
      transfer({
        id: "elsewhere",
        token: "TSLA",
        from: EXCHANGE,
        to: B,
        qty: "1",
        time: "2026-01-06T15:00:00Z",
        block: 5
      })
    ], "2026-02-01T00:00:00Z")
    expect(report.movements.map((m) => [m.id, m.type, m.relationship, m.classifiedBy, m.needsReview, m.treatment]))
      .toEqual([
        ["mint", "mint", null, "rule", false, "acquisition"],
        ["in", "transfer.in", null, "rule", true, "acquisition"],
        ["out", "transfer.out", null, "rule", true, "disposal"],
        ["burn", "burn", null, "rule", false, "disposal"]
      ])
    expect(report.ignored.map((i) => [i.kind, i.eventId])).toEqual([["no_own_address", "elsewhere"]])
    expect(report.positions[0]!.balance).toBe("2")
  })

  it("a counterparty labelled self holds lots for the account and gives them back with their dates", () => {
    const COLD = address(0xc01d)
    const prices = { TSLA: [round(1, "100", "2026-01-01T00:00:00Z"), round(2, "300", "2026-06-01T00:00:00Z")] }
    const report = runLedger({
      wallets: [{ address: A, self: true }],
      country: "US",
      prices,
      labels: { [COLD]: { relationship: "self", classifiedBy: "user", confirmed: true } }
    }, [
      transfer({
        id: "buy",
        token: "TSLA",
        from: EXCHANGE,
        to: A,
        qty: "2",
        time: "2026-01-02T15:00:00Z",
        block: 1,
        classification: exchangeIn
      }),
      transfer({ id: "toCold", token: "TSLA", from: A, to: COLD, qty: "2", time: "2026-01-03T15:00:00Z", block: 2 }),
      transfer({ id: "back", token: "TSLA", from: COLD, to: A, qty: "1", time: "2026-06-02T15:00:00Z", block: 3 })
    ], "2026-07-01T00:00:00Z")
    expect(report.disposals).toEqual([])
    expect(report.positions.map((p) => [p.wallet, p.holdings[0]!.watched, p.balance, p.costBasisUsd])).toEqual([
      [A, true, "1", "100"],
      [COLD, false, "1", "100"]
    ])
    expect(report.lots.find((l) => l.wallet === A)).toMatchObject({ acquired: "2026-01-02", basisUsd: "100" })
  })
})

describe("input errors", () => {
  const settings: LedgerSettings = { wallets: [{ address: A, self: true }], country: "US" }
  it("rejects events out of (block, logIndex) order with a typed error", () => {
    const result = Ledger.build({
      ...settings,
      events: [
        transfer({
          id: "late",
          token: "TSLA",
          from: EXCHANGE,
          to: A,
          qty: "1",
          time: "2026-01-02T00:00:00Z",
          block: 5,
          logIndex: 2
        }),
        transfer({
          id: "early",
          token: "TSLA",
          from: EXCHANGE,
          to: A,
          qty: "1",
          time: "2026-01-02T00:00:00Z",
          block: 5,
          logIndex: 1
        })
      ]
    })
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.getLeft(result).pipe((o) => o._tag === "Some" ? o.value : null)!
    expect(error._tag).toBe("LedgerEventsOutOfOrder")
    expect(error).toMatchObject({ eventId: "early", previousEventId: "late", block: 5, logIndex: 1 })
  })

  it("rejects two different logs at one position, and a multiplier change placed on a transfer's position", () => {
    const one = transfer({
      id: "one",
      token: "TSLA",
      from: EXCHANGE,
      to: A,
      qty: "1",
      time: "2026-01-02T00:00:00Z",
      block: 5,
      tx: 1
    })
    const other = transfer({
      id: "other",
      token: "TSLA",
      from: EXCHANGE,
      to: A,
      qty: "2",
      time: "2026-01-02T00:00:00Z",
      block: 5,
      tx: 2
    })
    const result = Ledger.build({ ...settings, events: [one, other] })
    expect(Either.isLeft(result) && result.left._tag).toBe("LedgerInvalidEvent")
    const step = {
      ...multiplier({
        id: "m",
        token: "TSLA",
        from: "1",
        to: "2",
        time: "2026-01-02T00:00:00Z",
        block: 5,
        stepKind: "split"
      }),
      logIndex: 0
    }
    const clash = Ledger.build({ ...settings, events: [one, step] })
    expect(Either.isLeft(clash) && clash.left._tag).toBe("LedgerInvalidEvent")
  })

  it("rejects a country with no rule (settings not decoded by LedgerSettings) as invalid settings, not a throw", () => {
    for (const country of ["FR", "constructor", ""]) {
      const result = Ledger.empty({ ...settings, country: country as "US" })
      expect(Either.isLeft(result) && result.left._tag, country).toBe("LedgerInvalidSettings")
    }
  })

  it("rejects unsorted price rounds", () => {
    const result = Ledger.empty({
      ...settings,
      prices: { TSLA: [round(2, "1", "2026-01-02T00:00:00Z"), round(1, "1", "2026-01-01T00:00:00Z")] }
    })
    expect(Either.isLeft(result) && result.left._tag).toBe("LedgerInvalidSettings")
  })

  it("a failed apply leaves the state as it was", () => {
    const state = Either.getOrThrow(Ledger.build({
      ...settings,
      events: [
        transfer({ id: "a", token: "TSLA", from: EXCHANGE, to: A, qty: "1", time: "2026-01-02T00:00:00Z", block: 5 })
      ]
    }))
    const before = JSON.stringify(Ledger.report(state, at("2026-02-01T00:00:00Z")))
    const failed = Ledger.apply(state, [
      transfer({ id: "b", token: "TSLA", from: EXCHANGE, to: A, qty: "1", time: "2026-01-02T00:00:00Z", block: 6 }),
      transfer({ id: "c", token: "TSLA", from: EXCHANGE, to: A, qty: "1", time: "2026-01-02T00:00:00Z", block: 4 })
    ])
    expect(Either.isLeft(failed)).toBe(true)
    expect(JSON.stringify(Ledger.report(state, at("2026-02-01T00:00:00Z")))).toBe(before)
  })
})
