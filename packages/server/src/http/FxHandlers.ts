import { HttpApiBuilder } from "@effect/platform"
import { FxRates } from "@scaledger/db/FxRates"
import { InvalidDate, NotFound, ScaledgerApi, ServiceUnavailable, UnsupportedCurrency } from "@scaledger/domain"
import type { FxRequestError } from "@scaledger/domain/fx/FxErrors"
import { utcDateOf } from "@scaledger/domain/fx/IsoDate"
import { quoteFromDay, staleness, validateQuoteRequest } from "@scaledger/domain/fx/Quote"
import { businessDaysBetween } from "@scaledger/domain/fx/TargetCalendar"
import { Clock, Effect, Either, Option } from "effect"
import { orUnavailable } from "./Unavailable.js"

const requestError = (error: FxRequestError) => {
  switch (error._tag) {
    case "UnsupportedCurrency":
      return new UnsupportedCurrency({
        message: `${error.currency} is not a supported currency: use USD or one of the 20 ECB reference currencies.`,
        details: { currency: error.currency, supported: error.supported }
      })
    case "MalformedDate":
      return new InvalidDate({
        message: `${JSON.stringify(error.input)} is not a calendar date; expected YYYY-MM-DD.`,
        details: { date: error.input, reason: "malformed" }
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

export const FxHandlers = HttpApiBuilder.group(ScaledgerApi, "fx", (handlers) =>
  Effect.gen(function*() {
    const rates = yield* FxRates
    return handlers.handle("quote", ({ path }) =>
      Effect.gen(function*() {
        const today = utcDateOf(yield* Clock.currentTimeMillis)
        const valid = yield* Either.mapLeft(
          validateQuoteRequest({ currency: path.currency, date: path.date, today }),
          requestError
        )
        const day = yield* rates.latestWith(valid.quote, valid.date)
        const quote = quoteFromDay(valid, day)
        if (Either.isLeft(quote)) {
          const first = yield* rates.earliestWith(valid.quote)
          if (Option.isNone(first)) {
            return yield* new ServiceUnavailable({ message: "The exchange rates are not loaded yet; retry later." })
          }
          return yield* new NotFound({
            message: `No ECB rate for ${valid.quote} on or before ${valid.date}: the ECB reference rates include ` +
              `${valid.quote} from ${first.value}.`,
            details: { quote: valid.quote, date: valid.date, firstAvailable: first.value }
          })
        }
        const newest = yield* rates.newestDay()
        // Stale only when a TARGET business day the store lacks lies between the newest stored day and the date.
        const stale = staleness(newest, today).stale &&
          Option.match(newest, { onNone: () => true, onSome: (day) => businessDaysBetween(day, valid.date) > 0 })
        return { ...quote.right, stale }
      }).pipe(orUnavailable))
  }))
