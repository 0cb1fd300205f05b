import { Schema } from "effect"

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

export const PageLimit = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.between(1, 500),
  Schema.annotations({ description: "Page size, 1 to 500 (default 50)." })
)

/** `limit` and `cursor` of every list (DECISIONS.md: default 50, max 500, opaque cursor, `nextCursor` null at the end). */
export const PageParams = {
  limit: Schema.optional(PageLimit),
  cursor: Schema.optional(
    Schema.String.annotations({ description: "Opaque cursor from a previous page's `nextCursor`." })
  )
}

export const DEFAULT_PAGE_LIMIT = 50
