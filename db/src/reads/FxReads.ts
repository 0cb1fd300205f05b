import { utcDateOf } from "@scaledger/domain/CalendarDates"
import { InvalidDate, NotFound, ServiceUnavailable, UnsupportedCurrency } from "@scaledger/domain/Errors"
import { publicationDueDay, quoteFromDay, staleness, validateQuoteRequest } from "@scaledger/domain/fx/Quote"
import type { FxRequestError } from "@scaledger/domain/fx/QuoteErrors"
import { businessDaysBetween } from "@scaledger/domain/fx/TargetCalendar"
import type { ExchangeRateQuote } from "@scaledger/domain/FxApi"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Clock, Effect, Either, Option } from "effect"
import { FxRates } from "../FxRates.js"

const requestError = (error: FxRequestError) => {
  switch (error._tag) {
    case "UnsupportedQuoteCurrency":
      return new UnsupportedCurrency({
        message: `${
          shownValue(error.currency)
        } is not a supported currency: use USD or one of the 20 ECB reference currencies.`,
        details: { currency: shownValue(error.currency), supported: error.supported }
      })
    case "MalformedDate":
      return new InvalidDate({
        message: `${JSON.stringify(shownValue(error.input))} is not a calendar date; expected YYYY-MM-DD.`,
        details: { date: shownValue(error.input), reason: "malformed" }
      })
    case "DateBeforeHistory":
      return new InvalidDate({
        message: `${error.date} is before the first ECB reference rates (${error.earliest}).`,
        details: { date: error.date, reason: "before_history", earliest: error.earliest }
      })
    case "DateInFuture":
      return new InvalidDate({
        message: `${error.date} is in the future (today is ${error.today}, UTC).`,
        details: { date: error.date, reason: "in_future", today: error.today }
      })
  }
}

/**
 * The exchange-rate read behind `GET /v1/fx/{currency}/{date}` and the MCP tool `get_exchange_rate_on`: the ECB
 * reference rate of a currency per 1 USD on a date, carried forward over non-business days.
 */
export class FxReads extends Effect.Service<FxReads>()("@scaledger/db/FxReads", {
  effect: Effect.gen(function*() {
    const rates = yield* FxRates

    const quote = Effect.fn("FxReads.quote")(function*(currency: string, date: string) {
      const now = yield* Clock.currentTimeMillis
      const today = utcDateOf(now)
      const valid = yield* Either.mapLeft(validateQuoteRequest({ currency, date, today }), requestError)
      const day = yield* rates.latestWith(valid.quote, valid.date)
      const found = quoteFromDay(valid, day)
      if (Either.isLeft(found)) {
        const first = yield* rates.earliestWith(valid.quote)
        if (Option.isNone(first)) {
          return yield* new ServiceUnavailable({
            message: "The exchange rates are not loaded yet; retry later.",
            details: { reason: "rates_not_loaded" }
          })
        }
        return yield* new NotFound({
          message: `No ECB rate for ${valid.quote} on or before ${valid.date}: the ECB reference rates include ` +
            `${valid.quote} from ${first.value}.`,
          details: { quote: valid.quote, date: valid.date, firstAvailable: first.value }
        })
      }
      const newest = yield* rates.newestDay()
      // Stale only when a TARGET business day the store lacks lies between the newest stored day and the date.
      const stale = staleness(newest, publicationDueDay(now)).stale &&
        Option.match(newest, { onNone: () => true, onSome: (day) => businessDaysBetween(day, valid.date) > 0 })
      const answer: ExchangeRateQuote = { ...found.right, stale }
      return answer
    })

    return { quote } as const
  }),
  dependencies: [FxRates.Default]
}) {}
