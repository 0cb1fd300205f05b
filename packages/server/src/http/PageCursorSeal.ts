import { decodePageCursor, encodePageCursor } from "@scaledger/domain/Basic"
import type { InvalidRequest } from "@scaledger/domain/Errors"
import { invalidCursor, SealedCursors } from "@scaledger/domain/PageCursors"
import { Effect, Either, Layer, Redacted } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { KeyHashSecret } from "../auth/KeyHashSecret.js"

const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * Page cursors sealed with AES-256-GCM under a key derived from the server secret, bound to the account and the
 * list, so a cursor tells nothing of what it points at and no other account or list can use it: the lists whose
 * positions count rows of every account (a wallet's id, an alert's or export's sequence number), and the unlabeled
 * counterparties, whose position is a counterparty of the account. Servers sharing one database share
 * `KEY_HASH_SECRET`, so any of them opens any cursor, also after a restart.
 */
export class PageCursorSeal extends Effect.Service<PageCursorSeal>()("@scaledger/server/PageCursorSeal", {
  effect: Effect.gen(function*() {
    const secret = yield* KeyHashSecret
    const key = Buffer.from(hkdfSync("sha256", Redacted.value(secret), "", "scaledger page cursors", 32))
    const boundTo = (accountId: string, kind: string) => Buffer.from(`${accountId}\n${kind}`, "utf8")

    /** The cursor of the account's list `kind` hiding `text`. */
    const sealText = (accountId: string, kind: string, text: string): string => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(boundTo(accountId, kind))
      const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()])
      return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url")
    }

    /** The text of a cursor this list issued to this account; anything else is `400 invalid_request`. */
    const openText = (
      accountId: string,
      kind: string,
      cursor: string | undefined
    ): Effect.Effect<string | undefined, InvalidRequest> =>
      Effect.suspend(() => {
        if (cursor === undefined) return Effect.succeed(undefined)
        if (!/^[A-Za-z0-9_-]{1,200}={0,2}$/.test(cursor)) return Effect.fail(invalidCursor("not base64url"))
        const bytes = Buffer.from(cursor, "base64url")
        if (bytes.length <= IV_BYTES + TAG_BYTES) return Effect.fail(invalidCursor("not a cursor this service issued"))
        try {
          const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES))
            .setAAD(boundTo(accountId, kind))
            .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
          return Effect.succeed(
            Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()])
              .toString("utf8")
          )
        } catch {
          return Effect.fail(invalidCursor("not a cursor this list issued to this account"))
        }
      })

    /** The cursor after `position` of the account's list `kind`. */
    const seal = (accountId: string, kind: string, position: string): string =>
      sealText(accountId, kind, encodePageCursor(kind, position))

    /** The position of a cursor this list issued to this account; anything else is `400 invalid_request`. */
    const open = (
      accountId: string,
      kind: string,
      cursor: string | undefined
    ): Effect.Effect<string | undefined, InvalidRequest> =>
      Effect.flatMap(openText(accountId, kind, cursor), (plain) =>
        plain === undefined
          ? Effect.succeed(undefined)
          // Sealed: the plain cursor of the list, with the position it names checked as any cursor's.
          : Either.match(decodePageCursor(kind, plain), {
            onLeft: (reason) => Effect.fail(invalidCursor(reason)),
            onRight: (position) => Effect.succeed(position)
          }))

    return { seal, open, sealText, openText } as const
  })
}) {}

/** The domain's `SealedCursors` port, for the read services REST and MCP share. */
export const SealedCursorsLive = Layer.effect(
  SealedCursors,
  Effect.map(PageCursorSeal, (cursors) => ({ seal: cursors.sealText, open: cursors.openText }))
)
