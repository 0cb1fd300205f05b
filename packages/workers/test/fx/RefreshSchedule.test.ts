import { describe, expect, it } from "@effect/vitest"
import {
  berlinDateOf,
  berlinInstant,
  berlinOffsetMinutes,
  expectedNewestDay,
  nextRefreshAt
} from "@scaledger/workers/fx/index"

const utc = (iso: string) => Date.parse(iso)
const iso = (ms: number) => new Date(ms).toISOString()

describe("Frankfurt time", () => {
  it("switches between CET and CEST at 01:00 UTC on the last Sundays of March and October", () => {
    expect(berlinOffsetMinutes(utc("2025-01-15T12:00:00Z"))).toBe(60)
    expect(berlinOffsetMinutes(utc("2025-07-15T12:00:00Z"))).toBe(120)
    expect(berlinOffsetMinutes(utc("2025-03-30T00:59:59Z"))).toBe(60)
    expect(berlinOffsetMinutes(utc("2025-03-30T01:00:00Z"))).toBe(120)
    expect(berlinOffsetMinutes(utc("2025-10-26T00:59:59Z"))).toBe(120)
    expect(berlinOffsetMinutes(utc("2025-10-26T01:00:00Z"))).toBe(60)
    expect(berlinOffsetMinutes(utc("2024-03-31T01:00:00Z"))).toBe(120)
    expect(berlinOffsetMinutes(utc("2024-10-27T01:00:00Z"))).toBe(60)
  })

  it("gives the Frankfurt date and wall-clock instants", () => {
    expect(berlinDateOf(utc("2025-05-09T22:30:00Z"))).toBe("2025-05-10")
    expect(berlinDateOf(utc("2025-01-09T22:30:00Z"))).toBe("2025-01-09")
    expect(iso(berlinInstant("2025-05-09", 16, 15))).toBe("2025-05-09T14:15:00.000Z")
    expect(iso(berlinInstant("2025-01-09", 16, 15))).toBe("2025-01-09T15:15:00.000Z")
    expect(iso(berlinInstant("2025-03-30", 16, 15))).toBe("2025-03-30T14:15:00.000Z")
    expect(iso(berlinInstant("2025-10-26", 16, 15))).toBe("2025-10-26T15:15:00.000Z")
  })
})

describe("nextRefreshAt", () => {
  it("runs at 16:15 Frankfurt time on the next TARGET business day", () => {
    expect(iso(nextRefreshAt(utc("2025-05-09T10:00:00Z")))).toBe("2025-05-09T14:15:00.000Z")
    expect(iso(nextRefreshAt(utc("2025-05-09T14:15:00Z")))).toBe("2025-05-12T14:15:00.000Z")
    expect(iso(nextRefreshAt(utc("2025-01-02T10:00:00Z")))).toBe("2025-01-02T15:15:00.000Z")
    // Maundy Thursday evening: Good Friday and Easter Monday are skipped.
    expect(iso(nextRefreshAt(utc("2025-04-17T18:00:00Z")))).toBe("2025-04-22T14:15:00.000Z")
    // Across the switch to summer time (Friday 2025-03-28 in CET, Monday 2025-03-31 in CEST).
    expect(iso(nextRefreshAt(utc("2025-03-28T16:00:00Z")))).toBe("2025-03-31T14:15:00.000Z")
    // And back to winter time.
    expect(iso(nextRefreshAt(utc("2025-10-24T15:00:00Z")))).toBe("2025-10-27T15:15:00.000Z")
    // Christmas and New Year.
    expect(iso(nextRefreshAt(utc("2025-12-24T16:00:00Z")))).toBe("2025-12-29T15:15:00.000Z")
    expect(iso(nextRefreshAt(utc("2025-12-31T16:00:00Z")))).toBe("2026-01-02T15:15:00.000Z")
    expect(iso(nextRefreshAt(utc("2025-05-09T10:00:00Z"), { hour: 17, minute: 0 }))).toBe("2025-05-09T15:00:00.000Z")
  })
})

describe("expectedNewestDay", () => {
  it("is today after 16:00 Frankfurt time on a business day, else the business day before", () => {
    expect(expectedNewestDay(utc("2025-05-09T13:59:00Z"))).toBe("2025-05-08")
    expect(expectedNewestDay(utc("2025-05-09T14:00:00Z"))).toBe("2025-05-09")
    expect(expectedNewestDay(utc("2025-05-10T12:00:00Z"))).toBe("2025-05-09")
    expect(expectedNewestDay(utc("2025-05-12T08:00:00Z"))).toBe("2025-05-09")
    expect(expectedNewestDay(utc("2025-04-21T18:00:00Z"))).toBe("2025-04-17")
    expect(expectedNewestDay(utc("2025-01-09T14:30:00Z"))).toBe("2025-01-08")
    expect(expectedNewestDay(utc("2025-01-09T15:00:00Z"))).toBe("2025-01-09")
  })
})
