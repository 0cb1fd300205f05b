import { Effect, Either, Option } from "effect"
import { upperCaseAscii } from "../Basic.js"
import { isCalendarDate } from "../CalendarDates.js"
import { isReportingCurrency, ReportingCurrencies, type ReportingCurrency } from "../Currency.js"
import { derivationOf, inputsNeeded, usdCrossRate } from "./CrossRate.js"
import {
  DateBeforeHistory,
  DateInFuture,
  type FxQuoteError,
  type FxRequestError,
  MalformedDate,
  RateUnavailable,
  UnsupportedQuoteCurrency
} from "./QuoteErrors.js"
import { FIRST_ECB_DAY, type FxQuote, type StoredDay } from "./Schemas.js"
import { businessDaysBetween } from "./TargetCalendar.js"

export interface QuoteRequest {
  /** Currency code as given by the caller; letter case is ignored. */
  readonly currency: string
  /** The requested day, `YYYY-MM-DD`. */
  readonly date: string
  /** Today's date (`YYYY-MM-DD`), supplied by the caller: nothing here reads a clock. */
  readonly today: string
}

export interface ValidQuoteRequest {
  readonly quote: ReportingCurrency
  readonly date: string
}

/**
 * Checks a request in this order: currency, date format, date before 1999-01-04, date after `today`.
 * A date equal to `today` is accepted (it is carried forward until today's rates are published).
 */
export const validateQuoteRequest = (request: QuoteRequest): Either.Either<ValidQuoteRequest, FxRequestError> => {
  const code = upperCaseAscii(request.currency)
  if (!isReportingCurrency(code)) {
    return Either.left(
      new UnsupportedQuoteCurrency({ currency: request.currency, supported: [...ReportingCurrencies] })
    )
  }
  if (!isCalendarDate(request.date)) return Either.left(new MalformedDate({ input: request.date }))
  if (request.date < FIRST_ECB_DAY) {
    return Either.left(new DateBeforeHistory({ date: request.date, earliest: FIRST_ECB_DAY }))
  }
  if (request.date > request.today) return Either.left(new DateInFuture({ date: request.date, today: request.today }))
  return Either.right({ quote: code, date: request.date })
}

/**
 * The quote for a valid request from the day a lookup found: the latest stored publication day on or before the
 * requested date that has both USD and the currency (`None`: `RateUnavailable`).
 */
export const quoteFromDay = (
  request: ValidQuoteRequest,
  day: Option.Option<StoredDay>
): Either.Either<FxQuote, RateUnavailable> => {
  const unavailable = () => new RateUnavailable({ quote: request.quote, date: request.date })
  if (Option.isNone(day) || day.value.date > request.date) return Either.left(unavailable())
  const { date, perEur, source } = day.value
  const rate = usdCrossRate(request.quote, perEur)
  if (Option.isNone(rate)) return Either.left(unavailable())
  const inputs: Record<string, string> = {}
  for (const code of inputsNeeded(request.quote)) inputs[code] = perEur[code]!
  return Either.right({
    quote: request.quote,
    date,
    rate: rate.value,
    source,
    carriedForward: date !== request.date,
    derivation: derivationOf(request.quote),
    perEur: inputs
  })
}

/** The store's read seam: the latest publication day `<= onOrBefore` that has USD and `quote`'s inputs. */
export type DayLookup<E = never, R = never> = (
  quote: ReportingCurrency,
  onOrBefore: string
) => Effect.Effect<Option.Option<StoredDay>, E, R>

/** Validates, looks the day up, and derives the quote. */
export const quoteWith =
  <E, R>(lookup: DayLookup<E, R>) => (request: QuoteRequest): Effect.Effect<FxQuote, FxQuoteError | E, R> =>
    Effect.flatMap(
      validateQuoteRequest(request),
      (valid) => Effect.flatMap(lookup(valid.quote, valid.date), (day) => quoteFromDay(valid, day))
    )

/** An in-memory index of stored days, for tests, caches and embedders. */
export class DayIndex {
  private readonly days: ReadonlyArray<StoredDay>

  private constructor(days: ReadonlyArray<StoredDay>) {
    this.days = days
  }

  /** Later entries for the same date replace earlier ones. */
  static make(days: Iterable<StoredDay>): DayIndex {
    const byDate = new Map<string, StoredDay>()
    for (const day of days) byDate.set(day.date, day)
    return new DayIndex([...byDate.values()].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)))
  }

  /** Every day, oldest first. */
  all(): ReadonlyArray<StoredDay> {
    return this.days
  }

  get size(): number {
    return this.days.length
  }

  get newestDay(): Option.Option<string> {
    return Option.fromNullable(this.days[this.days.length - 1]?.date)
  }

  /** The latest day `<= onOrBefore` that has every code `quote` needs. */
  latestWith(quote: ReportingCurrency, onOrBefore: string): Option.Option<StoredDay> {
    let lo = 0
    let hi = this.days.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.days[mid]!.date <= onOrBefore) lo = mid + 1
      else hi = mid
    }
    const needed = inputsNeeded(quote)
    for (let i = lo - 1; i >= 0; i--) {
      const day = this.days[i]!
      if (needed.every((code) => day.perEur[code] !== undefined)) return Option.some(day)
    }
    return Option.none()
  }

  readonly lookup: DayLookup = (quote, onOrBefore) => Effect.succeed(this.latestWith(quote, onOrBefore))
}

/** `quoteWith` over days held in memory. */
export const quoteFromDays = (
  days: DayIndex | Iterable<StoredDay>,
  request: QuoteRequest
): Either.Either<FxQuote, FxQuoteError> => {
  const index = days instanceof DayIndex ? days : DayIndex.make(days)
  return Either.flatMap(
    validateQuoteRequest(request),
    (valid) => quoteFromDay(valid, index.latestWith(valid.quote, valid.date))
  )
}

/** More TARGET business days than this between the newest stored day and today make the data stale. */
export const STALE_AFTER_BUSINESS_DAYS = 2

export interface Staleness {
  readonly stale: boolean
  readonly newestDay: Option.Option<string>
  /** TARGET business days after the newest stored day, up to and including today. */
  readonly businessDaysBehind: number
}

const berlinClock = new Intl.DateTimeFormat("en-CA", {
  timeZone: "Europe/Berlin",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23"
})

/**
 * The last day whose ECB publication is due at `nowMs`: today in Berlin from 16:15 Berlin time (the ECB publishes
 * around 16:00), the day before until then. Staleness is counted up to it.
 */
export const publicationDueDay = (nowMs: number): string => {
  const parts = Object.fromEntries(berlinClock.formatToParts(new Date(nowMs)).map((p) => [p.type, p.value]))
  const berlinDate = `${parts.year}-${parts.month}-${parts.day}`
  const minutes = Number(parts.hour) * 60 + Number(parts.minute)
  if (minutes >= 16 * 60 + 15) return berlinDate
  const before = new Date(`${berlinDate}T00:00:00Z`)
  before.setUTCDate(before.getUTCDate() - 1)
  return before.toISOString().slice(0, 10)
}

/**
 * Whether the newest stored day is older than expected: more than 2 TARGET business days lie after it, up to and
 * including `today` (pass `publicationDueDay(now)`: a day counts from 16:15 Berlin time on). One missed
 * publication is tolerated, so on a Wednesday after 16:15 a newest day of Monday is fresh and one of the Friday
 * before is stale (before 16:15 that Friday is still fresh). An empty store is stale.
 */
export const staleness = (newestStoredDay: Option.Option<string>, today: string): Staleness =>
  Option.match(newestStoredDay, {
    onNone: () => ({ stale: true, newestDay: Option.none(), businessDaysBehind: Number.POSITIVE_INFINITY }),
    onSome: (newest) => {
      const behind = Math.max(0, businessDaysBetween(newest, today))
      return { stale: behind > STALE_AFTER_BUSINESS_DAYS, newestDay: Option.some(newest), businessDaysBehind: behind }
    }
  })
