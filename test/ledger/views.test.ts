import { withClassification } from "@scaledger/db/reads/EventClassificationView"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { Classification, LedgerEvent } from "@scaledger/domain/ledger/LedgerInput"
import type { Disposal } from "@scaledger/domain/ledger/LedgerReport"
import {
  disposalView,
  eventView,
  holdingPositionView,
  lotView,
  positionsValuationRate,
  positionView,
  realisedGains,
  totalView
} from "@scaledger/server/http/LedgerViews"
import { Either } from "effect"
import { describe, expect, it } from "vitest"

const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const A = hex40(0xa)
const B = hex40(0xb)
const EXCHANGE = hex40(0xe)
const at = (iso: string) => Date.parse(iso) / 1000
const feed = hex40(0xfeed)
const prices = {
  AAPL: [
    { roundId: "1", answer: "10000000000", updatedAt: at("2024-01-02T00:00:00Z"), feed },
    { roundId: "2", answer: "11000000000", updatedAt: at("2026-03-01T00:00:00Z"), feed }
  ]
}
const move = (id: string, from: string, to: string, tokens: number, iso: string, block: number): LedgerEvent => ({
  kind: "transfer",
  id,
  token: "AAPL",
  tokenAddress: hex40(0xaa),
  from,
  to,
  raw: (BigInt(tokens) * 10n ** 18n).toString(),
  block,
  logIndex: 0,
  txHash: `0x${block.toString(16).padStart(64, "0")}`,
  timestamp: at(iso),
  classification: {
    type: from === EXCHANGE ? "transfer.in" : "transfer.out",
    relationship: "exchange",
    classifiedBy: "user",
    confirmed: true
  }
})
const report = (country: "US" | "DE", events: ReadonlyArray<LedgerEvent>, asOf: string) =>
  Either.getOrThrow(Ledger.run({
    wallets: [{ address: A, self: true }, { address: B, self: true }],
    country,
    prices,
    events,
    asOf: at(asOf)
  }))

describe("GET /v1/positions?wallet= views", () => {
  const events = [
    move("a1", EXCHANGE, A, 3, "2026-01-05T15:00:00Z", 1),
    move("b1", EXCHANGE, B, 1, "2026-01-06T15:00:00Z", 2)
  ]

  it("under account scope (DE) shows the wallet's own holding, not the pooled position", () => {
    const pooled = report("DE", events, "2026-03-02T00:00:00Z").positions[0]!
    expect(positionView(pooled, "2026-03-02")).toMatchObject({ wallet: null, balance: "4", valueUsd: "440" })
    const own = holdingPositionView(pooled, B.toUpperCase().replace("0X", "0x"), "2026-03-02")
    expect(own).toMatchObject({
      wallet: B,
      holdings: [{ wallet: B, balance: "1" }],
      balance: "1",
      sharesEquivalent: "1",
      costBasisAmount: "100",
      costBasis: "$100.00",
      valueUsd: "110",
      valueAmount: "110",
      value: "$110.00",
      unrealisedGain: "10",
      unreportedIncomeAmount: "0",
      rate: { currency: "USD", rate: "1", source: "identity", rateDate: "2026-03-02", carriedForward: false }
    })
  })

  it("falls back to the pooled view for a position stored without per-address figures", () => {
    const pooled = report("DE", events, "2026-03-02T00:00:00Z").positions[0]!
    const old = { ...pooled, holdings: pooled.holdings.map(({ figures: _f, ...h }) => h) }
    expect(holdingPositionView(old, A, "2026-03-02")).toEqual(positionView(old, "2026-03-02"))
  })
})

describe("realised gains by holding period", () => {
  it("short- and long-term sums are unknown when a disposal's holding period is unknown", () => {
    const known = report("US", [
      move("a1", EXCHANGE, A, 2, "2024-01-05T15:00:00Z", 1),
      move("s1", A, EXCHANGE, 1, "2024-06-05T15:00:00Z", 2),
      move("s2", A, EXCHANGE, 1, "2026-03-05T15:00:00Z", 3)
    ], "2026-03-06T00:00:00Z").disposals
    expect(realisedGains(known)).toMatchObject({ total: "10", shortTerm: "0", longTerm: "10" })

    // B sends 1 to A with nothing recorded at B: A's lot for it has no known date; its sale's period is unknown.
    const unknown = report("US", [
      move("a1", EXCHANGE, A, 1, "2024-01-05T15:00:00Z", 1),
      { ...move("m", B, A, 1, "2024-01-06T15:00:00Z", 2), classification: undefined } as unknown as LedgerEvent,
      move("s", A, EXCHANGE, 2, "2026-03-05T15:00:00Z", 3)
    ], "2026-03-06T00:00:00Z").disposals
    expect(unknown.map((d) => d.holdingPeriod)).toEqual(["long", null])
    expect(realisedGains(unknown)).toMatchObject({ total: null, shortTerm: null, longTerm: null, unknownCount: 1 })
  })

  it("each sum is unknown only when a part of it is: a short-term gain unknown leaves the long-term sum known", () => {
    const disposal = (holdingPeriod: "short" | "long", gain: string | null, gainUsd: string | null) =>
      ({ holdingPeriod, gain, gainUsd }) as Disposal
    expect(realisedGains([
      disposal("long", "1.5", "1.25"),
      disposal("short", null, "2"),
      disposal("long", "-0.25", null),
      disposal("long", "0.000000000000000001", "0")
    ])).toEqual({
      total: null,
      shortTerm: null,
      longTerm: "1.250000000000000001",
      totalUsd: null,
      unknownCount: 1
    })
    expect(realisedGains([])).toEqual({ total: "0", shortTerm: "0", longTerm: "0", totalUsd: "0", unknownCount: 0 })
  })
})

describe("a total in the reporting currency", () => {
  it("counts as unknown every item knownAmount leaves out: unknown in USD, or known in USD with no rate", () => {
    const total = {
      usd: null,
      knownUsd: "30",
      converted: null,
      knownConverted: "10",
      count: 5,
      unknownCount: 1,
      unconvertedCount: 2
    }
    expect(totalView(total, "EUR")).toEqual({
      amount: null,
      formatted: null,
      usd: null,
      knownAmount: "10",
      unknownCount: 3
    })
    // Every item known in USD, none convertible: nothing is known in the reporting currency.
    const stale = { ...total, usd: "30", knownConverted: "0", unknownCount: 0, unconvertedCount: 5 }
    expect(totalView(stale, "EUR")).toMatchObject({ amount: null, usd: "30", knownAmount: "0", unknownCount: 5 })
  })
})

describe("an income event's rate in a USD account", () => {
  const step = (id: string, iso: string, block: number): LedgerEvent => ({
    id,
    kind: "multiplier",
    token: "AAPL",
    tokenAddress: hex40(0xaa),
    from: "1000000000000000000",
    to: "1001000000000000000",
    effectiveAt: at(iso),
    block,
    logIndex: -1,
    stepKind: "dividend"
  })
  const incomeOf = (withPrices: boolean) => {
    const run = Either.getOrThrow(Ledger.run({
      wallets: [{ address: A, self: true }],
      country: "US",
      prices: withPrices ? prices : {},
      events: [move("a1", EXCHANGE, A, 3, "2026-01-05T15:00:00Z", 1), step("m1", "2026-03-02T14:00:00Z", 2)],
      asOf: at("2026-04-01T00:00:00Z")
    }))
    const [income] = run.income
    return eventView(income!) as any
  }

  it("is the identity of the event's own date, whether or not the amount is known", () => {
    const priced = incomeOf(true).income
    expect(priced).toMatchObject({ rate: "1", rateDate: "2026-03-02", source: "identity", carriedForward: false })
    expect(priced.usd).not.toBeNull()
    expect(incomeOf(true).unknownBecause).toEqual([])
    // The change's id, which evidence and reasons cite; the event's own id adds the address.
    expect(incomeOf(true)).toMatchObject({ eventId: "m1", id: expect.stringContaining("m1") })
    expect(incomeOf(false).unknownBecause).toEqual([{ reason: "missing_price", eventId: "m1" }])
    const unpriced = incomeOf(false).income
    expect(unpriced).toEqual({
      usd: null,
      rate: "1",
      rateDate: "2026-03-02",
      source: "identity",
      carriedForward: false
    })
  })
})

describe("an event's classification", () => {
  it("is the both-own rule's once both ends are own, whatever was stored before", () => {
    // Labelled by the user while B was a plain address; B has since become an own wallet.
    const run = report("US", [
      move("a1", EXCHANGE, A, 3, "2026-01-05T15:00:00Z", 1),
      move("ab", A, B, 1, "2026-01-06T15:00:00Z", 2)
    ], "2026-02-01T00:00:00Z")
    const row = run.movements.find((m) => m.id === "ab")!
    const stored = {
      rule: "plain_address",
      model: null,
      confidence: null,
      rationale: "Sent to a plain address of unknown relationship: a disposal at market value until reviewed.",
      classifiedBy: "user"
    }
    const view = withClassification(eventView(row), row, stored) as any
    expect(view).toMatchObject({ type: "transfer.self", relationship: "self", taxable: false })
    expect(view.classification).toEqual({
      by: "rule",
      rule: "both_own",
      model: null,
      confidence: null,
      rationale: "Both ends are own addresses of the account."
    })
    // An arrival from the exchange keeps what was stored of it.
    const arrival = run.movements.find((m) => m.id === "a1")!
    expect(
      (withClassification(eventView(arrival), arrival, { ...stored, rule: null, rationale: null }) as any)
        .classification
    ).toMatchObject({ by: "user", rule: null })
  })
})

describe("an arrival's basisSource", () => {
  const arrival = (classification: Classification | undefined) => {
    const event = { ...move("in", hex40(0xc0), A, 2, "2026-01-05T15:00:00Z", 1), classification }
    const row = Either.getOrThrow(Ledger.run({
      wallets: [{ address: A, self: true }],
      country: "US",
      prices,
      events: [event],
      asOf: at("2026-02-01T00:00:00Z")
    })).movements[0]!
    return { row, view: withClassification(eventView(row), row, undefined) as any }
  }

  it("says market value at arrival where the lot's basis is the market value", () => {
    const { row, view } = arrival(undefined)
    expect(row.nullReasons).toEqual([])
    expect(view.basisSource).toBe("market_value_at_arrival")
  })

  it("is absent while an unconfirmed model label keeps the lot's basis unknown (unconfirmed_label)", () => {
    const { row, view } = arrival({
      type: "transfer.in",
      relationship: "counterparty",
      classifiedBy: "ai_labeled",
      confirmed: false
    })
    expect(row.nullReasons).toEqual([{ reason: "unconfirmed_label", eventId: "in" }])
    expect(view.basisSource).toBeUndefined()
  })
})

describe("the rate behind each converted figure (source, rate date, carried forward)", () => {
  const source = "ecb-via-eurofxref"
  const entry = (date: string, rate: string) => ({ date, rate, source, rateDate: date, carriedForward: false })
  // Published on business days only: Saturday 2026-01-10 borrows Friday's rate.
  const sgd = {
    currency: "SGD" as const,
    rates: [entry("2026-01-05", "1.35"), entry("2026-01-09", "1.36"), entry("2026-03-02", "1.3")]
  }
  const run = (rates?: typeof sgd) =>
    Either.getOrThrow(Ledger.run({
      wallets: [{ address: A, self: true }],
      country: "US",
      prices,
      ...(rates === undefined ? {} : { rates }),
      events: [
        move("a1", EXCHANGE, A, 3, "2026-01-05T15:00:00Z", 1),
        move("s1", A, EXCHANGE, 1, "2026-01-10T15:00:00Z", 2)
      ],
      asOf: at("2026-03-02T12:00:00Z")
    }))

  it("a non-USD position shows the rate its value is converted at, with source and rate date", () => {
    const position = positionView(run(sgd).positions[0]!, "2026-03-02")
    expect(position).toMatchObject({ currency: "SGD", valueUsd: "220", valueAmount: "286" })
    expect(position.rate).toEqual({
      currency: "SGD",
      rate: "1.3",
      source,
      rateDate: "2026-03-02",
      carriedForward: false
    })
  })

  it("the portfolio's totals carry the valuation rate of its positions (identity for USD, none with no value)", () => {
    const rows = run(sgd).positions
    expect(positionsValuationRate(rows, "SGD", "2026-03-02")).toEqual(positionView(rows[0]!, "2026-03-02").rate)
    expect(positionsValuationRate([], "SGD", "2026-03-02")).toBeNull()
    expect(positionsValuationRate([], "USD", "2026-03-02")).toMatchObject({ rate: "1", source: "identity" })
  })

  it("a position valued with no rate shows none; a USD one the identity of the valuation date, priced or not", () => {
    const stale = run({ ...sgd, rates: sgd.rates.slice(0, 2) }).positions[0]!
    expect(positionView(stale, "2026-03-02")).toMatchObject({ valueAmount: null, rate: null })
    const identity = { currency: "USD", rate: "1", source: "identity", rateDate: "2026-03-02", carriedForward: false }
    const usd = run().positions[0]!
    expect(positionView(usd, "2026-03-02")).toMatchObject({ valueAmount: "220", rate: identity })
    const unpriced = { ...usd, value: { usd: null, converted: null, price: null } }
    expect(positionView(unpriced, "2026-03-02").rate).toEqual(identity)
  })

  it("a lot and a disposal carry their rate's source and whether it was carried forward", () => {
    const report = run(sgd)
    expect(lotView(report.lots[0]!)).toMatchObject({
      acquired: "2026-01-05",
      rate: "1.35",
      rateDate: "2026-01-05",
      source,
      carriedForward: false
    })
    expect(disposalView(report.disposals[0]!)).toMatchObject({
      date: "2026-01-10",
      rate: "1.36",
      rateDate: "2026-01-09",
      source,
      carriedForward: true
    })
    const usd = run()
    expect(lotView(usd.lots[0]!)).toMatchObject({ rate: "1", source: "identity", carriedForward: false })
    expect(disposalView(usd.disposals[0]!)).toMatchObject({ rate: "1", source: "identity", carriedForward: false })
  })

  it("a lot or disposal with no rate has a null source and is not carried forward", () => {
    const lot = lotView({ ...run(sgd).lots[0]!, rate: null, components: [] })
    expect(lot).toMatchObject({ rate: null, rateDate: null, source: null, carriedForward: false })
    const disposal = disposalView({ ...run(sgd).disposals[0]!, proceeds: null })
    expect(disposal).toMatchObject({ rate: null, rateDate: null, source: null, carriedForward: false })
  })
})
