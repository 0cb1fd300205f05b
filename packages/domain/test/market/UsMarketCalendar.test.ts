import { describe, expect, it } from "@effect/vitest"
import {
  fromNewYork,
  holidayOn,
  isEarlyClose,
  isOpen,
  isTradingDay,
  lastCloseBefore,
  newYorkOffsetMinutes,
  nextOpen,
  nyseHolidays,
  sessionOn,
  toNewYork
} from "@scaledger/domain/market/UsMarketCalendar"

const at = (iso: string): Date => new Date(iso)

// Every date below is NYSE's published calendar (DOMAIN.md §5 for 2026 and 2027), not derived from the code.
const holidays2026 = [
  "2026-01-01",
  "2026-01-19",
  "2026-02-16",
  "2026-04-03",
  "2026-05-25",
  "2026-06-19",
  "2026-07-03",
  "2026-09-07",
  "2026-11-26",
  "2026-12-25"
]
const holidays2027 = [
  "2027-01-01",
  "2027-01-18",
  "2027-02-15",
  "2027-03-26",
  "2027-05-31",
  "2027-06-18",
  "2027-07-05",
  "2027-09-06",
  "2027-11-25",
  "2027-12-24"
]

const daysOf = (year: number): Array<string> => {
  const out: Array<string> = []
  for (let d = new Date(Date.UTC(year, 0, 1)); d.getUTCFullYear() === year; d = new Date(d.getTime() + 86_400_000)) {
    out.push(d.toISOString().slice(0, 10))
  }
  return out
}

describe("NYSE holidays", () => {
  it("are exactly DOMAIN.md's 2026 and 2027 lists", () => {
    expect([...nyseHolidays(2026).keys()].sort()).toEqual(holidays2026)
    expect([...nyseHolidays(2027).keys()].sort()).toEqual(holidays2027)
    for (const date of [...holidays2026, ...holidays2027]) {
      expect(isTradingDay(date)).toBe(false)
      expect(holidayOn(date)).toBeTypeOf("string")
      expect(sessionOn(date)).toBeUndefined()
    }
  })

  it("leave 251 trading days in 2026 and in 2027, and the early closes are exactly DOMAIN.md's", () => {
    for (const [year, earlyCloses] of [[2026, ["2026-11-27", "2026-12-24"]], [2027, ["2027-11-26"]]] as const) {
      const days = daysOf(year)
      expect(days.filter(isTradingDay)).toHaveLength(251)
      expect(days.filter(isEarlyClose)).toEqual(earlyCloses)
    }
  })

  it("have no session on a text that is no calendar date", () => {
    // 2026-13-01 would roll over to 2027-01-01 (a holiday) and 2026-02-30 to Monday 2026-03-02 (a trading day).
    for (const text of ["2026-13-01", "2026-02-30", "2026-03-2", "2026-00-10", "not a date", ""]) {
      expect(isTradingDay(text)).toBe(false)
      expect(isEarlyClose(text)).toBe(false)
      expect(sessionOn(text)).toBeUndefined()
    }
  })

  it("observe fixed-date holidays on the Friday before a Saturday and the Monday after a Sunday", () => {
    // 4 July 2020 was a Saturday: closed Friday 3 July. 4 July 2021 a Sunday: closed Monday 5 July.
    expect(holidayOn("2020-07-03")).toBe("Independence Day")
    expect(isTradingDay("2020-07-02")).toBe(true)
    expect(isEarlyClose("2020-07-02")).toBe(false)
    expect(holidayOn("2021-07-05")).toBe("Independence Day")
    expect(isEarlyClose("2021-07-02")).toBe(false)
    // Christmas 2021 on a Saturday: closed Friday 24 December; 2022 on a Sunday: closed Monday 26 December.
    expect(holidayOn("2021-12-24")).toBe("Christmas Day")
    expect(holidayOn("2022-12-26")).toBe("Christmas Day")
    // New Year's Day 2022 on a Saturday is NOT observed on Friday 31 December 2021; 2023 on a Sunday → Monday.
    expect(isTradingDay("2021-12-31")).toBe(true)
    expect(holidayOn("2023-01-02")).toBe("New Year's Day")
    // Juneteenth from 2022 only: 2022 on a Sunday → Monday 20 June; 2021-06-18 was a trading day.
    expect(holidayOn("2022-06-20")).toBe("Juneteenth National Independence Day")
    expect(isTradingDay("2021-06-18")).toBe(true)
  })

  it("put Good Friday two days before Easter in any year", () => {
    expect(holidayOn("2024-03-29")).toBe("Good Friday")
    expect(holidayOn("2025-04-18")).toBe("Good Friday")
    expect(holidayOn("2028-04-14")).toBe("Good Friday")
    expect(holidayOn("2030-04-19")).toBe("Good Friday")
    expect(isTradingDay("2026-04-06")).toBe(true) // Easter Monday is a TARGET holiday, not an NYSE one
  })

  it("know the unscheduled closures and the other early closes", () => {
    expect(holidayOn("2025-01-09")).toContain("Carter")
    expect(holidayOn("2012-10-29")).toContain("Sandy")
    for (const date of ["2025-07-03", "2025-11-28", "2025-12-24", "2024-07-03", "2024-12-24", "2018-12-24"]) {
      expect(isEarlyClose(date)).toBe(true)
    }
    expect(isEarlyClose("2025-12-23")).toBe(false)
    expect(isEarlyClose("2026-12-26")).toBe(false) // a Saturday
  })

  it("count no weekend as a holiday or a trading day", () => {
    expect(holidayOn("2026-07-04")).toBeUndefined()
    expect(isTradingDay("2026-07-04")).toBe(false)
    expect(isTradingDay("2026-11-22")).toBe(false)
  })
})

describe("sessions and instants", () => {
  it("open at 09:30 and close at 16:00 New York time, 13:00 on early closes", () => {
    expect(sessionOn("2026-11-23")).toEqual({
      date: "2026-11-23",
      open: at("2026-11-23T14:30:00Z"),
      close: at("2026-11-23T21:00:00Z"),
      earlyClose: false
    })
    expect(sessionOn("2026-07-06")?.open).toEqual(at("2026-07-06T13:30:00Z"))
    expect(sessionOn("2026-11-27")?.close).toEqual(at("2026-11-27T18:00:00Z"))
    expect(sessionOn("2026-12-24")?.close).toEqual(at("2026-12-24T18:00:00Z"))
  })

  it("isOpen is true from the open (inclusive) to the close (exclusive) on trading days only", () => {
    expect(isOpen(at("2026-11-23T14:29:59.999Z"))).toBe(false)
    expect(isOpen(at("2026-11-23T14:30:00Z"))).toBe(true)
    expect(isOpen(at("2026-11-23T20:59:59.999Z"))).toBe(true)
    expect(isOpen(at("2026-11-23T21:00:00Z"))).toBe(false)
    expect(isOpen(at("2026-11-21T16:00:00Z"))).toBe(false) // Saturday
    expect(isOpen(at("2026-11-26T16:00:00Z"))).toBe(false) // Thanksgiving
    expect(isOpen(at("2026-11-27T17:59:00Z"))).toBe(true) // early close day, 12:59 EST
    expect(isOpen(at("2026-11-27T18:00:00Z"))).toBe(false)
    expect(isOpen(at("2026-04-03T15:00:00Z"))).toBe(false) // Good Friday
  })

  it("lastCloseBefore steps back over weekends, holidays and early closes", () => {
    // Saturday after Thanksgiving: Friday's 13:00 early close.
    expect(lastCloseBefore(at("2026-11-28T12:00:00Z"))).toEqual(at("2026-11-27T18:00:00Z"))
    // Martin Luther King Day (Monday 19 January 2026): Friday 16 January's close.
    expect(lastCloseBefore(at("2026-01-19T17:00:00Z"))).toEqual(at("2026-01-16T21:00:00Z"))
    // During a session: the previous day's close. Exactly at a close: that close.
    expect(lastCloseBefore(at("2026-11-24T15:00:00Z"))).toEqual(at("2026-11-23T21:00:00Z"))
    expect(lastCloseBefore(at("2026-11-24T21:00:00Z"))).toEqual(at("2026-11-24T21:00:00Z"))
    // Across the New Year: 2027-01-01 is a holiday, 31 December 2026 a full session.
    expect(lastCloseBefore(at("2027-01-02T00:00:00Z"))).toEqual(at("2026-12-31T21:00:00Z"))
  })

  it("nextOpen steps forward over weekends and holidays", () => {
    expect(nextOpen(at("2026-01-17T12:00:00Z"))).toEqual(at("2026-01-20T14:30:00Z")) // Sat → Tue after MLK day
    expect(nextOpen(at("2026-04-02T21:00:00Z"))).toEqual(at("2026-04-06T13:30:00Z")) // over Good Friday
    expect(nextOpen(at("2026-11-23T15:00:00Z"))).toEqual(at("2026-11-24T14:30:00Z")) // during a session
    expect(nextOpen(at("2026-11-23T14:30:00Z"))).toEqual(at("2026-11-23T14:30:00Z")) // exactly at an open
    expect(nextOpen(at("2027-12-23T22:00:00Z"))).toEqual(at("2027-12-27T14:30:00Z")) // over Christmas observed
  })

  it("follow DST: sessions keep 09:30 local across the March and November switches", () => {
    // 2026: spring forward Sunday 8 March, fall back Sunday 1 November.
    expect(sessionOn("2026-03-06")?.close).toEqual(at("2026-03-06T21:00:00Z"))
    expect(sessionOn("2026-03-09")?.open).toEqual(at("2026-03-09T13:30:00Z"))
    expect(nextOpen(at("2026-03-07T12:00:00Z"))).toEqual(at("2026-03-09T13:30:00Z"))
    expect(sessionOn("2026-10-30")?.close).toEqual(at("2026-10-30T20:00:00Z"))
    expect(nextOpen(at("2026-10-31T12:00:00Z"))).toEqual(at("2026-11-02T14:30:00Z"))
    expect(lastCloseBefore(at("2026-11-02T12:00:00Z"))).toEqual(at("2026-10-30T20:00:00Z"))
    // The pre-2007 rule: 2006 switched on 2 April and 29 October.
    expect(sessionOn("2006-03-31")?.open).toEqual(at("2006-03-31T14:30:00Z"))
    expect(sessionOn("2006-04-03")?.open).toEqual(at("2006-04-03T13:30:00Z"))
    expect(sessionOn("2006-10-30")?.open).toEqual(at("2006-10-30T14:30:00Z"))
    // The switch instants themselves.
    expect(newYorkOffsetMinutes(at("2026-03-08T06:59:59Z"))).toBe(-300)
    expect(newYorkOffsetMinutes(at("2026-03-08T07:00:00Z"))).toBe(-240)
    expect(newYorkOffsetMinutes(at("2026-11-01T05:59:59Z"))).toBe(-240)
    expect(newYorkOffsetMinutes(at("2026-11-01T06:00:00Z"))).toBe(-300)
  })

  it("agree with the platform's America/New_York time zone data, every 3 hours and 1 minute from 1990 to 2040", () => {
    const fmt = new Intl.DateTimeFormat("en-CA", {
      timeZone: "America/New_York",
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit"
    })
    const step = 3 * 3_600_000 + 60_000 // drifts through every hour and minute of the day
    const mismatches: Array<string> = []
    let checked = 0
    for (let t = Date.UTC(1990, 0, 1); t < Date.UTC(2040, 0, 1); t += step) {
      const parts = Object.fromEntries(fmt.formatToParts(new Date(t)).map((p) => [p.type, p.value]))
      const expected = `${parts.year}-${parts.month}-${parts.day} ${Number(parts.hour) * 60 + Number(parts.minute)}`
      const local = toNewYork(new Date(t))
      if (`${local.date} ${local.minutes}` !== expected) mismatches.push(new Date(t).toISOString())
      checked++
    }
    expect(checked).toBeGreaterThan(140_000)
    expect(mismatches).toEqual([])
    expect(fromNewYork("2031-07-15", 9 * 60 + 30)).toEqual(at("2031-07-15T13:30:00Z"))
  })
})
