import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { divRound } from "../../src/ledger/Fixed.js"

/** Half to even from the definition: the nearer of floor and floor + 1, the even one on a tie. */
const reference = (n: bigint, d: bigint): bigint => {
  let floor = n / d
  if (floor * d > n) floor -= 1n
  const below = n - floor * d
  if (below * 2n < d) return floor
  if (below * 2n > d) return floor + 1n
  return floor % 2n === 0n ? floor : floor + 1n
}

describe("divRound", () => {
  it("rounds half to even, on both sides of zero", () => {
    expect([5n, 15n, 25n, -5n, -15n, -25n].map((n) => divRound(n, 10n))).toEqual([0n, 2n, 2n, 0n, -2n, -2n])
    expect([14n, 16n, -14n, -16n, 20n, -20n, 0n].map((n) => divRound(n, 10n))).toEqual([1n, 2n, -1n, -2n, 2n, -2n, 0n])
  })

  it("agrees with the definition for any numerator and positive divisor", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.oneof(fc.bigInt({ min: 1n, max: 1000n }), fc.constantFrom(10n ** 8n, 10n ** 18n, 10n ** 36n)),
        (n, d) => {
          expect(divRound(n, d)).toBe(reference(n, d))
        }
      ),
      { numRuns: 5000 }
    )
  })

  it("agrees on ties and exact quotients", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.bigInt({ min: 1n, max: 10n ** 18n }),
        (q, h) => {
          const d = h * 2n
          expect(divRound(q * d + h, d)).toBe(reference(q * d + h, d))
          expect(divRound(q * d - h, d)).toBe(reference(q * d - h, d))
          expect(divRound(q * d, d)).toBe(q)
        }
      ),
      { numRuns: 2000 }
    )
  })
})
