import { describe, expect, it } from "@effect/vitest"
import {
  CROSS_RATE_SIGNIFICANT_DIGITS,
  derivationOf,
  displayRate,
  divideRates,
  usdCrossRate
} from "@scaledger/domain/fx/index"
import { Option } from "effect"

// Expected values were computed outside this code (Python decimal, 20 significant digits, ROUND_HALF_EVEN) from
// the ECB numbers in eurofxref-hist.csv.
describe("divideRates", () => {
  it("matches hand computation", () => {
    expect(divideRates("0.8477", "1.1252")).toBe("0.75337717739068610025")
    expect(divideRates("163.36", "1.1252")).toBe("145.18307856381087807")
    expect(divideRates("1", "1.1252")).toBe("0.88873089228581585496")
    expect(divideRates("133.73", "1.1789")).toBe("113.43625413521078972")
    expect(divideRates("10.7255", "1.2959")).toBe("8.276487383285747357")
    expect(divideRates("2.601", "1.4688")).toBe("1.7708333333333333333")
    expect(divideRates("1575.72", "1.1252")).toBe("1400.391041592605759")
  })

  it("keeps 20 significant digits and rounds half to even", () => {
    expect(CROSS_RATE_SIGNIFICANT_DIGITS).toBe(20)
    expect(divideRates("1", "3")).toBe("0.33333333333333333333")
    expect(divideRates("2", "3")).toBe("0.66666666666666666667")
    expect(divideRates("1.00000000000000000005", "1")).toBe("1")
    expect(divideRates("1.00000000000000000015", "1")).toBe("1.0000000000000000002")
    expect(divideRates("1.00000000000000000025", "1")).toBe("1.0000000000000000002")
    expect(divideRates("2.00000000000000000005", "2")).toBe("1")
  })

  it("is not fooled by a quotient that truncates onto a midpoint", () => {
    const justAboveMidpoint = `1.00000000000000000005${"0".repeat(45)}1`
    expect(divideRates(justAboveMidpoint, "1")).toBe("1.0000000000000000001")
    expect(divideRates(`3.00000000000000000015${"0".repeat(41)}1`, "3")).toBe("1.0000000000000000001")
  })

  it("never uses exponent notation", () => {
    expect(divideRates("1", "1000000000000")).toBe("0.000000000001")
    expect(divideRates("100000000000000000000000", "1")).toBe("100000000000000000000000")
  })

  it("rejects non-positive rates", () => {
    expect(() => divideRates("0", "1")).toThrow(RangeError)
    expect(() => divideRates("1", "0")).toThrow(RangeError)
    expect(() => divideRates("abc", "1")).toThrow(RangeError)
  })
})

describe("usdCrossRate", () => {
  const may9 = { USD: "1.1252", GBP: "0.8477", JPY: "163.36", SGD: "1.46" }

  it("derives X per USD through EUR", () => {
    expect(usdCrossRate("GBP", may9)).toEqual(Option.some("0.75337717739068610025"))
    expect(usdCrossRate("JPY", may9)).toEqual(Option.some("145.18307856381087807"))
    expect(usdCrossRate("SGD", may9)).toEqual(Option.some("1.2975471027372911482"))
    expect(usdCrossRate("EUR", may9)).toEqual(Option.some("0.88873089228581585496"))
    expect(usdCrossRate("USD", may9)).toEqual(Option.some("1"))
  })

  it("is None when the day lacks USD or the currency", () => {
    expect(usdCrossRate("BRL", may9)).toEqual(Option.none())
    expect(usdCrossRate("GBP", { GBP: "0.8477" })).toEqual(Option.none())
    expect(usdCrossRate("USD", { GBP: "0.8477" })).toEqual(Option.none())
  })

  it("states the derivation", () => {
    expect(derivationOf("SGD")).toBe("cross rate through EUR: (EUR→SGD)/(EUR→USD)")
    expect(derivationOf("EUR")).toBe("cross rate through EUR: 1/(EUR→USD)")
    expect(derivationOf("USD")).toBe("identity: USD per USD = 1")
  })
})

describe("displayRate", () => {
  it("rounds for display only", () => {
    expect(displayRate("0.75337717739068610025")).toBe("0.753377")
    expect(displayRate("1400.391041592605759")).toBe("1400.39")
    expect(displayRate("1")).toBe("1.00000")
    expect(displayRate("145.18307856381087807", 4)).toBe("145.2")
    expect(displayRate("123456789", 4)).toBe("123500000")
  })
})
