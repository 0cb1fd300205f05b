import { Effect } from "effect"
import { isCalendarDate } from "./CalendarDates.js"
import { InvalidDate } from "./Errors.js"
import { shownValue as shown } from "./ShownValue.js"

/** A date a request sent (`YYYY-MM-DD`, or absent), or `400 invalid_date` naming the field. */
export const validDate = (field: string, value: string | undefined): Effect.Effect<string | undefined, InvalidDate> =>
  value === undefined || isCalendarDate(value)
    ? Effect.succeed(value)
    : Effect.fail(
      new InvalidDate({
        message: `${field} must be a date, YYYY-MM-DD: ${shown(value)}`,
        details: { field, reason: "malformed" }
      })
    )

/** An inclusive `from`–`to` range a request sent: each a date or absent, and not `from` after `to`. */
export const validDateRange = (
  fromValue: string | undefined,
  toValue: string | undefined
): Effect.Effect<{ readonly from: string | undefined; readonly to: string | undefined }, InvalidDate> =>
  Effect.gen(function*() {
    const from = yield* validDate("from", fromValue)
    const to = yield* validDate("to", toValue)
    // An empty range is a mistake in the request, not an empty answer.
    if (from !== undefined && to !== undefined && from > to) {
      return yield* new InvalidDate({
        message: `from (${from}) is after to (${to}).`,
        details: { field: "from", reason: "after_to" }
      })
    }
    return { from, to }
  })
