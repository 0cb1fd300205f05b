import { describe, expect, it } from "vitest"
import { convert, type RateTable } from "../../src/ledger/index.js"

const sgd: RateTable = {
  currency: "SGD",
  rates: [
    {
      date: "2026-08-14",
      rate: "1.2901",
      source: "ecb-via-frankfurter",
      rateDate: "2026-08-14",
      carriedForward: false
    },
    { date: "2026-08-15", rate: "1.2901", source: "ecb-via-frankfurter", rateDate: "2026-08-14", carriedForward: true }
  ]
}

describe("convert", () => {
  it("is the identity for USD, with provenance", () => {
    expect(convert("1.298304620115501966", "2026-08-14", undefined)).toEqual({
      currency: "USD",
      amount: "1.298304620115501966",
      rate: "1",
      rateDate: "2026-08-14",
      source: "identity",
      carriedForward: false
    })
    expect(convert("5", "2026-08-14", { currency: "USD", rates: [] })!.source).toBe("identity")
  })

  it("uses the rate of the figure's own date", () => {
    // 1.298304620115501966 × 1.2901 = 1.6749427904110090863366 → 18 places, half to even
    expect(convert("1.298304620115501966", "2026-08-14", sgd)).toEqual({
      currency: "SGD",
      amount: "1.674942790411009086",
      rate: "1.2901",
      rateDate: "2026-08-14",
      source: "ecb-via-frankfurter",
      carriedForward: false
    })
  })

  it("keeps the table's carried-forward flag, borrows up to 7 days back, else null", () => {
    expect(convert("1", "2026-08-15", sgd)).toMatchObject({ rateDate: "2026-08-14", carriedForward: true })
    expect(convert("1", "2026-08-16", sgd)).toMatchObject({
      amount: "1.2901",
      rateDate: "2026-08-14",
      carriedForward: true
    })
    // Counted from the day the rate was published (rateDate), not from the table's carried-forward entry: the
    // 2026-08-14 rate serves up to 2026-08-21; 2026-08-22 would borrow the 08-15 entry, 8 days after publication.
    expect(convert("1", "2026-08-21", sgd)).toMatchObject({ rateDate: "2026-08-14" })
    expect(convert("1", "2026-08-22", sgd)).toBeNull()
    expect(convert("1", "2026-08-23", sgd)).toBeNull()
    expect(convert("1", "2026-08-13", sgd)).toBeNull()
  })
})
