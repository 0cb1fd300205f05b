import { Schema } from "effect"
import { PageCursor, PageLimitParam } from "./Basic.js"

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
