import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import {
  CalendarDate,
  decodePageCursor,
  encodePageCursor,
  FreeTextMax,
  hasControlCharacter,
  IsoDate,
  PageLimitParam,
  SafeText,
  SafeTextMax
} from "../src/Basic.js"
import { isCalendarDate } from "../src/CalendarDates.js"

const accepts = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(input))

describe("shared basic schemas", () => {
  it("SafeText refuses NUL, C0, DEL and C1 controls, accepts other Unicode", () => {
    for (const bad of ["\u0000", "a\u0000", "\u0007", "\t", "\n", "\u007f", "\u0085", "\u009f"]) {
      expect(accepts(SafeText, bad), JSON.stringify(bad)).toBe(false)
      expect(hasControlCharacter(bad)).toBe(true)
    }
    for (const good of ["", "main wallet", "ünïcödé 😀", "\u00a0", "a\u200bb"]) {
      expect(accepts(SafeText, good)).toBe(true)
    }
    expect(accepts(SafeTextMax(3), "abcd")).toBe(false)
  })

  it("FreeTextMax keeps tab and line breaks (labels end up quoted in CSV) and refuses every other control", () => {
    for (const good of ["=SUM(A1),\"x\"\nsecond line", "a\tb", "crlf\r\n"]) {
      expect(accepts(FreeTextMax(200), good), JSON.stringify(good)).toBe(true)
    }
    for (const bad of ["\u0000", "bell\u0007", "\u000b", "\u001b[31m", "\u007f", "\u0085"]) {
      expect(accepts(FreeTextMax(200), bad), JSON.stringify(bad)).toBe(false)
    }
    expect(accepts(FreeTextMax(3), "abcd")).toBe(false)
  })

  it("text with a lone UTF-16 surrogate is refused (it could only be stored changed); pairs are text", () => {
    for (const bad of ["\ud800", "a\udc00b", "\udbff\udbff", "😀".slice(0, 1)]) {
      expect(accepts(SafeText, bad), JSON.stringify(bad)).toBe(false)
      expect(accepts(FreeTextMax(200), bad), JSON.stringify(bad)).toBe(false)
    }
    for (const good of ["😀", "a\ud83d\ude00b"]) {
      expect(accepts(SafeText, good)).toBe(true)
      expect(accepts(FreeTextMax(200), good)).toBe(true)
    }
  })

  it("CalendarDate takes real days in 0001–9999 only", () => {
    for (const good of ["0001-01-01", "9999-12-31", "2024-02-29", "2026-08-14"]) expect(isCalendarDate(good)).toBe(true)
    for (
      const bad of ["0000-01-01", "0000-12-31", "10000-01-01", "2025-02-29", "2025-13-01", "2025-00-10", "2025-1-1", ""]
    ) {
      expect(isCalendarDate(bad), bad).toBe(false)
      expect(accepts(CalendarDate, bad)).toBe(false)
    }
  })

  it("cursors are decoded and bounded to bigint", () => {
    expect(decodePageCursor("wallets", encodePageCursor("wallets", "42"))).toEqual(Either.right("42"))
    expect(decodePageCursor("wallets", encodePageCursor("wallets", "9223372036854775807"))).toEqual(
      Either.right("9223372036854775807")
    )
    for (
      const bad of [
        encodePageCursor("wallets", "9223372036854775808"),
        encodePageCursor("wallets", "9".repeat(40)),
        encodePageCursor("wallets", "007"),
        encodePageCursor("wallets", "-1"),
        encodePageCursor("events", "1"),
        "!!",
        "A".repeat(201)
      ]
    ) expect(Either.isLeft(decodePageCursor("wallets", bad)), bad).toBe(true)
    // The reason tells another list's cursor from something no list issued.
    expect(decodePageCursor("wallets", encodePageCursor("events", "1"))).toEqual(Either.left("issued by another list"))
    expect(decodePageCursor("wallets", "zzz")).toEqual(Either.left("not a cursor this service issued"))
  })

  it("limit is an integer from 1 to 500", () => {
    for (const good of ["1", "50", "500"]) expect(accepts(PageLimitParam, good)).toBe(true)
    for (const bad of ["0", "501", "1.5", "abc", "-1", ""]) expect(accepts(PageLimitParam, bad), bad).toBe(false)
  })
})

describe("IsoDate", () => {
  it("accepts real calendar days only, on decode and on encode (answers carry no impossible dates)", () => {
    expect(Schema.decodeUnknownEither(IsoDate)("2024-02-29")).toEqual(Either.right("2024-02-29"))
    for (const bad of ["2025-02-29", "2025-13-01", "0000-01-01", "2025-5-9", "2025-05-09T00:00:00Z"]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(IsoDate)(bad)), bad).toBe(true)
      expect(Either.isLeft(Schema.encodeEither(IsoDate)(bad)), bad).toBe(true)
    }
  })
})
