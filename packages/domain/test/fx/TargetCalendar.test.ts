import { describe, expect, it } from "@effect/vitest"
import { addDays, dayOfWeek, isCalendarDate } from "@scaledger/domain/CalendarDates"
import {
  businessDayOnOrBefore,
  businessDaysBetween,
  easterSunday,
  isTargetBusinessDay,
  nextBusinessDay,
  previousBusinessDay,
  targetHoliday
} from "@scaledger/domain/fx/index"

describe("CalendarDates", () => {
  it("accepts real calendar days only", () => {
    expect(isCalendarDate("2025-05-09")).toBe(true)
    expect(isCalendarDate("2024-02-29")).toBe(true)
    expect(isCalendarDate("2025-02-29")).toBe(false)
    expect(isCalendarDate("1900-02-29")).toBe(false)
    expect(isCalendarDate("2000-02-29")).toBe(true)
    expect(isCalendarDate("2025-04-31")).toBe(false)
    expect(isCalendarDate("2025-13-01")).toBe(false)
    expect(isCalendarDate("2025-5-9")).toBe(false)
    expect(isCalendarDate("20250509")).toBe(false)
    expect(isCalendarDate("2025-05-09T00:00:00Z")).toBe(false)
    expect(isCalendarDate(" 2025-05-09")).toBe(false)
  })

  it("does day arithmetic across months, years and leap days", () => {
    expect(addDays("2024-02-28", 1)).toBe("2024-02-29")
    expect(addDays("2024-03-01", -1)).toBe("2024-02-29")
    expect(addDays("1999-12-31", 1)).toBe("2000-01-01")
    expect(addDays("0050-01-01", 1)).toBe("0050-01-02")
    expect(dayOfWeek("2025-05-09")).toBe(5)
    expect(dayOfWeek("2025-05-10")).toBe(6)
    expect(dayOfWeek("1999-01-04")).toBe(1)
  })
})

describe("TargetCalendar", () => {
  it("computes Gregorian Easter", () => {
    const known: Record<number, string> = {
      1818: "1818-03-22",
      1943: "1943-04-25",
      1999: "1999-04-04",
      2000: "2000-04-23",
      2008: "2008-03-23",
      2011: "2011-04-24",
      2019: "2019-04-21",
      2024: "2024-03-31",
      2025: "2025-04-20",
      2026: "2026-04-05",
      2038: "2038-04-25",
      2285: "2285-03-22"
    }
    for (const [year, date] of Object.entries(known)) expect(easterSunday(Number(year))).toBe(date)
  })

  it("closes on weekends and the TARGET holidays", () => {
    expect(isTargetBusinessDay("2025-05-09")).toBe(true)
    expect(isTargetBusinessDay("2025-05-10")).toBe(false)
    expect(isTargetBusinessDay("2025-05-11")).toBe(false)
    expect(targetHoliday("2025-01-01")).toBe("New Year's Day")
    expect(targetHoliday("2025-04-18")).toBe("Good Friday")
    expect(targetHoliday("2025-04-21")).toBe("Easter Monday")
    expect(targetHoliday("2025-05-01")).toBe("Labour Day")
    expect(targetHoliday("2025-12-25")).toBe("Christmas Day")
    expect(targetHoliday("2025-12-26")).toBe("26 December")
    expect(isTargetBusinessDay("2024-12-31")).toBe(true)
    expect(isTargetBusinessDay("2025-04-17")).toBe(true)
    expect(isTargetBusinessDay("2025-04-22")).toBe(true)
  })

  it("keeps the 1999-2001 differences the ECB history shows", () => {
    expect(isTargetBusinessDay("1999-04-02")).toBe(true)
    expect(isTargetBusinessDay("1999-04-05")).toBe(true)
    expect(isTargetBusinessDay("2000-04-21")).toBe(false)
    expect(isTargetBusinessDay("1999-12-31")).toBe(false)
    expect(isTargetBusinessDay("2001-12-31")).toBe(false)
    expect(isTargetBusinessDay("2002-12-31")).toBe(true)
  })

  it("steps to neighbouring business days", () => {
    expect(previousBusinessDay("2025-05-12")).toBe("2025-05-09")
    expect(previousBusinessDay("2025-05-10")).toBe("2025-05-09")
    expect(previousBusinessDay("2025-04-22")).toBe("2025-04-17")
    expect(previousBusinessDay("2025-01-02")).toBe("2024-12-31")
    expect(previousBusinessDay("2024-12-27")).toBe("2024-12-24")
    expect(nextBusinessDay("2025-04-17")).toBe("2025-04-22")
    expect(nextBusinessDay("2025-05-09")).toBe("2025-05-12")
    expect(businessDayOnOrBefore("2025-05-09")).toBe("2025-05-09")
    expect(businessDayOnOrBefore("2025-05-11")).toBe("2025-05-09")
  })

  it("counts business days in (a, b]", () => {
    expect(businessDaysBetween("2025-05-09", "2025-05-09")).toBe(0)
    expect(businessDaysBetween("2025-05-09", "2025-05-11")).toBe(0)
    expect(businessDaysBetween("2025-05-09", "2025-05-12")).toBe(1)
    expect(businessDaysBetween("2025-05-05", "2025-05-09")).toBe(4)
    expect(businessDaysBetween("2025-04-16", "2025-04-23")).toBe(3)
    expect(businessDaysBetween("2025-05-12", "2025-05-09")).toBe(-1)
    expect(businessDaysBetween("2023-12-31", "2024-12-31")).toBe(256) // the 256 rows of 2024 in eurofxref-hist.csv
  })
})
