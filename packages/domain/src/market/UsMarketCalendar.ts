/**
 * The US equity market calendar: NYSE regular sessions in America/New_York.
 *
 * Pure and computed for any year (no hard-coded holiday table beyond the few unscheduled closures that no rule can
 * predict). Regular session 09:30–16:00 New York time, Monday to Friday; early closes at 13:00.
 *
 * Holiday rules (NYSE Rule 7.2 and its published calendars):
 * - New Year's Day (1 January; on a Sunday observed Monday 2 January; on a Saturday not observed at all, because the
 *   Friday before is the last business day of the year).
 * - Martin Luther King Jr. Day (third Monday of January, since 1998), Washington's Birthday (third Monday of
 *   February), Good Friday (two days before Easter Sunday), Memorial Day (last Monday of May), Juneteenth (19 June,
 *   since 2022), Independence Day (4 July), Labor Day (first Monday of September), Thanksgiving (fourth Thursday of
 *   November), Christmas (25 December). A fixed-date holiday on a Saturday is observed the Friday before, on a Sunday
 *   the Monday after.
 * - Early closes (13:00): 3 July when it is a Monday to Thursday (the day before Independence Day), the Friday after
 *   Thanksgiving, and 24 December when it is a weekday that is not itself a holiday.
 *
 * Time zone: US daylight saving time (since 2007 from the second Sunday of March to the first Sunday of November,
 * 1987–2006 from the first Sunday of April to the last Sunday of October), switching at 02:00 local time. Sessions
 * never touch 02:00, so a session's offset is the offset of its date.
 */
import { addDays, dayOfWeek, fromEpochDay, isCalendarDate, toEpochDay } from "../CalendarDates.js"
import { easterSunday } from "../fx/TargetCalendar.js"

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

/** Minutes after local midnight. */
export const REGULAR_OPEN_MINUTES = 9 * 60 + 30
export const REGULAR_CLOSE_MINUTES = 16 * 60
export const EARLY_CLOSE_MINUTES = 13 * 60

/** Market-wide closures no rule predicts (national days of mourning, storms, 11 September 2001). */
const unscheduledClosures: ReadonlyMap<string, string> = new Map([
  ["2001-09-11", "Market closed (11 September attacks)"],
  ["2001-09-12", "Market closed (11 September attacks)"],
  ["2001-09-13", "Market closed (11 September attacks)"],
  ["2001-09-14", "Market closed (11 September attacks)"],
  ["2004-06-11", "National Day of Mourning (Ronald Reagan)"],
  ["2007-01-02", "National Day of Mourning (Gerald Ford)"],
  ["2012-10-29", "Market closed (Hurricane Sandy)"],
  ["2012-10-30", "Market closed (Hurricane Sandy)"],
  ["2018-12-05", "National Day of Mourning (George H. W. Bush)"],
  ["2025-01-09", "National Day of Mourning (Jimmy Carter)"]
])

const pad2 = (n: number): string => String(n).padStart(2, "0")
const isoDate = (year: number, month: number, day: number): string =>
  `${String(year).padStart(4, "0")}-${pad2(month)}-${pad2(day)}`

/** The `n`-th (1-based) given weekday (0 = Sunday) of a month. */
const nthWeekday = (year: number, month: number, weekday: number, n: number): string => {
  const first = isoDate(year, month, 1)
  const offset = (weekday - dayOfWeek(first) + 7) % 7
  return addDays(first, offset + 7 * (n - 1))
}

/** The last given weekday of a month. */
const lastWeekday = (year: number, month: number, weekday: number): string => {
  const nextFirst = month === 12 ? isoDate(year + 1, 1, 1) : isoDate(year, month + 1, 1)
  const last = addDays(nextFirst, -1)
  const back = (dayOfWeek(last) - weekday + 7) % 7
  return addDays(last, -back)
}

/** A fixed-date holiday moved off the weekend: Saturday → the Friday before, Sunday → the Monday after. */
const observed = (date: string): string => {
  const dow = dayOfWeek(date)
  return dow === 6 ? addDays(date, -1) : dow === 0 ? addDays(date, 1) : date
}

/** The NYSE holidays of a year, observed dates, as `YYYY-MM-DD` → name. */
export const nyseHolidays = (year: number): ReadonlyMap<string, string> => {
  const holidays = new Map<string, string>()
  const newYear = isoDate(year, 1, 1)
  // On a Saturday New Year's Day is not observed (the Friday before closes the year).
  if (dayOfWeek(newYear) !== 6) holidays.set(observed(newYear), "New Year's Day")
  if (year >= 1998) holidays.set(nthWeekday(year, 1, 1, 3), "Martin Luther King Jr. Day")
  holidays.set(nthWeekday(year, 2, 1, 3), "Washington's Birthday")
  holidays.set(addDays(easterSunday(year), -2), "Good Friday")
  holidays.set(lastWeekday(year, 5, 1), "Memorial Day")
  if (year >= 2022) holidays.set(observed(isoDate(year, 6, 19)), "Juneteenth National Independence Day")
  holidays.set(observed(isoDate(year, 7, 4)), "Independence Day")
  holidays.set(nthWeekday(year, 9, 1, 1), "Labor Day")
  holidays.set(nthWeekday(year, 11, 4, 4), "Thanksgiving Day")
  holidays.set(observed(isoDate(year, 12, 25)), "Christmas Day")
  return holidays
}

const holidayCache = new Map<number, ReadonlyMap<string, string>>()
const holidaysOf = (year: number): ReadonlyMap<string, string> => {
  let holidays = holidayCache.get(year)
  if (holidays === undefined) {
    holidays = nyseHolidays(year)
    holidayCache.set(year, holidays)
  }
  return holidays
}

/** Why the market is closed on a weekday (`undefined` on trading days and on weekends). */
export const holidayOn = (date: string): string | undefined => {
  const dow = dayOfWeek(date)
  if (dow === 0 || dow === 6) return undefined
  return holidaysOf(Number(date.slice(0, 4))).get(date) ?? unscheduledClosures.get(date)
}

/** True when the market opens on `date`; false for a text that is no calendar date (`2026-13-01`, `2026-02-30`). */
export const isTradingDay = (date: string): boolean => {
  if (!isCalendarDate(date)) return false
  const dow = dayOfWeek(date)
  return dow !== 0 && dow !== 6 && holidayOn(date) === undefined
}

/** True when the trading day `date` closes at 13:00 instead of 16:00. */
export const isEarlyClose = (date: string): boolean => {
  if (!isTradingDay(date)) return false
  const monthDay = date.slice(5)
  const dow = dayOfWeek(date)
  if (monthDay === "07-03") return dow >= 1 && dow <= 4
  if (monthDay === "12-24") return true
  const year = Number(date.slice(0, 4))
  return date === addDays(nthWeekday(year, 11, 4, 4), 1)
}

/** The first and last day of daylight saving time in New York for a year (the days the clocks change). */
const dstBounds = (year: number): { readonly start: string; readonly end: string } =>
  year >= 2007
    ? { start: nthWeekday(year, 3, 0, 2), end: nthWeekday(year, 11, 0, 1) }
    : year >= 1987
    ? { start: nthWeekday(year, 4, 0, 1), end: lastWeekday(year, 10, 0) }
    : { start: lastWeekday(year, 4, 0), end: lastWeekday(year, 10, 0) }

/** UTC offset of New York in minutes (−240 in summer, −300 in winter) at an instant. */
export const newYorkOffsetMinutes = (instant: Date): number => {
  const t = instant.getTime()
  const year = new Date(t - 5 * 60 * MINUTE_MS).getUTCFullYear()
  const { end, start } = dstBounds(year)
  // 02:00 EST = 07:00 UTC (spring forward); 02:00 EDT = 06:00 UTC (fall back).
  const startUtc = toEpochDay(start) * DAY_MS + 7 * 60 * MINUTE_MS
  const endUtc = toEpochDay(end) * DAY_MS + 6 * 60 * MINUTE_MS
  return t >= startUtc && t < endUtc ? -240 : -300
}

/** The New York wall-clock date and minutes after midnight of an instant. */
export const toNewYork = (instant: Date): { readonly date: string; readonly minutes: number } => {
  const local = instant.getTime() + newYorkOffsetMinutes(instant) * MINUTE_MS
  const epochDay = Math.floor(local / DAY_MS)
  return { date: fromEpochDay(epochDay), minutes: (local - epochDay * DAY_MS) / MINUTE_MS }
}

/** The instant of a New York wall-clock time on a date, for times away from the 02:00 switch (all session times). */
export const fromNewYork = (date: string, minutes: number): Date => {
  const { end, start } = dstBounds(Number(date.slice(0, 4)))
  const summer = date >= start && date < end
  const offset = summer ? -240 : -300
  return new Date(toEpochDay(date) * DAY_MS + (minutes - offset) * MINUTE_MS)
}

/** A regular session: open and close instants. */
export interface Session {
  readonly date: string
  readonly open: Date
  readonly close: Date
  readonly earlyClose: boolean
}

/** The regular session of a date, or `undefined` when the market does not open that day. */
export const sessionOn = (date: string): Session | undefined => {
  if (!isTradingDay(date)) return undefined
  const earlyClose = isEarlyClose(date)
  return {
    date,
    open: fromNewYork(date, REGULAR_OPEN_MINUTES),
    close: fromNewYork(date, earlyClose ? EARLY_CLOSE_MINUTES : REGULAR_CLOSE_MINUTES),
    earlyClose
  }
}

/** True during a regular session: open ≤ instant < close. */
export const isOpen = (instant: Date): boolean => {
  const session = sessionOn(toNewYork(instant).date)
  if (session === undefined) return false
  const t = instant.getTime()
  return t >= session.open.getTime() && t < session.close.getTime()
}

// A search bound: the longest run of closed days on record is well under a month (September 2001: 6 days).
const SEARCH_DAYS = 40

/** The session in progress at an instant, or the last one that ended at or before it. */
export const lastSessionAtOrBefore = (instant: Date): Session => {
  const t = instant.getTime()
  let date = toNewYork(instant).date
  for (let i = 0; i < SEARCH_DAYS; i++, date = addDays(date, -1)) {
    const session = sessionOn(date)
    if (session !== undefined && session.open.getTime() <= t) return session
  }
  throw new Error(`no US market session in the ${SEARCH_DAYS} days before ${instant.toISOString()}`)
}

/**
 * The latest regular close at or before an instant: on a Saturday, Friday's close; during a session, the previous
 * session's close; exactly at a close, that close.
 */
export const lastCloseBefore = (instant: Date): Date => {
  const t = instant.getTime()
  let date = toNewYork(instant).date
  for (let i = 0; i < SEARCH_DAYS; i++, date = addDays(date, -1)) {
    const session = sessionOn(date)
    if (session !== undefined && session.close.getTime() <= t) return session.close
  }
  throw new Error(`no US market close in the ${SEARCH_DAYS} days before ${instant.toISOString()}`)
}

/** The next session at or after an instant whose open is at or after it (not the session in progress). */
export const nextSessionAfter = (instant: Date): Session => {
  const t = instant.getTime()
  let date = toNewYork(instant).date
  for (let i = 0; i < SEARCH_DAYS; i++, date = addDays(date, 1)) {
    const session = sessionOn(date)
    if (session !== undefined && session.open.getTime() >= t) return session
  }
  throw new Error(`no US market session in the ${SEARCH_DAYS} days after ${instant.toISOString()}`)
}

/**
 * The next regular open at or after an instant: on a Saturday, Monday's open (or Tuesday's after a Monday
 * holiday); during a session, the next session's open; exactly at an open, that open.
 */
export const nextOpen = (instant: Date): Date => nextSessionAfter(instant).open
