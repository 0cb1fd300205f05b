import { addDays } from "../CalendarDates.js"
import { sessionOn, toNewYork } from "../market/UsMarketCalendar.js"

const MINUTE_MS = 60_000

/**
 * Minutes of regular US sessions (NYSE calendar: 09:30–16:00 New York, early closes, holidays) between two
 * instants. Counting stops once `cap` minutes are reached: a feed silent for longer is stale either way.
 */
export const sessionMinutesBetween = (from: Date, to: Date, cap = 100_000): number => {
  if (to.getTime() <= from.getTime()) return 0
  let minutes = 0
  const last = toNewYork(to).date
  for (let date = toNewYork(from).date; date <= last && minutes < cap; date = addDays(date, 1)) {
    const session = sessionOn(date)
    if (session === undefined) continue
    const start = Math.max(session.open.getTime(), from.getTime())
    const end = Math.min(session.close.getTime(), to.getTime())
    if (end > start) minutes += (end - start) / MINUTE_MS
  }
  return Math.floor(minutes)
}

/** `oracle-paused`: a feed that gave no new round for `staleMinutes` of regular US session time. */
export const isFeedStale = (lastRoundAt: Date, now: Date, staleMinutes: number): boolean =>
  sessionMinutesBetween(lastRoundAt, now, staleMinutes) >= staleMinutes

/**
 * The instant a feed whose newest round is `lastRoundAt` turns stale: when `staleMinutes` of regular US session time
 * have passed since it (undefined when no such instant lies within `horizonDays`).
 */
export const feedStaleAt = (lastRoundAt: Date, staleMinutes: number, horizonDays = 31): Date | undefined => {
  let minutes = 0
  let date = toNewYork(lastRoundAt).date
  for (let day = 0; day <= horizonDays; day++, date = addDays(date, 1)) {
    const session = sessionOn(date)
    if (session === undefined) continue
    const start = Math.max(session.open.getTime(), lastRoundAt.getTime())
    const end = session.close.getTime()
    if (end <= start) continue
    const available = (end - start) / MINUTE_MS
    if (minutes + available >= staleMinutes) return new Date(start + (staleMinutes - minutes) * MINUTE_MS)
    minutes += available
  }
  return undefined
}
