import { Schema } from "effect"

/** Events must come in (block, logIndex) order; equal positions only for multiplier changes or the same log twice. */
export class LedgerEventsOutOfOrder extends Schema.TaggedError<LedgerEventsOutOfOrder>()("LedgerEventsOutOfOrder", {
  eventId: Schema.String,
  block: Schema.Number,
  logIndex: Schema.Number,
  previousEventId: Schema.String,
  previousBlock: Schema.Number,
  previousLogIndex: Schema.Number
}) {
  override get message(): string {
    return `event ${this.eventId} at (${this.block}, ${this.logIndex}) comes after ${this.previousEventId} at ` +
      `(${this.previousBlock}, ${this.previousLogIndex})`
  }
}

/** An event the ledger cannot use as given (a malformed number, two different logs at one position, ...). */
export class LedgerInvalidEvent extends Schema.TaggedError<LedgerInvalidEvent>()("LedgerInvalidEvent", {
  eventId: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `event ${this.eventId}: ${this.reason}`
  }
}

/** Settings the ledger cannot use (unsorted price rounds, a bad rate, ...). */
export class LedgerInvalidSettings extends Schema.TaggedError<LedgerInvalidSettings>()("LedgerInvalidSettings", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

export type LedgerError = LedgerEventsOutOfOrder | LedgerInvalidEvent | LedgerInvalidSettings
