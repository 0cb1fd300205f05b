import { Effect, Either } from "effect"
import { decodePageCursor, encodePageCursor } from "./Basic.js"
import { InvalidRequest } from "./Errors.js"

/** Opaque page cursors: base64url of `<kind>:<position>`, so a cursor of one list is refused by another. */
export const encodeCursor = (kind: string, position: string): string => encodePageCursor(kind, position)

/** The cursor's position, bounded to PostgreSQL's `bigint`; anything else is `400 invalid_request`. */
export const decodeCursor = (
  kind: string,
  cursor: string | undefined
): Effect.Effect<string | undefined, InvalidRequest> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  return Either.match(decodePageCursor(kind, cursor), {
    onRight: (position) => Effect.succeed(position),
    onLeft: (reason) =>
      Effect.fail(
        new InvalidRequest({
          message: "The cursor is not one this list issued.",
          details: { field: "cursor", reason, issues: [{ path: ["cursor"], message: reason }] }
        })
      )
  })
}
