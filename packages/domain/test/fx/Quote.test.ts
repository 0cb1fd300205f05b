import { describe, expect, it } from "@effect/vitest"
import { ReferenceCurrencies } from "@scaledger/domain/Currency"
import {
  DateBeforeHistory,
  DateInFuture,
  DayIndex,
  FxQuote,
  FxStore,
  MalformedDate,
  publicationDueDay,
  quoteFromDays,
  quoteWith,
  RateUnavailable,
  staleness,
  type StoredDay,
  UnsupportedQuoteCurrency
} from "@scaledger/domain/fx/index"
import { Effect, Either, Option, Schema } from "effect"
import { readFileSync } from "node:fs"

// The real ECB history, read here with a few lines of code independent of the workers' parser.
const csv = readFileSync(new URL("../../../workers/assets/ecb/eurofxref-hist.csv", import.meta.url), "utf8")
const [headerLine, ...rows] = csv.trim().split("\n")
const header = headerLine!.split(",")
const days: Array<StoredDay> = rows.map((row) => {
  const cells = row.split(",")
  const perEur: Record<string, string> = {}
  header.forEach((code, i) => {
    if (i > 0 && code !== "" && cells[i] !== "N/A") perEur[code] = cells[i]!
  })
  return { date: cells[0]!, perEur, source: "ecb-via-eurofxref" }
})
const index = DayIndex.make(days)
const today = "2025-05-12"

const quote = (currency: string, date: string, t = today) => quoteFromDays(index, { currency, date, today: t })
const right = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got ${JSON.stringify(e.left)}`)
  return e.right
}
const left = <A, E>(e: Either.Either<A, E>): E => {
  if (Either.isRight(e)) throw new Error(`expected Left, got ${JSON.stringify(e.right)}`)
  return e.left
}

describe("quotes on real ECB days", () => {
  it("GBP on 2025-05-09 is 0.8477/1.1252", () => {
    const q = right(quote("GBP", "2025-05-09"))
    expect(q).toEqual({
      quote: "GBP",
      date: "2025-05-09",
      rate: "0.75337717739068610025",
      source: "ecb-via-eurofxref",
      carriedForward: false,
      derivation: "cross rate through EUR: (EUR→GBP)/(EUR→USD)",
      perEur: { GBP: "0.8477", USD: "1.1252" }
    })
    expect(Schema.is(FxQuote)(q)).toBe(true)
  })

  it("JPY, EUR and USD itself", () => {
    expect(right(quote("JPY", "2025-05-09")).rate).toBe("145.18307856381087807")
    expect(right(quote("JPY", "1999-01-04")).rate).toBe("113.43625413521078972")
    expect(right(quote("EUR", "2025-05-09")).rate).toBe("0.88873089228581585496")
    expect(right(quote("EUR", "1999-01-04")).rate).toBe("0.84824836712189329036")
    const usd = right(quote("USD", "2025-05-09"))
    expect(usd.rate).toBe("1")
    expect(usd.derivation).toBe("identity: USD per USD = 1")
    expect(right(quote("sgd", "2025-05-09")).rate).toBe("1.2975471027372911482")
  })

  it("a Saturday returns Friday, carried forward", () => {
    const q = right(quote("GBP", "2025-05-10"))
    expect(q.date).toBe("2025-05-09")
    expect(q.carriedForward).toBe(true)
    expect(q.rate).toBe("0.75337717739068610025")
  })

  it("Good Friday and Easter Monday return Maundy Thursday, carried forward", () => {
    for (const date of ["2025-04-18", "2025-04-19", "2025-04-20", "2025-04-21"]) {
      const q = right(quote("GBP", date))
      expect(q.date).toBe("2025-04-17")
      expect(q.carriedForward).toBe(true)
      expect(q.rate).toBe("0.75592429577464788732")
    }
    expect(right(quote("GBP", "2025-04-22")).carriedForward).toBe(false)
  })

  it("today before publication carries the last day forward", () => {
    const q = right(quote("GBP", "2025-05-12"))
    expect(q.date).toBe("2025-05-09")
    expect(q.carriedForward).toBe(true)
  })

  it("knows which of the 20 were not published in 1999", () => {
    const first = days.find((d) => d.date === "1999-01-04")!
    const missing = ReferenceCurrencies.filter((c) => c !== "EUR" && first.perEur[c] === undefined)
    expect(missing).toEqual(["CNY", "INR", "MXN", "BRL"])
    for (const c of missing) {
      expect(left(quote(c, "1999-01-04"))).toBeInstanceOf(RateUnavailable)
    }
  })

  it("a currency introduced later is quoted from its first day, unavailable before", () => {
    expect(right(quote("CNY", "2005-04-01"))).toMatchObject({ date: "2005-04-01", rate: "8.276487383285747357" })
    expect(left(quote("CNY", "2005-03-31"))).toMatchObject({ _tag: "RateUnavailable", quote: "CNY" })
    expect(right(quote("BRL", "2008-01-02")).rate).toBe("1.7708333333333333333")
    expect(right(quote("MXN", "2008-01-02")).rate).toBe("10.90298202614379085")
    expect(left(quote("BRL", "2007-12-31"))._tag).toBe("RateUnavailable")
    expect(right(quote("INR", "2009-01-02")).rate).toBe("48.409779316313284293")
    // 2009-01-01 is a holiday: the last publication before it (2008-12-31) had no INR yet.
    expect(left(quote("INR", "2009-01-01"))._tag).toBe("RateUnavailable")
    expect(right(quote("INR", "2009-01-03"))).toMatchObject({ date: "2009-01-02", carriedForward: true })
  })

  it("every one of the 20 and USD has a quote on 2025-05-09", () => {
    for (const c of ["USD", ...ReferenceCurrencies]) {
      expect(right(quote(c, "2025-05-09")).carriedForward).toBe(false)
    }
  })
})

describe("request validation", () => {
  it("unsupported currency lists the valid ones", () => {
    const e = left(quote("XAU", "2025-05-09"))
    expect(e).toBeInstanceOf(UnsupportedQuoteCurrency)
    const u = e as UnsupportedQuoteCurrency
    expect(u.supported).toHaveLength(21)
    expect(u.supported).toContain("SGD")
    expect(u.message).toContain("SGD")
    // Published by the ECB but not one of the 20.
    expect(left(quote("HUF", "2025-05-09"))).toBeInstanceOf(UnsupportedQuoteCurrency)
  })

  it("malformed dates", () => {
    for (const d of ["2025-5-9", "2025-02-30", "yesterday", "", "2025-05-09T00:00:00Z"]) {
      expect(left(quote("GBP", d))).toEqual(new MalformedDate({ input: d }))
    }
  })

  it("future dates, relative to the given today", () => {
    expect(left(quote("GBP", "2025-05-13"))).toEqual(new DateInFuture({ date: "2025-05-13", today }))
    expect(Either.isRight(quote("GBP", "2025-05-13", "2025-05-13"))).toBe(true)
  })

  it("dates before 1999-01-04", () => {
    expect(left(quote("GBP", "1999-01-03"))).toEqual(
      new DateBeforeHistory({ date: "1999-01-03", earliest: "1999-01-04" })
    )
    expect(left(quote("GBP", "1998-12-31"))._tag).toBe("DateBeforeHistory")
  })

  it("no stored days is RateUnavailable", () => {
    expect(left(quoteFromDays([], { currency: "GBP", date: "2025-05-09", today }))._tag).toBe("RateUnavailable")
  })
})

describe("quoteWith and FxStore.inMemory", () => {
  it.effect("quotes through a store lookup", () =>
    Effect.gen(function*() {
      const store = yield* FxStore.inMemory()
      expect(yield* store.newestDay()).toEqual(Option.none())
      yield* store.upsert("ecb-via-frankfurter", days.slice(0, 10).map(({ date, perEur }) => ({ date, perEur })))
      expect(yield* store.newestDay()).toEqual(Option.some("2025-05-09"))
      const q = yield* quoteWith(store.latestWith)({ currency: "GBP", date: "2025-05-11", today })
      expect(q).toMatchObject({ date: "2025-05-09", source: "ecb-via-frankfurter", carriedForward: true })
      const e = yield* Effect.flip(quoteWith(store.latestWith)({ currency: "GBP", date: "2020-01-02", today }))
      expect(e._tag).toBe("RateUnavailable")
      yield* store.upsert("ecb-via-eurofxref", [{ date: "2025-05-09", perEur: { USD: "2", GBP: "1" } }])
      const replaced = yield* quoteWith(store.latestWith)({ currency: "GBP", date: "2025-05-09", today })
      expect(replaced).toMatchObject({ rate: "0.5", source: "ecb-via-eurofxref" })
    }))
})

describe("staleness", () => {
  it("is stale after more than 2 TARGET business days", () => {
    // Wednesday 2025-05-14: Monday is fresh, the Friday before is 3 business days behind.
    expect(staleness(Option.some("2025-05-12"), "2025-05-14")).toMatchObject({ stale: false, businessDaysBehind: 2 })
    expect(staleness(Option.some("2025-05-09"), "2025-05-14")).toMatchObject({ stale: true, businessDaysBehind: 3 })
    // Over the weekend Friday's rates stay fresh until Tuesday.
    expect(staleness(Option.some("2025-05-09"), "2025-05-11").stale).toBe(false)
    expect(staleness(Option.some("2025-05-09"), "2025-05-13").stale).toBe(false)
    // Easter: Thursday 2025-04-17 is still fresh on Wednesday 2025-04-23 (Tuesday and Wednesday only).
    expect(staleness(Option.some("2025-04-17"), "2025-04-23")).toMatchObject({ stale: false, businessDaysBehind: 2 })
    expect(staleness(Option.some("2025-04-17"), "2025-04-24").stale).toBe(true)
    expect(staleness(Option.none(), "2025-04-24").stale).toBe(true)
  })

  it("counts a day from 16:15 Berlin time, when its publication is due", () => {
    // Wednesday 2 December 2026 (CET, UTC+1): 16:14 Berlin is 15:14 UTC.
    expect(publicationDueDay(Date.parse("2026-12-02T15:14:00Z"))).toBe("2026-12-01")
    expect(publicationDueDay(Date.parse("2026-12-02T15:15:00Z"))).toBe("2026-12-02")
    // Just after midnight in Berlin, still the evening before in UTC: the Berlin day before is due.
    expect(publicationDueDay(Date.parse("2026-12-01T23:30:00Z"))).toBe("2026-12-01")
    // Summer time (CEST, UTC+2): 16:15 Berlin is 14:15 UTC.
    expect(publicationDueDay(Date.parse("2026-07-01T14:14:00Z"))).toBe("2026-06-30")
    expect(publicationDueDay(Date.parse("2026-07-01T14:15:00Z"))).toBe("2026-07-01")
    // Newest Friday 27 November: on Wednesday morning two publications are due (fresh), after 16:15 three (stale).
    const friday = Option.some("2026-11-27")
    expect(staleness(friday, publicationDueDay(Date.parse("2026-12-02T00:00:00Z"))).stale).toBe(false)
    expect(staleness(friday, publicationDueDay(Date.parse("2026-12-02T15:20:00Z"))).stale).toBe(true)
  })
})
