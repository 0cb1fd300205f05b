import { describe, expect, it } from "@effect/vitest"
import {
  type DeclaredDividend,
  declaredFor,
  edgarTicker,
  impliedWithholding,
  padCik,
  parseCompanyTickers,
  parseDeclaredDividends,
  parseRecentFilings,
  periodKind,
  withholdingFor
} from "@scaledger/domain/market/Edgar"
import { DeclaredDividendView, FilingView } from "@scaledger/domain/MarketApi"
import { Schema } from "effect"
import { readFileSync } from "node:fs"

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../../../test/fixtures/edgar/${name}`, import.meta.url), "utf8"))

const quarter = (start: string, end: string, perShare: string): DeclaredDividend => ({
  start,
  end,
  period: periodKind(start, end),
  perShare,
  form: "10-Q",
  filed: end,
  accessionNumber: `acc-${start}`,
  fiscalYear: null,
  fiscalPeriod: null
})

describe("EDGAR formats", () => {
  it("maps tickers to CIKs, pads CIKs to 10 digits and writes class shares with a dash", () => {
    const map = parseCompanyTickers(fixture("company_tickers.json"))
    expect(map.get("AAPL")).toEqual({ cik: 320193, ticker: "AAPL", name: "Apple Inc." })
    expect(map.get(edgarTicker("brk.b"))?.cik).toBe(1067983)
    expect(padCik(320193)).toBe("0000320193")
    expect(() => parseCompanyTickers({ "0": { ticker: "X" } })).toThrow()
  })

  it("turns the columnar filings.recent into records, newest first", () => {
    const { filings, name } = parseRecentFilings(fixture("CIK0000320193.submissions.json"))
    expect(name).toBe("Apple Inc.")
    expect(filings.map((f) => f.filingDate)).toEqual(["2024-11-01", "2024-10-31", "2024-10-16", "2024-08-02"])
    expect(filings[3]).toEqual({
      accessionNumber: "0000320193-24-000081",
      form: "10-Q",
      filingDate: "2024-08-02",
      reportDate: "2024-06-29",
      acceptedAt: "2024-08-02T06:01:32.000Z",
      primaryDocument: "aapl-20240629.htm",
      description: "10-Q"
    })
    expect(() => parseRecentFilings({ filings: {} })).toThrow()
  })

  it("classifies periods by length", () => {
    expect(periodKind("2022-09-25", "2022-12-31")).toBe("quarter") // a 14-week quarter
    expect(periodKind("2023-10-01", "2024-03-30")).toBe("half_year")
    expect(periodKind("2023-10-01", "2024-09-28")).toBe("annual")
    expect(periodKind("2024-01-01", "2024-01-31")).toBe("other")
  })

  it("keeps one row per period, the latest filed, and answers null without either concept", () => {
    const parsed = parseDeclaredDividends(fixture("CIK0000320193.companyfacts.json"))!
    expect(parsed.concept).toBe("CommonStockDividendsPerShareDeclared")
    // 21 rows: 10 quarters and years, 2 year-to-date sums, the rest repeats.
    expect(parsed.dividends).toHaveLength(12)
    expect(parsed.dividends.filter((d) => d.period === "half_year").map((d) => d.perShare)).toEqual(["0.46", "0.48"])
    expect(parsed.dividends[0]).toMatchObject({ start: "2022-09-25", end: "2022-12-31", filed: "2024-11-01" })
    expect(parseDeclaredDividends(fixture("CIK0000884394.companyfacts.json"))).toBeNull()
    expect(parseDeclaredDividends({ facts: { "us-gaap": { CommonStockDividendsPerShareDeclared: { units: {} } } } }))
      .toBeNull()
    expect(parseDeclaredDividends(fixture("CIK0000200406.companyfacts.json"))?.concept).toBe(
      "CommonStockDividendsPerShareCashPaid"
    )
  })

  it("leaves out rows the API could not show (a date not YYYY-MM-DD, a value no number), keeping the others", () => {
    // Such a row used to reach the response, whose encoding then failed: 400 "does not match the API contract",
    // cached with the document for a day.
    const row = { start: "2024-01-01", end: "2024-03-31", val: 0.5, accn: "a1", fy: 2024, fp: "Q1", form: "10-Q" }
    const parsed = parseDeclaredDividends({
      facts: {
        "us-gaap": {
          CommonStockDividendsPerShareDeclared: {
            units: {
              "USD/shares": [
                { ...row, filed: "2024-05-01" },
                { ...row, start: "2024-04-01", end: "2024-06-30", filed: "2024-08-01T00:00:00" },
                { ...row, start: "2024-07-01", end: "2024/09/30", filed: "2024-11-01" },
                { ...row, start: "2024-07-01", end: "2024-09-30", val: "n/a", filed: "2024-11-01" },
                { ...row, start: "2024-10-01", end: "2024-12-31", fy: 2024.5, filed: "2025-02-01" },
                { nonsense: true }
              ]
            }
          },
          // Another concept's malformed rows do not matter.
          Revenues: { units: { USD: [{ end: 7 }] } }
        }
      }
    })!
    expect(parsed.dividends.map((d) => [d.start, d.end, d.fiscalYear])).toEqual([
      ["2024-01-01", "2024-03-31", 2024],
      ["2024-10-01", "2024-12-31", null]
    ])
    for (const d of parsed.dividends) Schema.encodeSync(DeclaredDividendView)(d)

    const filings = parseRecentFilings({
      filings: {
        recent: {
          accessionNumber: ["1", "2"],
          filingDate: ["20241101", "2024-10-31"],
          form: ["10-K", "8-K"],
          acceptanceDateTime: ["", "2024-10-31T16:30:00.000Z"]
        }
      }
    }).filings
    expect(filings.map((f) => f.accessionNumber)).toEqual(["2"])
    for (const f of filings) {
      Schema.encodeSync(FilingView)({ symbol: "X", cik: 1, url: null, ...f, primaryDocument: undefined } as never)
    }
  })
})

describe("withholding estimate", () => {
  const declared = [
    quarter("2024-03-31", "2024-06-29", "0.25"),
    quarter("2024-06-30", "2024-09-28", "0.25"),
    quarter("2023-10-01", "2024-09-28", "0.98") // annual: never matched to a step
  ]

  it("matches a step to the quarter containing it, else the latest quarter before it (200 days)", () => {
    expect(declaredFor(declared, "2024-05-16")).toMatchObject({
      matchedBy: "containing_quarter",
      dividend: { start: "2024-03-31" }
    })
    expect(declaredFor(declared, "2024-11-14")).toMatchObject({
      matchedBy: "previous_quarter",
      dividend: { start: "2024-06-30" }
    })
    expect(declaredFor(declared, "2025-06-01")).toBeNull()
    expect(declaredFor([], "2024-05-16")).toBeNull()
  })

  it("computes paid per share from the step and the implied rate by hand", () => {
    // (1.001 / 1 − 1) × 200 = 0.2 paid against 0.25 declared: 20 % withheld.
    expect(impliedWithholding({ from: "1", to: "1.001", sharePriceUsd: "200" }, "0.25")).toEqual({
      paidPerShare: "0.2",
      rate: "0.2"
    })
    // (2.0035 / 2 − 1) × 100 = 0.175 against 0.25: 30 %.
    expect(impliedWithholding({ from: "2", to: "2.0035", sharePriceUsd: "100" }, "0.25")).toEqual({
      paidPerShare: "0.175",
      rate: "0.3"
    })
    expect(impliedWithholding({ from: "1", to: "1.001", sharePriceUsd: null }, "0.25")).toEqual({
      paidPerShare: null,
      rate: null
    })
    expect(impliedWithholding({ from: "1", to: "1.001", sharePriceUsd: "200" }, null)).toEqual({
      paidPerShare: "0.2",
      rate: null
    })
  })

  it("withholdingFor: one step against the declared dividends, with the filing; null where unknown", () => {
    const step = { date: "2024-05-16", from: "1", to: "1.00095", sharePriceUsd: "190" }
    expect(withholdingFor(step, declared)).toEqual({
      sharePriceUsd: "190",
      paidPerShare: "0.1805",
      declaredPerShare: "0.25",
      declaredPeriod: { start: "2024-03-31", end: "2024-06-29" },
      matchedBy: "containing_quarter",
      impliedWithholdingRate: "0.278",
      accessionNumber: "acc-2024-03-31"
    })
    const unknown = {
      sharePriceUsd: "190",
      paidPerShare: "0.1805",
      declaredPerShare: null,
      declaredPeriod: null,
      matchedBy: null,
      impliedWithholdingRate: null,
      accessionNumber: null
    }
    // No declared dividends known (EDGAR not cached, an ETF), or none near the step's date.
    expect(withholdingFor(step, null)).toEqual(unknown)
    expect(withholdingFor({ ...step, date: "2025-06-01" }, declared)).toEqual(unknown)
    expect(withholdingFor({ ...step, sharePriceUsd: null }, declared)).toMatchObject({
      paidPerShare: null,
      declaredPerShare: "0.25",
      impliedWithholdingRate: null
    })
  })
})
