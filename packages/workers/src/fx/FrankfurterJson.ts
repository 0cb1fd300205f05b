import { isCalendarDate } from "@scaledger/domain/CalendarDates"
import type { DayRates } from "@scaledger/domain/fx/Schemas"
import { Either } from "effect"
import { FxParseError } from "./ProviderErrors.js"
import { rateFromNumber } from "./RateText.js"

const fail = (detail: string) => Either.left(new FxParseError({ format: "frankfurter-json", detail }))

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const checkEnvelope = (body: unknown): Either.Either<Record<string, unknown>, FxParseError> => {
  if (!isRecord(body)) return fail("expected a JSON object")
  if (body["base"] !== "EUR") return fail(`expected base EUR, got ${JSON.stringify(body["base"])}`)
  if (body["amount"] !== 1) return fail(`expected amount 1, got ${JSON.stringify(body["amount"])}`)
  return Either.right(body)
}

const dayRates = (date: unknown, rates: unknown): Either.Either<DayRates, FxParseError> => {
  if (typeof date !== "string" || !isCalendarDate(date)) return fail(`bad date ${JSON.stringify(date)}`)
  if (!isRecord(rates)) return fail(`rates of ${date} is not an object`)
  const perEur: Record<string, string> = {}
  for (const [code, value] of Object.entries(rates)) {
    if (!/^[A-Z]{3}$/.test(code)) return fail(`bad currency ${JSON.stringify(code)} on ${date}`)
    if (code === "EUR") continue
    const rate = rateFromNumber(value)
    if (rate === undefined) return fail(`bad rate ${JSON.stringify(value)} for ${code} on ${date}`)
    perEur[code] = rate
  }
  if (Object.keys(perEur).length === 0) return fail(`no rates on ${date}`)
  return Either.right({ date, perEur })
}

/**
 * `GET /v1/{date}?base=EUR` or `/v1/latest?base=EUR`: `{ amount: 1, base: "EUR", date, rates: { USD: 1.1252, ... } }`.
 * `date` is the publication day served, which is before the requested date on weekends and holidays.
 */
export const parseFrankfurterDay = (body: unknown): Either.Either<DayRates, FxParseError> =>
  Either.flatMap(checkEnvelope(body), (b) => dayRates(b["date"], b["rates"]))

/**
 * `GET /v1/{start}..{end}?base=EUR`:
 * `{ amount: 1, base: "EUR", start_date, end_date, rates: { "2025-05-08": { USD: 1.1297, ... }, ... } }`.
 * Days oldest first; every day must lie within `start_date`..`end_date`.
 */
export const parseFrankfurterRange = (body: unknown): Either.Either<Array<DayRates>, FxParseError> =>
  Either.flatMap(checkEnvelope(body), (b) => {
    const start = b["start_date"]
    const end = b["end_date"]
    if (typeof start !== "string" || !isCalendarDate(start)) return fail(`bad start_date ${JSON.stringify(start)}`)
    if (typeof end !== "string" || !isCalendarDate(end)) return fail(`bad end_date ${JSON.stringify(end)}`)
    if (!isRecord(b["rates"])) return fail("rates is not an object")
    const days: Array<DayRates> = []
    for (const [date, rates] of Object.entries(b["rates"])) {
      const day = dayRates(date, rates)
      if (Either.isLeft(day)) return Either.left(day.left)
      if (date < start || date > end) return fail(`day ${date} outside ${start}..${end}`)
      days.push(day.right)
    }
    days.sort((x, y) => (x.date < y.date ? -1 : 1))
    return Either.right(days)
  })

/** JSON text to a value, as a parse error rather than an exception. */
export const parseJson = (text: string): Either.Either<unknown, FxParseError> => {
  try {
    return Either.right(JSON.parse(text) as unknown)
  } catch (e) {
    return fail(`not JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
}
