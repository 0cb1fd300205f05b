import { HttpApiBuilder } from "@effect/platform"
import { LedgerQueries } from "@scaledger/db/reads/LedgerQueries"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { Effect } from "effect"
import { decodeCursor, encodeCursor } from "./Cursor.js"
import { orUnavailable } from "./Unavailable.js"

/** The ledger reads: each decodes its parameters, calls `LedgerQueries` (shared with the MCP tools), encodes. */
export const LedgerHandlers = HttpApiBuilder.group(ScaledgerApi, "ledger", (handlers) =>
  Effect.gen(function*() {
    const queries = yield* LedgerQueries
    return handlers
      .handle("positions", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return (yield* queries.positions(account.id, urlParams.wallet)).list
        }).pipe(orUnavailable))
      .handle("basis", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* queries.basis(account.id, urlParams.token)
        }).pipe(orUnavailable))
      .handle("events", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const filter = yield* queries.eventFilter({
            token: urlParams.token,
            type: urlParams.type,
            from: urlParams.from,
            to: urlParams.to,
            needsReview: urlParams.needsReview === undefined ? undefined : urlParams.needsReview === "true"
          })
          const afterOrd = yield* decodeCursor("events", urlParams.cursor)
          const page = yield* queries.events(account.id, filter, {
            afterOrd: afterOrd === undefined ? undefined : Number(afterOrd),
            limit: urlParams.limit
          })
          return {
            events: page.events,
            nextCursor: page.hasMore && page.lastOrd !== undefined
              ? encodeCursor("events", String(page.lastOrd))
              : null
          }
        }).pipe(orUnavailable))
      .handle("portfolio", () =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* queries.portfolio(account.id)
        }).pipe(orUnavailable))
  }))
