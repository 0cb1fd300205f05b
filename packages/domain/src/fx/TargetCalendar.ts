/**
 * TARGET (the euro payment system) business days: the days the ECB publishes reference rates.
 *
 * Closed on Saturdays, Sundays, 1 January, Good Friday, Easter Monday, 1 May, 25 and 26 December. The calendar
 * took that shape in 2000; the bundled ECB history shows the two differences before it, which are kept here so the
 * calendar agrees with every publication since 1999-01-04: in 1999 Good Friday and Easter Monday were open (rates
 * were published on 1999-04-02 and 1999-04-05), and 31 December was closed in 1999 and 2001.
 */
import { addDays, dayOfWeek, fromEpochDay, toEpochDay } from "../CalendarDates.js"

/** Easter Sunday of a Gregorian year (anonymous Gregorian computus), as `YYYY-MM-DD`. */
export const easterSunday = (year: number): string => {
  const a = year % 19
  const b = Math.floor(year / 100)
  const c = year % 100
  const d = Math.floor(b / 4)
  const e = b % 4
  const f = Math.floor((b + 8) / 25)
  const g = Math.floor((b - f + 1) / 3)
  const h = (19 * a + b - d - g + 15) % 30
  const i = Math.floor(c / 4)
  const k = c % 4
  const l = (32 + 2 * e + 2 * i - h - k) % 7
  const m = Math.floor((a + 11 * h + 22 * l) / 451)
  const month = Math.floor((h + l - 7 * m + 114) / 31)
  const day = ((h + l - 7 * m + 114) % 31) + 1
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`
}

const specialClosingDays = new Set(["1999-12-31", "2001-12-31"])

/** The TARGET holiday a weekday falls on, if any (`undefined` for business days and for weekends). */
export const targetHoliday = (date: string): string | undefined => {
  const dow = dayOfWeek(date)
  if (dow === 0 || dow === 6) return undefined
  const year = Number(date.slice(0, 4))
  const monthDay = date.slice(5)
  if (monthDay === "01-01") return "New Year's Day"
  if (monthDay === "12-25") return "Christmas Day"
  if (specialClosingDays.has(date)) return "31 December (special closing day)"
  if (year < 2000) return undefined
  if (monthDay === "05-01") return "Labour Day"
  if (monthDay === "12-26") return "26 December"
  const easter = easterSunday(year)
  if (date === addDays(easter, -2)) return "Good Friday"
  if (date === addDays(easter, 1)) return "Easter Monday"
  return undefined
}

export const isTargetBusinessDay = (date: string): boolean => {
  const dow = dayOfWeek(date)
  return dow !== 0 && dow !== 6 && targetHoliday(date) === undefined
}

/** The latest TARGET business day strictly before `date`. */
export const previousBusinessDay = (date: string): string => {
  let day = toEpochDay(date) - 1
  while (!isTargetBusinessDay(fromEpochDay(day))) day--
  return fromEpochDay(day)
}

/** The earliest TARGET business day strictly after `date`. */
export const nextBusinessDay = (date: string): string => {
  let day = toEpochDay(date) + 1
  while (!isTargetBusinessDay(fromEpochDay(day))) day++
  return fromEpochDay(day)
}

/** `date` itself when it is a business day, else the business day before it. */
export const businessDayOnOrBefore = (date: string): string =>
  isTargetBusinessDay(date) ? date : previousBusinessDay(date)

/**
 * TARGET business days `d` with `a < d <= b`: how many publication days came after `a` up to and including `b`.
 * Negative when `b` is before `a` (the same count, with the ends swapped). `businessDaysBetween(d, d) === 0`.
 */
export const businessDaysBetween = (a: string, b: string): number => {
  const from = toEpochDay(a)
  const to = toEpochDay(b)
  if (to < from) return -businessDaysBetween(b, a)
  let count = 0
  for (let day = from + 1; day <= to; day++) if (isTargetBusinessDay(fromEpochDay(day))) count++
  return count
}
