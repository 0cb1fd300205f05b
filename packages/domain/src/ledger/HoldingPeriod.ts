import { daysInMonth, formatCivil, parseCivil } from "./Fixed.js"

export type HoldingPeriod = "short" | "long"

/**
 * The last day on which a disposal is still short-term: the end of one year of holding under the US calendar rule.
 *
 * IRS Pub. 550: start counting on the day after the acquisition, and the day of disposal counts; long-term means held
 * more than one year. The year is counted in calendar months, each holding month starting on the same numbered day
 * as the first; when the asset was acquired on the last day of a month, a holding month ends on the last day of a
 * month (Rev. Rul. 66-7). So one year of holding ends on the same calendar date a year later, except that an asset
 * acquired on the last day of a month completes its year on the last day of that month a year later:
 *
 *   2025-01-01 → 2026-01-01     2024-02-29 → 2025-02-28     2023-02-28 → 2024-02-29     2024-02-28 → 2025-02-28
 */
export const oneYearHeldOn = (acquired: string): string => {
  const { day, month, year } = parseCivil(acquired)
  const lastOfMonth = day === daysInMonth(year, month)
  const endDay = lastOfMonth ? daysInMonth(year + 1, month) : day
  return formatCivil({ year: year + 1, month, day: endDay })
}

const oneYearCache = new Map<string, string>()

/** `long` iff the disposal date is after the day one year of holding is complete (so: held more than one year). */
export const holdingPeriod = (acquired: string, disposed: string): HoldingPeriod => {
  let end = oneYearCache.get(acquired)
  if (end === undefined) {
    if (oneYearCache.size > 100_000) oneYearCache.clear()
    end = oneYearHeldOn(acquired)
    oneYearCache.set(acquired, end)
  }
  return disposed > end ? "long" : "short"
}
