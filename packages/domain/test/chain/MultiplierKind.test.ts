import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { classifyMultiplierStep, multiplierKind, simpleRatio } from "../../src/chain/MultiplierKind.js"

const ONE = 10n ** 18n

interface FixtureEvent {
  readonly symbol: string
  readonly oldMultiplier: string
  readonly newMultiplier: string
}

const fixture = JSON.parse(
  readFileSync(new URL("../../../../test/fixtures/multiplier-events-4663.json", import.meta.url), "utf8")
) as { events: ReadonlyArray<FixtureEvent> }

describe("classifyMultiplierStep", () => {
  it("classifies every real Robinhood Chain step: CRWD's two announcements are a 4:1 split, the rest dividends", () => {
    const kinds = fixture.events.map((
      e
    ) => [e.symbol, multiplierKind(BigInt(e.oldMultiplier), BigInt(e.newMultiplier))])
    expect(kinds.filter(([, k]) => k === "split").map(([s]) => s)).toEqual(["CRWD", "CRWD"])
    expect(kinds.filter(([, k]) => k === "dividend")).toHaveLength(11)
    expect(classifyMultiplierStep(ONE, 4n * ONE)).toEqual({ kind: "split", ratio: { numerator: 4, denominator: 1 } })
  })

  it("AAPL 1.0 → 1.000566080061092436 is a dividend step", () => {
    expect(classifyMultiplierStep(ONE, 1_000566080061092436n)).toEqual({ kind: "dividend" })
  })

  it("a later step is judged by its ratio, not its value (SGOV 1.000957… → 1.002981…)", () => {
    expect(multiplierKind(1_000957519890990718n, 1_002981519346766532n)).toBe("dividend")
    expect(multiplierKind(1_000957519890990718n, 4_003830079563962872n)).toBe("split")
  })

  it("a 1:10 reverse split (1 → 0.1) is the split 1/10", () => {
    expect(classifyMultiplierStep(ONE, ONE / 10n)).toEqual({ kind: "split", ratio: { numerator: 1, denominator: 10 } })
  })

  it("ratios that fixed point cannot write exactly still count (1 → 1/3, 1 → 2/3)", () => {
    expect(classifyMultiplierStep(ONE, 333333333333333333n)).toEqual({
      kind: "split",
      ratio: { numerator: 1, denominator: 3 }
    })
    expect(simpleRatio(ONE, 666666666666666667n)).toEqual({ numerator: 2, denominator: 3 })
    expect(multiplierKind(3n * ONE, ONE)).toBe("split")
  })

  it("3:2 is a split; 21/20 (5 % from 1) is a dividend; 11/10 (exactly 10 %) is a split; 10/11 (9.1 %) is not", () => {
    expect(classifyMultiplierStep(2n * ONE, 3n * ONE)).toEqual({
      kind: "split",
      ratio: { numerator: 3, denominator: 2 }
    })
    expect(multiplierKind(ONE, 1_050000000000000000n)).toBe("dividend")
    expect(classifyMultiplierStep(ONE, 1_100000000000000000n)).toEqual({
      kind: "split",
      ratio: { numerator: 11, denominator: 10 }
    })
    expect(multiplierKind(11n * ONE, 10n * ONE)).toBe("dividend")
  })

  it("p or q above 20, or a near miss, is a dividend step", () => {
    expect(multiplierKind(ONE, 21n * ONE)).toBe("dividend")
    expect(multiplierKind(21n * ONE, ONE)).toBe("dividend")
    expect(multiplierKind(ONE, 4_000001000000000000n)).toBe("dividend")
    expect(multiplierKind(ONE, 20n * ONE)).toBe("split")
  })

  it("unchanged or invalid multipliers are not splits", () => {
    expect(multiplierKind(ONE, ONE)).toBe("dividend")
    expect(multiplierKind(0n, ONE)).toBe("dividend")
    expect(multiplierKind(ONE, 0n)).toBe("dividend")
  })
})
