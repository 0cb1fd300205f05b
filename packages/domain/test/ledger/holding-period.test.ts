import { describe, expect, it } from "vitest"
import { holdingPeriod, oneYearHeldOn } from "../../src/ledger/index.js"

// IRS Pub. 550: count from the day after acquisition, the disposal day counts, long-term = more than one year.
// Rev. Rul. 66-7: counted in calendar months; acquired on the last day of a month, each holding month ends on the
// last day of a month.
describe("US holding period, calendar rule", () => {
  it.each(
    [
      // acquired, disposed, expected
      ["2025-01-01", "2026-01-01", "short"], // exactly one year
      ["2025-01-01", "2026-01-02", "long"], // Pub. 550's own example
      ["2024-02-29", "2025-02-28", "short"], // last day of February: the year ends on the last day of February 2025
      ["2024-02-29", "2025-03-01", "long"],
      ["2023-02-28", "2024-02-29", "short"], // last day of February 2023: the year ends 2024-02-29, not 2024-02-28
      ["2023-02-28", "2024-03-01", "long"],
      ["2024-02-28", "2025-02-28", "short"], // not the last day of the month in a leap year: plain anniversary
      ["2024-02-28", "2025-03-01", "long"],
      ["2023-03-01", "2024-03-01", "short"], // 366 days, still only one year: "days > 365" would say long
      ["2023-03-01", "2024-03-02", "long"],
      ["2025-01-31", "2026-01-31", "short"],
      ["2025-01-31", "2026-02-01", "long"],
      ["2025-06-15", "2025-06-15", "short"]
    ] as const
  )("acquired %s, disposed %s → %s", (acquired, disposed, expected) => {
    expect(holdingPeriod(acquired, disposed)).toBe(expected)
  })

  it("names the last short-term day", () => {
    expect(oneYearHeldOn("2025-01-01")).toBe("2026-01-01")
    expect(oneYearHeldOn("2024-02-29")).toBe("2025-02-28")
    expect(oneYearHeldOn("2023-02-28")).toBe("2024-02-29")
    expect(oneYearHeldOn("2025-04-30")).toBe("2026-04-30")
  })
})
