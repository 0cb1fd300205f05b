/**
 * Fixed-point integers and UTC calendar dates: the exact arithmetic the ledger runs on.
 *
 * Raw token quantities, multipliers and money are `bigint`s with 18 implied decimals ("wad"); feed answers have 8.
 * A product of two fixed-point numbers is exact; the ledger rounds once, half to even, when it scales back to 18
 * decimals.
 */

export const WAD = 10n ** 18n
export const PRICE_SCALE = 10n ** 8n

/** `n / d` rounded half to even; `d` must be positive. */
export const divRound = (n: bigint, d: bigint): bigint => {
  // Truncated quotient and remainder (the remainder has the sign of `n`): the fewest bigints made per call, and
  // none beyond the quotient when the division is exact, as it mostly is.
  const q = n / d
  const r = n % d
  if (r === 0n) return q
  const twice = r < 0n ? -(r + r) : r + r
  if (twice < d || (twice === d && (q & 1n) === 0n)) return q
  return n < 0n ? q - 1n : q + 1n
}

/** The decimal string of a fixed-point integer with `decimals` implied decimals, trailing zeros removed. */
export const formatFixed = (value: bigint, decimals: number): string => {
  const negative = value < 0n
  const digits = (negative ? -value : value).toString()
  let text: string
  if (decimals === 0) {
    text = digits
  } else {
    const padded = digits.length <= decimals ? "0".repeat(decimals - digits.length + 1) + digits : digits
    const whole = padded.slice(0, padded.length - decimals)
    let fraction = padded.slice(padded.length - decimals)
    let end = fraction.length
    while (end > 0 && fraction.charCodeAt(end - 1) === 48) end--
    fraction = fraction.slice(0, end)
    text = fraction.length > 0 ? `${whole}.${fraction}` : whole
  }
  return negative && text !== "0" ? `-${text}` : text
}

/** 18-decimal fixed point as a decimal string: raw token units, multipliers, USD amounts. */
export const formatWad = (value: bigint): string => formatFixed(value, 18)

/** Parses a decimal string ("12.5", "-3") into fixed point with `decimals` places; more places than that throw. */
export const parseFixed = (text: string, decimals: number): bigint => {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text)
  if (match === null) throw new Error(`not a decimal: ${text}`)
  const fraction = match[3] ?? ""
  if (fraction.length > decimals) throw new Error(`more than ${decimals} decimals: ${text}`)
  const value = BigInt(match[2]! + fraction.padEnd(decimals, "0"))
  return match[1] === "-" ? -value : value
}

// ---------------------------------------------------------------------------------------------------------------
// UTC dates without Date objects (days-from-civil, H. Hinnant), fast enough to call once per event.

const SECONDS_PER_DAY = 86_400

export interface CivilDate {
  readonly year: number
  readonly month: number
  readonly day: number
}

export const civilFromDays = (days: number): CivilDate => {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  return { year, month, day }
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`)

export const formatCivil = (date: CivilDate): string =>
  `${String(date.year).padStart(4, "0")}-${pad2(date.month)}-${pad2(date.day)}`

const dateCache = new Map<number, string>()

/** The UTC calendar date (`YYYY-MM-DD`) of a unix time in seconds. */
export const utcDate = (unixSeconds: number): string => {
  const days = Math.floor(unixSeconds / SECONDS_PER_DAY)
  let text = dateCache.get(days)
  if (text === undefined) {
    if (dateCache.size > 100_000) dateCache.clear()
    text = formatCivil(civilFromDays(days))
    dateCache.set(days, text)
  }
  return text
}

/** The UTC calendar year of a unix time in seconds. */
export const utcYear = (unixSeconds: number): number => civilFromDays(Math.floor(unixSeconds / SECONDS_PER_DAY)).year

export const parseCivil = (date: string): CivilDate => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (match === null) throw new Error(`not a YYYY-MM-DD date: ${date}`)
  return { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) }
}

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

export const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!

/** Unix seconds of 00:00:00 UTC on a calendar date. */
export const unixOfCivil = (date: CivilDate): number => {
  const y = date.month <= 2 ? date.year - 1 : date.year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = date.month > 2 ? date.month - 3 : date.month + 9
  const doy = Math.floor((153 * mp + 2) / 5) + date.day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return (era * 146_097 + doe - 719_468) * SECONDS_PER_DAY
}
