import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { BasisBodies } from "@scaledger/db/reads/BasisBody"
import { LedgerQueries } from "@scaledger/db/reads/LedgerQueries"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { Portfolio, PositionList } from "@scaledger/domain/LedgerApi"
import { decodeRowCursor, encodeRowCursor } from "@scaledger/domain/PageCursors"
import { Effect, Option } from "effect"
import { makeAnswerCache } from "./AnswerCache.js"
import { orUnavailable } from "./Unavailable.js"

/** The ledger reads: each decodes its parameters, calls `LedgerQueries` (shared with the MCP tools), encodes. */
export const LedgerHandlers = HttpApiBuilder.group(ScaledgerApi, "ledger", (handlers) =>
  Effect.gen(function*() {
    const queries = yield* LedgerQueries
    const basisBodies = yield* BasisBodies
    const answer = yield* makeAnswerCache
    /**
     * An answer computed from a stored build names its own `asOf`; without one it shows the clock. The read is made
     * only when no kept answer serves (nothing of it is built per request otherwise).
     */
    const fromBuild = <A, E, R>(accountId: string, read: () => Effect.Effect<A, E, R>) =>
      Effect.suspend(() =>
        Effect.flatMap(
          queries.settledReport(accountId),
          (report) => Effect.map(read(), (value) => ({ value, cacheable: Option.isSome(report) }))
        )
      )
    return handlers
      .handle("positions", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          if (urlParams.wallet !== undefined) return (yield* queries.positions(account.id, urlParams.wallet)).list
          return yield* answer(
            account.id,
            "positions",
            PositionList,
            fromBuild(account.id, () => Effect.map(queries.positions(account.id), (result) => result.list))
          )
        }).pipe(orUnavailable))
      .handle("basis", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          // Written whole (one snapshot, spooled), then streamed: a long history's record is hundreds of MB.
          const { body, bytes, discard } = yield* basisBodies.basis(account.id, urlParams.token)
          // The request's scope closes once the response is written: the spool's file goes then if the body was
          // never read (a HEAD request, a client gone before it).
          yield* Effect.addFinalizer(() => discard)
          return HttpServerResponse.stream(body, { contentType: "application/json", contentLength: bytes })
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
          const after = yield* decodeRowCursor("events", urlParams.cursor)
          const page = yield* queries.events(account.id, filter, {
            afterOrd: after?.ord,
            afterTag: after?.tag,
            limit: urlParams.limit
          })
          return {
            events: page.events,
            nextCursor: page.hasMore && page.lastOrd !== undefined && page.lastId !== undefined
              ? encodeRowCursor("events", page.lastOrd, page.lastId)
              : null
          }
        }).pipe(orUnavailable))
      .handle("portfolio", () =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* answer(
            account.id,
            "portfolio",
            Portfolio,
            fromBuild(account.id, () => queries.portfolio(account.id))
          )
        }).pipe(orUnavailable))
  }))
