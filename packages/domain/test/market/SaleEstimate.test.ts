import { describe, expect, it } from "@effect/vitest"
import { Ledger, type LedgerInput, rateOn } from "@scaledger/domain/ledger/index"
import type { Lot } from "@scaledger/domain/market/LedgerFifo"
import { estimateSale, type SaleRequest } from "@scaledger/domain/market/SaleEstimate"
import { Either } from "effect"

// A small record built by the real ledger: the estimate reads the lots it leaves open.
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const WALLET = addr(1)
const SELLER = addr(0x99)
const TOKEN = addr(0xaa)
const FEED = addr(0xfeed)
const unix = (iso: string) => Date.parse(iso) / 1000
const raw = (tokens: number) => (BigInt(tokens) * 10n ** 18n).toString()

const buy = (block: number, iso: string, tokens: number) => ({
  id: `buy-${block}`,
  kind: "transfer" as const,
  token: "AAPL",
  tokenAddress: TOKEN,
  from: SELLER,
  to: WALLET,
  raw: raw(tokens),
  block,
  logIndex: 0,
  txHash: `0x${block.toString(16).padStart(64, "0")}`,
  timestamp: unix(iso)
})

const input = (extra: Partial<LedgerInput> = {}): LedgerInput => ({
  wallets: [{ address: WALLET, self: true }],
  country: "US",
  prices: {
    AAPL: [
      { roundId: "1", answer: "10000000000", updatedAt: unix("2024-02-29T14:00:00Z"), feed: FEED }, // $100
      { roundId: "2", answer: "12000000000", updatedAt: unix("2024-06-15T14:00:00Z"), feed: FEED } // $120
    ]
  },
  // 10 tokens on 29 February 2024 ($1,000), 5 on 15 June 2024 ($600).
  events: [buy(1, "2024-02-29T15:00:00Z", 10), buy(2, "2024-06-15T15:00:00Z", 5)],
  asOf: unix("2025-02-28T12:00:00Z"),
  ...extra
})

const lotsOf = (ledgerInput: LedgerInput) => {
  const report = Either.getOrThrow(Ledger.run(ledgerInput))
  return report.lots
}

const usd = rateOn("2025-02-28", undefined)

const request = (over: Partial<SaleRequest>): SaleRequest => ({
  lots: lotsOf(input()),
  multiplier: "1",
  shares: "12",
  priceUsd: "150",
  date: "2025-02-28",
  rate: usd,
  ...over
})

const ok = (r: SaleRequest) => {
  const result = estimateSale(r)
  if (!("ok" in result)) throw new Error(JSON.stringify(result.error))
  return result.ok
}

describe("estimate_sale across the one-year line", () => {
  it("on 2025-02-28 a lot bought 2024-02-29 is still short-term (its year ends that day)", () => {
    const estimate = ok(request({}))
    // FIFO: all 10 of the first lot, 2 of the 5 of the second. Proceeds 12 × 150 = 1800; basis 1000 + 2/5 × 600.
    expect(estimate).toMatchObject({
      shares: "12",
      proceeds: "1800",
      basis: "1240",
      gain: "560",
      proceedsUsd: "1800",
      basisUsd: "1240",
      gainUsd: "560",
      shortTerm: { shares: "12", proceeds: "1800", basis: "1240", gain: "560" },
      longTerm: { shares: "0", proceeds: "0", basis: "0", gain: "0" },
      ifWaited: { date: "2025-06-16", gainBecomingLongTerm: "560" }
    })
    expect(
      estimate.lots.map((l) => [l.acquired, l.shares, l.holdingPeriod, l.basis, l.gain, l.longTermOn, l.daysToLongTerm])
    ).toEqual([
      ["2024-02-29", "10", "short", "1000", "500", "2025-03-01", 1],
      ["2024-06-15", "2", "short", "240", "60", "2025-06-16", 108]
    ])
  })

  it("on 2025-03-01 the 29 February lot is long-term and the June lot still short", () => {
    const estimate = ok(request({ date: "2025-03-01" }))
    expect(estimate.shortTerm).toEqual({ shares: "2", proceeds: "300", basis: "240", gain: "60" })
    expect(estimate.longTerm).toEqual({ shares: "10", proceeds: "1500", basis: "1000", gain: "500" })
    expect(estimate.lots[0]).toMatchObject({ holdingPeriod: "long", longTermOn: null, gainBecomingLongTerm: null })
    expect(estimate.ifWaited).toEqual({ date: "2025-06-16", gainBecomingLongTerm: "60" })
  })

  it("a lot bought 2023-02-28 is short on 2024-02-29 and long on 2024-03-01", () => {
    const lots = lotsOf(input({
      prices: { AAPL: [{ roundId: "1", answer: "5000000000", updatedAt: unix("2023-02-28T00:00:00Z"), feed: FEED }] },
      events: [buy(1, "2023-02-28T15:00:00Z", 4)],
      asOf: unix("2024-03-01T12:00:00Z")
    }))
    const leap = ok(request({ lots, shares: "4", priceUsd: "40", date: "2024-02-29" }))
    expect(leap.shortTerm).toEqual({ shares: "4", proceeds: "160", basis: "200", gain: "-40" })
    expect(leap.lots[0]).toMatchObject({ longTermOn: "2024-03-01", daysToLongTerm: 1 })
    const after = ok(request({ lots, shares: "4", priceUsd: "40", date: "2024-03-01" }))
    expect(after.longTerm).toEqual({ shares: "4", proceeds: "160", basis: "200", gain: "-40" })
    expect(after.ifWaited).toBeNull()
  })

  it("converts shares to raw with the current multiplier and keeps basis per token", () => {
    // Multiplier 1.25 now: 12.5 shares = 10 tokens = the whole first lot.
    const estimate = ok(request({ multiplier: "1.25", shares: "12.5", priceUsd: "100" }))
    expect(estimate).toMatchObject({ raw: raw(10), proceeds: "1250", basis: "1000", gain: "250" })
    expect(estimate.lots).toHaveLength(1)
  })

  it("converts proceeds at the sale date's rate and basis at the lots' own rates", () => {
    const sgd = {
      currency: "SGD" as const,
      rates: [
        { date: "2024-02-29", rate: "1.3", source: "ecb-via-eurofxref", rateDate: "2024-02-29", carriedForward: false },
        { date: "2025-02-28", rate: "1.4", source: "ecb-via-eurofxref", rateDate: "2025-02-28", carriedForward: false }
      ]
    }
    const lots = lotsOf(input({ rates: sgd, events: [buy(1, "2024-02-29T15:00:00Z", 10)] }))
    const estimate = ok(request({ lots, shares: "10", rate: rateOn("2025-02-28", sgd) }))
    // 1500 USD × 1.4 = 2100 SGD; basis 1000 USD × 1.3 = 1300 SGD.
    expect(estimate).toMatchObject({
      proceeds: "2100",
      basis: "1300",
      gain: "800",
      proceedsUsd: "1500",
      gainUsd: "500"
    })
  })

  it("keeps unknown as null: no price, or a lot without basis", () => {
    const noPrice = ok(request({ priceUsd: null }))
    expect(noPrice).toMatchObject({ proceeds: null, gain: null, basis: "1240" })
    const lots = lotsOf(input({ prices: {} }))
    const noBasis = ok(request({ lots }))
    expect(noBasis).toMatchObject({ proceeds: "1800", basis: null, gain: null })
    expect(noBasis.lots[0]!.unknownBecause).toEqual([{ reason: "missing_price", eventId: "buy-1" }])
  })

  it("refuses a bad share count and more than the pool holds", () => {
    expect(estimateSale(request({ shares: "0" }))).toMatchObject({ error: { _tag: "InvalidShares" } })
    expect(estimateSale(request({ shares: "-1" }))).toMatchObject({ error: { _tag: "InvalidShares" } })
    expect(estimateSale(request({ shares: "1e3" }))).toMatchObject({ error: { _tag: "InvalidShares" } })
    expect(estimateSale(request({ shares: "15.000000000000000001" }))).toEqual({
      error: { _tag: "InsufficientShares", held: "15", requested: "15.000000000000000001" }
    })
    expect(ok(request({ shares: "15" })).basis).toBe("1600")
    // At a multiplier of 4, 1e-18 shares is a quarter of a raw unit: nothing to sell, not more than is held.
    expect(estimateSale(request({ shares: "0.000000000000000001", multiplier: "4" }))).toMatchObject({
      error: { _tag: "InvalidShares" }
    })
    // Exactly half a raw unit rounds half to even, to 0; a little more is one unit.
    expect(estimateSale(request({ shares: "0.000000000000000002", multiplier: "4" }))).toMatchObject({
      error: { _tag: "InvalidShares", message: expect.stringContaining("rounds to no raw token unit") }
    })
    expect(ok(request({ shares: "0.000000000000000003", multiplier: "4" })).raw).toBe("1")
    expect(ok(request({ shares: "0.000000000000000004", multiplier: "4" })).raw).toBe("1")
  })
})

describe("estimate_sale over lots made whole on demand", () => {
  /** The report's lots as sources that count how many were made whole. */
  const sources = (lots: ReadonlyArray<Lot>) => {
    const made: Array<string> = []
    return {
      made,
      lots: lots.map((lot) => ({
        id: lot.id,
        acquiredAt: lot.acquiredAt,
        raw: lot.raw,
        whole: () => {
          made.push(lot.id)
          return lot
        }
      }))
    }
  }
  // Three lots listed out of acquisition order: FIFO still draws the oldest first.
  const three = lotsOf(input({
    events: [buy(1, "2024-02-29T15:00:00Z", 10), buy(2, "2024-06-15T15:00:00Z", 5), buy(3, "2024-07-01T15:00:00Z", 1)]
  }))
  const shuffled = [three[2]!, three[0]!, three[1]!]

  it("gives the estimate the whole lots give, making whole only the lots the sale draws from", () => {
    for (const shares of ["3", "10", "12", "16"]) {
      const lazy = sources(shuffled)
      expect(ok(request({ lots: lazy.lots, shares }))).toEqual(ok(request({ lots: shuffled, shares })))
      expect(lazy.made).toEqual(
        shares === "3" || shares === "10"
          ? ["buy-1"]
          : shares === "12"
          ? ["buy-1", "buy-2"]
          : ["buy-1", "buy-2", "buy-3"]
      )
    }
    expect(ok(request({ lots: shuffled, shares: "3" })).lots.map((lot) => lot.lotId)).toEqual(["buy-1"])
  })

  it("counts only what the selling address holds when that is less than the pool (account lot scope)", () => {
    // The pool holds 16; the address selling holds 4 of them: it cannot sell 5, whatever the pool holds.
    expect(estimateSale(request({ lots: shuffled, shares: "5", heldRaw: BigInt(raw(4)) }))).toEqual({
      error: { _tag: "InsufficientShares", held: "4", requested: "5" }
    })
    expect(ok(request({ lots: shuffled, shares: "4", heldRaw: BigInt(raw(4)) })).basis).toBe("400")
    // More than the pool: the pool's total is what is held.
    expect(estimateSale(request({ lots: shuffled, shares: "17", heldRaw: BigInt(raw(20)) }))).toEqual({
      error: { _tag: "InsufficientShares", held: "16", requested: "17" }
    })
  })

  it("counts the whole pool as held, not only the lots drawn", () => {
    const lazy = sources(shuffled)
    expect(estimateSale(request({ lots: lazy.lots, shares: "16.5" }))).toEqual({
      error: { _tag: "InsufficientShares", held: "16", requested: "16.5" }
    })
    expect(lazy.made).toEqual([])
  })
})

describe("estimate_sale of a lot whose acquisition date is unknown", () => {
  // 10 bought on 29 February 2024; on 15 June 2024, 5 arrive from another own address that no recorded lot covers
  // (a lot made up for them, `incomplete_history`: FIFO keeps its arrival time, its acquisition date is unknown).
  const OTHER = addr(2)
  const arrival = {
    ...buy(2, "2024-06-15T15:00:00Z", 5),
    id: "arrival-2",
    from: OTHER,
    classification: { type: "transfer.self", relationship: "self", classifiedBy: "user", confirmed: true } as const
  }
  const report = Either.getOrThrow(Ledger.run(input({
    wallets: [{ address: WALLET, self: true }, { address: OTHER, self: true }],
    events: [buy(1, "2024-02-29T15:00:00Z", 10), arrival],
    asOf: unix("2025-06-02T12:00:00Z")
  })))
  const lots = report.lots.filter((lot) => lot.wallet === WALLET)

  it("has no holding period, and neither term has figures; the sale's totals do", () => {
    expect(lots.map((lot) => [lot.id, lot.nullReasons.map((r) => r.reason)])).toEqual([
      ["buy-1", []],
      ["arrival-2#unmatched", ["incomplete_history"]]
    ])
    const estimate = ok(request({ lots, shares: "12", date: "2025-06-02", rate: rateOn("2025-06-02", undefined) }))
    expect(estimate.lots.map((lot) => [lot.lotId, lot.holdingPeriod, lot.longTermOn, lot.daysToLongTerm])).toEqual([
      ["buy-1", "long", null, null],
      ["arrival-2#unmatched", null, null, null]
    ])
    expect(estimate).toMatchObject({
      shares: "12",
      proceeds: "1800",
      basis: null,
      shortTerm: { shares: "0", proceeds: null, basis: null, gain: null },
      longTerm: { shares: "10", proceeds: null, basis: null, gain: null },
      ifWaited: null
    })
  })
})
