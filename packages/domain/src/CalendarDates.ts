/** Calendar dates as `YYYY-MM-DD` strings (proleptic Gregorian, no time zone), and day arithmetic on them. */

const isoDatePattern = /^(\d{4})-(\d{2})-(\d{2})$/

const DAY_MS = 86_400_000

/**
 * True for a real calendar day `YYYY-MM-DD` in years 0001 to 9999 (proleptic Gregorian): the range both
 * PostgreSQL's `date` and JavaScript's `Date` hold. Year 0000 and 2025-02-30 are refused.
 */
export const isCalendarDate = (input: string): boolean => {
  const m = isoDatePattern.exec(input)
  if (m === null) return false
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  // Year 0000 exists in neither PostgreSQL's `date` nor the API's contract.
  if (year < 1 || month < 1 || month > 12 || day < 1) return false
  return day <= daysInMonth(year, month)
}

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Days since 1970-01-01 of a date assumed well-formed (check with `isCalendarDate` first). */
export const toEpochDay = (date: string): number =>
  new Date(0).setUTCFullYear(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS

export const fromEpochDay = (epochDay: number): string => new Date(epochDay * DAY_MS).toISOString().slice(0, 10)

export const addDays = (date: string, days: number): string => fromEpochDay(toEpochDay(date) + days)

/** 0 = Sunday … 6 = Saturday. */
export const dayOfWeek = (date: string): number => (((toEpochDay(date) + 4) % 7) + 7) % 7

/** The UTC calendar date of an instant: `utcDateOf(Date.UTC(2025, 4, 9, 23))` is `"2025-05-09"`. */
export const utcDateOf = (epochMillis: number): string => new Date(epochMillis).toISOString().slice(0, 10)

/** Calendar days from `a` to `b` (negative when `b` is earlier). */
export const daysBetween = (a: string, b: string): number => toEpochDay(b) - toEpochDay(a)
