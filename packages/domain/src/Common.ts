import { Schema } from "effect"
import { PageCursor, PageLimitParam } from "./Basic.js"

/** A calendar date, `YYYY-MM-DD` (the UTC day an event happened on chain). */
export const IsoDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/),
  Schema.annotations({ identifier: "IsoDate", description: "A calendar date, YYYY-MM-DD.", examples: ["2026-08-14"] })
)

/** An instant, ISO 8601 in UTC. */
export const IsoDateTime = Schema.String.annotations({
  identifier: "IsoDateTime",
  description: "An instant, ISO 8601 in UTC.",
  examples: ["2026-08-14T15:12:46.000Z"]
})

/** An amount as a decimal string: never a float. */
export const DecimalString = Schema.String.pipe(
  Schema.pattern(/^-?\d+(\.\d+)?$/),
  Schema.annotations({
    identifier: "DecimalString",
    description: "A decimal number as a string.",
    examples: ["1.000566080061092436"]
  })
)

/** Rejects fields the contract does not name (400 `invalid_request`). */
export const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** Page size, 1 to 500 (an integer in the query string). */
export const PageLimit = PageLimitParam

/** `limit` and `cursor` of every list (DECISIONS.md: default 50, max 500, opaque cursor, `nextCursor` null at the end). */
export const PageParams = {
  limit: Schema.optional(PageLimit),
  cursor: Schema.optional(PageCursor)
}

export const DEFAULT_PAGE_LIMIT = 50
