import { InvalidRequest } from "@scaledger/domain"
import { Effect } from "effect"

/** Opaque page cursors: base64url of `<kind>:<position>`, so a cursor of one list is refused by another. */
export const encodeCursor = (kind: string, position: string): string =>
  Buffer.from(`${kind}:${position}`, "utf8").toString("base64url")

export const decodeCursor = (
  kind: string,
  cursor: string | undefined
): Effect.Effect<string | undefined, InvalidRequest> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const decoded = Buffer.from(cursor, "base64url").toString("utf8")
  const prefix = `${kind}:`
  const position = decoded.startsWith(prefix) ? decoded.slice(prefix.length) : ""
  return /^\d+$/.test(position)
    ? Effect.succeed(position)
    : Effect.fail(
      new InvalidRequest({ message: "The cursor is not one this list issued.", details: { field: "cursor" } })
    )
}
