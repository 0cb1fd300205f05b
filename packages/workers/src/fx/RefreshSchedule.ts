import { addDays, utcDateOf } from "@scaledger/domain/CalendarDates"
import { isTargetBusinessDay, previousBusinessDay } from "@scaledger/domain/fx/TargetCalendar"

/**
 * Frankfurt time (Europe/Berlin) without a time-zone database: CET (UTC+1), and CEST (UTC+2) from 01:00 UTC on the
 * last Sunday of March to 01:00 UTC on the last Sunday of October (the EU rule since 1996).
 */
export const berlinOffsetMinutes = (epochMillis: number): number => {
  const year = new Date(epochMillis).getUTCFullYear()
  const lastSundayUtc = (month: number) => {
    const lastDay = new Date(Date.UTC(year, month + 1, 0))
    return Date.UTC(year, month, lastDay.getUTCDate() - lastDay.getUTCDay(), 1)
  }
  return epochMillis >= lastSundayUtc(2) && epochMillis < lastSundayUtc(9) ? 120 : 60
}

/** The calendar date in Frankfurt at an instant. */
export const berlinDateOf = (epochMillis: number): string =>
  utcDateOf(epochMillis + berlinOffsetMinutes(epochMillis) * 60_000)

/** The instant of a Frankfurt wall-clock time (any time after 03:00, where the offset is unambiguous). */
export const berlinInstant = (date: string, hour: number, minute: number): number => {
  const wall = Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)), hour, minute)
  return wall - berlinOffsetMinutes(wall - 60 * 60_000) * 60_000
}

export interface TimeOfDay {
  readonly hour: number
  readonly minute: number
}

/** The ECB publishes around 16:00 Frankfurt time; the refresh runs a little after. */
export const DEFAULT_REFRESH_TIME: TimeOfDay = { hour: 16, minute: 15 }

/** The next refresh instant strictly after `nowMillis`: `at` Frankfurt time on the next TARGET business day. */
export const nextRefreshAt = (nowMillis: number, at: TimeOfDay = DEFAULT_REFRESH_TIME): number => {
  let date = berlinDateOf(nowMillis)
  for (;;) {
    if (isTargetBusinessDay(date)) {
      const instant = berlinInstant(date, at.hour, at.minute)
      if (instant > nowMillis) return instant
    }
    date = addDays(date, 1)
  }
}

/**
 * The newest publication day that should exist at `nowMillis`: today (Frankfurt) once `publishedBy` has passed on a
 * TARGET business day, else the business day before.
 */
export const expectedNewestDay = (nowMillis: number, publishedBy: TimeOfDay = { hour: 16, minute: 0 }): string => {
  const today = berlinDateOf(nowMillis)
  return isTargetBusinessDay(today) && nowMillis >= berlinInstant(today, publishedBy.hour, publishedBy.minute)
    ? today
    : previousBusinessDay(today)
}
