import { describe, expect, it } from "@effect/vitest"
import { cellText, guardText, line, num } from "@scaledger/domain/exports/Csv"
import { koinlyDate, taxtoolLine, TaxtoolRows } from "@scaledger/domain/exports/Formats"
import type { IncomeEvent, Movement, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import { parse } from "csv-parse/sync"

const parsed = (text: string): Array<Array<string>> => parse(text, { relax_column_count: false })

describe("CSV cells", () => {
  it("guards text that a spreadsheet would run, and leaves numbers plain", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"]) {
      expect(guardText(`${start}x`)).toBe(`'${start}x`)
    }
    expect(guardText("plain")).toBe("plain")
    expect(guardText("")).toBe("")
    expect(cellText(num("-12.5"))).toBe("-12.5")
    expect(cellText("-12.5")).toBe("'-12.5")
    // Something that claims to be a number but is not is written as guarded text.
    expect(cellText(num("=1+1"))).toBe("'=1+1")
    expect(cellText(num(null))).toBe("")
    expect(cellText(null)).toBe("")
    expect(cellText(true)).toBe("true")
    expect(cellText(false)).toBe("false")
  })

  it("quotes commas, quotes and line breaks (RFC 4180) and parses back to the guarded text", () => {
    const nasty = ["=SUM(A1:A2)", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf", "@home", "\tTab"]
    const text = line([...nasty, num("0.000001"), null, false]) + line(["x", "y", "z", "", "", "", "", "", "", ""])
    expect(text.endsWith("\r\n")).toBe(true)
    const [first, second] = parsed(text)
    expect(first).toEqual([
      "'=SUM(A1:A2)",
      "a,b",
      "say \"hi\"",
      "two\nlines",
      "cr\r\nlf",
      "'@home",
      "'\tTab",
      "0.000001",
      "",
      "false"
    ])
    expect(second).toHaveLength(10)
  })
})

const movement = (overrides: Partial<Movement>): Movement => ({
  id: "evt_1",
  type: "transfer.out",
  relationship: "exchange",
  classifiedBy: "rule",
  confirmed: true,
  needsReview: false,
  taxable: true,
  treatment: "disposal",
  direction: "out",
  token: "AAPL",
  tokenAddress: "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9",
  wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  counterparty: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
  raw: "2000000000000000000",
  qty: "2",
  shares: "2.001132160122184872",
  date: "2026-09-01",
  timestamp: Date.parse("2026-09-01T14:00:00Z") / 1000,
  currency: "EUR",
  valueUsd: "460",
  value: {
    currency: "EUR",
    amount: "400",
    rate: "0.8695652173913043",
    rateDate: "2026-09-01",
    source: "ecb-via-eurofxref",
    carriedForward: false
  },
  price: null,
  lotIds: [],
  disposalIds: [],
  nullReasons: [],
  walletTransaction: { txHash: "0xabc", block: 10, logIndex: 0 },
  ...overrides
})

describe("the Koinly mapping", () => {
  it("writes a disposal as a withdrawal of shares, an acquisition as a deposit, and leaves own movements out", () => {
    expect(parsed(taxtoolLine(movement({}), "EUR")!)[0]).toEqual([
      "2026-09-01 14:00:00",
      "2.001132160122184872",
      "AAPL",
      "",
      "",
      "",
      "",
      "",
      "400",
      "EUR",
      "transfer.out",
      "0xabc"
    ])
    const deposit = parsed(
      taxtoolLine(movement({ type: "mint", direction: "in", treatment: "acquisition" }), "EUR")!
    )[0]!
    expect(deposit.slice(1, 5)).toEqual(["", "", "2.001132160122184872", "AAPL"])
    // Unknown value: empty Net Worth, never 0.
    const unpriced = parsed(taxtoolLine(movement({ value: null, valueUsd: null, needsReview: true }), "EUR")!)[0]!
    expect(unpriced.slice(8, 11)).toEqual(["", "", "needs review"])
    for (
      const own of [
        movement({ type: "transfer.self", treatment: "self_transfer", direction: "self" }),
        movement({ type: "transfer.out", relationship: "self", treatment: "self_transfer" }),
        movement({ type: "collateral_post", treatment: "collateral_post" }),
        movement({ type: "bridge.out", treatment: "bridge_out" })
      ]
    ) {
      expect(taxtoolLine(own, "EUR")).toBeNull()
    }
    // A self-transfer only a model suggested (not confirmed): the ledger counts it as a disposal, and so does the file.
    const suggested = parsed(
      taxtoolLine(
        movement({ type: "transfer.self", treatment: "disposal", direction: "out", needsReview: true }),
        "EUR"
      )!
    )[0]!
    expect(suggested.slice(1, 5)).toEqual(["2.001132160122184872", "AAPL", "", ""])
    expect(suggested[10]).toBe("needs review")
    // Its value is not a tax figure while the label is unconfirmed: Koinly would take Net Worth as the proceeds.
    const unconfirmed = { nullReasons: [{ reason: "unconfirmed_label" as const, eventId: "0xabc:0" }] }
    expect(parsed(taxtoolLine(movement({ needsReview: true, ...unconfirmed }), "EUR")!)[0]!.slice(8, 11)).toEqual([
      "",
      "",
      "needs review"
    ])
    const arrival = movement({ direction: "in", treatment: "acquisition", needsReview: true, ...unconfirmed })
    expect(parsed(taxtoolLine(arrival, "EUR")!)[0]!.slice(8, 10)).toEqual(["", ""])
    // A confirmed movement keeps its worth whether or not it is marked for review.
    expect(parsed(taxtoolLine(movement({ needsReview: true }), "EUR")!)[0]!.slice(8, 10)).toEqual(["400", "EUR"])
  })

  it("writes a dividend step as income in shares and a split as a zero-worth deposit (a reverse split a withdrawal)", () => {
    const income: IncomeEvent = {
      id: "inc_1",
      eventId: "chg_1",
      type: "income.multiplier_increase",
      token: "AAPL",
      tokenAddress: "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9",
      wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      block: 20,
      effectiveAt: Date.parse("2026-08-14T15:10:00Z") / 1000,
      date: "2026-08-14",
      from: "1",
      to: "1.000566080061092436",
      rawBalance: "10",
      addedShares: "0.00566080061092436",
      sharePriceUsd: "229.35",
      price: null,
      currency: "USD",
      incomeUsd: "1.298304620115502966",
      income: {
        currency: "USD",
        amount: "1.298304620115502966",
        rate: "1",
        rateDate: "2026-08-14",
        source: "identity",
        carriedForward: false
      },
      taxable: true,
      needsReview: false,
      walletTransaction: null,
      lotIds: [],
      nullReasons: []
    }
    expect(parsed(taxtoolLine(income, "USD")!)[0]).toEqual([
      "2026-08-14 15:10:00",
      "",
      "",
      "0.00566080061092436",
      "AAPL",
      "income",
      "",
      "",
      "1.298304620115502966",
      "USD",
      "multiplier 1 to 1.000566080061092436",
      ""
    ])
    const split: SplitEvent = {
      id: "spl_1",
      eventId: "chg_2",
      type: "split",
      token: "CRWD",
      tokenAddress: "0xea72Ecca2d0f6bFA1394DBBCff85b52CD4233931",
      wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      block: 30,
      effectiveAt: Date.parse("2026-07-02T13:30:00Z") / 1000,
      date: "2026-07-02",
      from: "1",
      to: "4",
      rawBalance: "9",
      sharesBefore: "9",
      sharesAfter: "36",
      taxable: false,
      walletTransaction: null
    }
    expect(parsed(taxtoolLine(split, "SGD")!)[0]).toEqual([
      "2026-07-02 13:30:00",
      "",
      "",
      "27",
      "CRWD",
      "",
      "",
      "",
      "0",
      "SGD",
      "split 4:1",
      ""
    ])
    const reverse = parsed(
      taxtoolLine({ ...split, from: "4", to: "1", sharesBefore: "36", sharesAfter: "9" }, "USD")!
    )[0]!
    expect(reverse.slice(1, 5)).toEqual(["27", "CRWD", "", ""])
    expect(reverse[10]).toBe("split 1:4")
    // A ratio of no small integers is still written new to old.
    const odd = parsed(taxtoolLine({ ...split, from: "1", to: "1.05", sharesAfter: "9.45" }, "USD")!)[0]!
    expect(odd[10]).toBe("split 1.05:1")
    expect(koinlyDate(0)).toBe("1970-01-01 00:00:00")
    // Koinly's amounts are positive: a step that added no share unit, or a split of a zero balance, is left out.
    expect(taxtoolLine({ ...income, rawBalance: "0", addedShares: "0", income: null, incomeUsd: null }, "USD"))
      .toBeNull()
    expect(taxtoolLine({ ...split, rawBalance: "0", sharesBefore: "0", sharesAfter: "0" }, "USD")).toBeNull()
  })

  it("leaves out a transfer of 0 (anyone can send one to any address)", () => {
    expect(taxtoolLine(movement({ raw: "0", qty: "0", shares: "0", needsReview: true }), "EUR")).toBeNull()
    expect(taxtoolLine(movement({ raw: "1", qty: "0.000000000000000001", shares: "0.000000000000000001" }), "EUR"))
      .not.toBeNull()
  })
})

describe("Koinly's rows of a sequence of events (TaxtoolRows)", () => {
  const swapOut = movement({
    id: "0xswap:1",
    type: "swap",
    treatment: "disposal",
    direction: "out",
    walletTransaction: { txHash: "0xswap", block: 11, logIndex: 1 }
  })
  const swapIn = movement({
    id: "0xswap:2",
    type: "swap",
    treatment: "acquisition",
    direction: "in",
    token: "MU",
    tokenAddress: "0x000000000000000000000000000000000000aa01",
    shares: "1.000174823219171086",
    value: { ...movement({}).value!, amount: "399.5" },
    walletTransaction: { txHash: "0xswap", block: 11, logIndex: 2 }
  })
  const rowsOf = (events: ReadonlyArray<Movement>) => {
    const rows = new TaxtoolRows("EUR")
    const lines = events.flatMap((event) => rows.add(event))
    return [...lines, ...rows.end()].map((text) => parsed(text)[0]!)
  }

  it("writes a swap's two sides as one trade: Sent and Received both filled, worth what was given", () => {
    for (const order of [[swapOut, swapIn], [swapIn, swapOut]]) {
      expect(rowsOf(order)).toEqual([[
        "2026-09-01 14:00:00",
        "2.001132160122184872",
        "AAPL",
        "1.000174823219171086",
        "MU",
        "",
        "",
        "",
        "400",
        "EUR",
        "swap",
        "0xswap"
      ]])
    }
    // Its worth is what came in when what went out has no price.
    const unpriced = rowsOf([{ ...swapOut, value: null, valueUsd: null }, swapIn])
    expect(unpriced.map((row) => row.slice(8, 10))).toEqual([["399.5", "EUR"]])
    // A side marked for review marks the trade.
    expect(rowsOf([swapOut, { ...swapIn, needsReview: true }])[0]![10]).toBe("needs review")
  })

  it("writes a swap side alone when the transaction has no other side for the same address", () => {
    const other = movement({ walletTransaction: { txHash: "0xnext", block: 12, logIndex: 0 } })
    const lone = rowsOf([swapOut, other])
    expect(lone.map((row) => [row[1], row[3], row[10], row[11]])).toEqual([
      ["2.001132160122184872", "", "swap", "0xswap"],
      ["2.001132160122184872", "", "transfer.out", "0xnext"]
    ])
    // Another own address's side is not this one's trade.
    const elsewhere = rowsOf([swapOut, { ...swapIn, wallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" }])
    expect(elsewhere.map((row) => [row[1], row[3]])).toEqual([
      ["2.001132160122184872", ""],
      ["", "1.000174823219171086"]
    ])
    // At the end of the file a waiting side is written too.
    expect(rowsOf([swapIn]).map((row) => row[3])).toEqual(["1.000174823219171086"])
  })
})
