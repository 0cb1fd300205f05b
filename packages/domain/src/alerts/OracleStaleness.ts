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
