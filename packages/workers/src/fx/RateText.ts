const decimalPattern = /^(\d+)(?:\.(\d+))?$/
const canonicalPattern = /^(?:0\.\d*[1-9]|[1-9]\d*(?:\.\d*[1-9])?)$/

/**
 * A rate as the ECB wrote it, in canonical form (no leading zeros in the integer part, no trailing zeros in the
 * fraction) so every provider stores the same string; `undefined` unless it is a positive decimal.
 */
export const canonicalRate = (text: string): string | undefined => {
  if (canonicalPattern.test(text)) return text
  const m = decimalPattern.exec(text)
  if (m === null) return undefined
  const integer = m[1]!.replace(/^0+(?=\d)/, "")
  const fraction = (m[2] ?? "").replace(/0+$/, "")
  if (integer === "0" && fraction === "") return undefined
  return fraction === "" ? integer : `${integer}.${fraction}`
}

/**
 * A JSON number from a mirror as a decimal string. The ECB's rates have at most 6 significant digits, which a
 * double and its shortest round-trip rendering (`String(n)`) reproduce exactly.
 */
export const rateFromNumber = (n: unknown): string | undefined => {
  if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) return undefined
  const text = String(n)
  return canonicalRate(text.includes("e") ? expandExponent(text) : text)
}

/** `1.5e-7` → `0.00000015`, `1e+21` → `1000000000000000000000` (the shortest round-trip digits, shifted). */
const expandExponent = (text: string): string => {
  const [mantissa, exponentText] = text.split("e") as [string, string]
  const exponent = Number(exponentText)
  const [intPart, fracPart = ""] = mantissa.split(".") as [string, string?]
  const digits = intPart + fracPart
  const point = intPart.length + exponent
  if (point <= 0) return `0.${"0".repeat(-point)}${digits}`
  if (point >= digits.length) return digits + "0".repeat(point - digits.length)
  return `${digits.slice(0, point)}.${digits.slice(point)}`
}
