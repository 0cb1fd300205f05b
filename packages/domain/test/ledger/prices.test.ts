import { describe, expect, it } from "@effect/vitest"
import type { PriceRound } from "../../src/ledger/LedgerInput.js"
import { indexPrices, priceAt } from "../../src/ledger/Prices.js"

const round = (id: number, updatedAt: number, answer = String(100 + id)): PriceRound => ({
  roundId: String(id),
  answer,
  updatedAt,
  feed: "0x00000000000000000000000000000000000000f1"
})

describe("indexPrices", () => {
  it("parses a token's rounds once per array: a new table around the same arrays reuses them", () => {
    const aapl = [round(1, 100), round(2, 200)]
    const tsla = [round(1, 150)]
    const first = indexPrices({ AAPL: aapl, TSLA: tsla })
    const again = indexPrices({ AAPL: aapl, TSLA: [...tsla, round(2, 250)] })
    if (typeof first === "string" || typeof again === "string") throw new Error("expected an index")
    expect(again).not.toBe(first)
    expect(again.get("AAPL")).toBe(first.get("AAPL"))
    expect(again.get("TSLA")).not.toBe(first.get("TSLA"))
    expect(priceAt(again, "TSLA", 300)?.round.roundId).toBe("2")
    expect(priceAt(again, "AAPL", 199)?.answer).toBe(101n)
  })

  it("names the token whose rounds are out of order, for each table the array is in", () => {
    const unsorted = [round(1, 200), round(2, 100)]
    expect(indexPrices({ AAPL: unsorted })).toBe("price rounds of AAPL are not sorted by updatedAt (round 2)")
    expect(indexPrices({ MU: unsorted })).toBe("price rounds of MU are not sorted by updatedAt (round 2)")
    expect(indexPrices({ MU: [round(1, 100, "1.5")] })).toBe("price round 1 of MU: answer is not an integer")
  })
})
