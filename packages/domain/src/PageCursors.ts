import { Context, Effect, Either } from "effect"
import { decodeBase64Url, encodeBase64Url } from "./Base64Url.js"
import { decodePageCursor, encodePageCursor } from "./Basic.js"
import { InvalidRequest } from "./Errors.js"

/** Opaque page cursors: base64url of `<kind>:<position>`, so a cursor of one list is refused by another. */
export const encodeCursor = (kind: string, position: string): string => encodePageCursor(kind, position)

/** The `400 invalid_request` of a cursor the list refuses, with the reason. */
export const invalidCursor = (reason: string): InvalidRequest =>
  new InvalidRequest({
    message: "The cursor is not one this list issued.",
    details: { field: "cursor", reason, issues: [{ path: ["cursor"], message: reason }] }
  })

/** The cursor's position, bounded to PostgreSQL's `bigint`; anything else is `400 invalid_request`. */
export const decodeCursor = (
  kind: string,
  cursor: string | undefined
): Effect.Effect<string | undefined, InvalidRequest> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  return Either.match(decodePageCursor(kind, cursor), {
    onRight: (position) => Effect.succeed(position),
    onLeft: (reason) => Effect.fail(invalidCursor(reason))
  })
}

/**
 * The port of cursors sealed to an account and a list (the server's `PageCursorSeal`), for read services whose
 * REST and MCP answers share one cursor: `seal` hides `position`, any text; `open` gives back the position of a
 * cursor this list issued to this account, and anything else is `400 invalid_request`.
 */
export interface SealedCursorsShape {
  readonly seal: (accountId: string, kind: string, position: string) => string
  readonly open: (
    accountId: string,
    kind: string,
    cursor: string | undefined
  ) => Effect.Effect<string | undefined, InvalidRequest>
}

export class SealedCursors
  extends Context.Tag("@scaledger/domain/PageCursors/SealedCursors")<SealedCursors, SealedCursorsShape>()
{}

/** A short, stable tag of a row's id (FNV-1a, 32 bits, as 8 hex digits): what a cursor checks its row by. */
export const rowTag = (id: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

/** A cursor after the row at `ord` whose id is `id`: `<kind>:<ord>.<tag>`. */
export const encodeRowCursor = (kind: string, ord: number, id: string): string =>
  encodeBase64Url(`${kind}:${ord}.${rowTag(id)}`)

/**
 * A row cursor's position and tag (a cursor of just a position, as issued before tags, has none); anything else is
 * `400 invalid_request`, as `decodeCursor`.
 */
export const decodeRowCursor = (
  kind: string,
  cursor: string | undefined
): Effect.Effect<{ readonly ord: number; readonly tag: string | undefined } | undefined, InvalidRequest> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const decoded = /^[A-Za-z0-9_-]{1,200}={0,2}$/.test(cursor) ? decodeBase64Url(cursor) : ""
  const tagged = new RegExp(`^${kind}:(0|[1-9]\\d{0,14})\\.([0-9a-f]{8})$`).exec(decoded)
  if (tagged !== null) return Effect.succeed({ ord: Number(tagged[1]), tag: tagged[2] })
  return Effect.map(decodeCursor(kind, cursor), (position) => ({ ord: Number(position), tag: undefined }))
}
