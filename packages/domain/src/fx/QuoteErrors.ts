import { Schema } from "effect"

/** The code is not USD or one of the 20 reference currencies (`400 unsupported_currency` with the list). */
export class UnsupportedQuoteCurrency
  extends Schema.TaggedError<UnsupportedQuoteCurrency>()("UnsupportedQuoteCurrency", {
    currency: Schema.String,
    supported: Schema.Array(Schema.String)
  })
{
  override get message(): string {
    return `Unsupported currency ${JSON.stringify(this.currency)}; supported: ${this.supported.join(", ")}`
  }
}

/** The date is not a real calendar day written `YYYY-MM-DD`. */
export class MalformedDate extends Schema.TaggedError<MalformedDate>()("MalformedDate", {
  input: Schema.String
}) {
  override get message(): string {
    return `Malformed date ${JSON.stringify(this.input)}; expected a calendar date YYYY-MM-DD`
  }
}

/** The date is after `today`. */
export class DateInFuture extends Schema.TaggedError<DateInFuture>()("DateInFuture", {
  date: Schema.String,
  today: Schema.String
}) {
  override get message(): string {
    return `Date ${this.date} is in the future (today is ${this.today})`
  }
}

/** The date is before the first ECB publication (1999-01-04). */
export class DateBeforeHistory extends Schema.TaggedError<DateBeforeHistory>()("DateBeforeHistory", {
  date: Schema.String,
  earliest: Schema.String
}) {
  override get message(): string {
    return `Date ${this.date} is before the first ECB reference rates (${this.earliest})`
  }
}

/**
 * No stored publication day on or before `date` has both USD and the currency: the currency was not yet in the
 * ECB set (CNY before 2005-04-01, MXN and BRL before 2008-01-02, INR before 2009-01-02), or the store lacks the days.
 */
export class RateUnavailable extends Schema.TaggedError<RateUnavailable>()("RateUnavailable", {
  quote: Schema.String,
  date: Schema.String
}) {
  override get message(): string {
    return `No ECB rate for ${this.quote} per USD on or before ${this.date}`
  }
}

export type FxRequestError = UnsupportedQuoteCurrency | MalformedDate | DateInFuture | DateBeforeHistory
export type FxQuoteError = FxRequestError | RateUnavailable

/** The store could not be read or written (the database implementation wraps its own error in `cause`). */
export class FxStoreError extends Schema.TaggedError<FxStoreError>()("FxStoreError", {
  operation: Schema.String,
  cause: Schema.Defect
}) {}
