import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type ExportRecord, ExportStore } from "@scaledger/db/Exports"
import { WalletsRepo } from "@scaledger/db/Wallets"
import * as Address from "@scaledger/domain/Address"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { DEFAULT_PAGE_LIMIT } from "@scaledger/domain/Common"
import { validDateRange } from "@scaledger/domain/DateInputs"
import { NotFound, UnsupportedFormat } from "@scaledger/domain/Errors"
import { DEFAULT_EXPORT_FORMAT, EXPORT_FORMATS, isExportFormat } from "@scaledger/domain/exports/Formats"
import type { ExportView } from "@scaledger/domain/ExportsApi"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Effect, Either, Option, Stream } from "effect"
import { PageCursorSeal } from "./PageCursorSeal.js"
import { orUnavailable } from "./Unavailable.js"

const CSV = "text/csv; charset=utf-8"

const view = (record: ExportRecord): ExportView => ({
  id: record.id,
  format: record.format,
  fileName: record.fileName,
  from: record.from,
  to: record.to,
  wallet: record.wallet,
  rows: record.rows,
  bytes: record.bytes,
  sha256: record.sha256,
  asOfBlock: record.asOfBlock,
  createdAt: record.createdAt.toISOString()
})

const etagOf = (record: ExportRecord) => `"${record.sha256}"`

/** True when an `If-None-Match` header names this ETag (or is `*`); weak forms compare equal. */
const matches = (header: string | undefined, etag: string): boolean =>
  header !== undefined &&
  header.split(",").map((tag) => tag.trim().replace(/^W\//, "")).some((tag) => tag === "*" || tag === etag)

/**
 * A file's bytes, the connection broken if they fail after the headers went out. The status and the first rows are
 * sent already, and the server would end a failed body like a finished one: the client would hold a truncated file
 * that parses as a whole one. A connection broken before the last chunk is what an HTTP client reports as cut off.
 */
const cutOffOnFailure = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  body: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<Uint8Array, E, R> =>
  Stream.onError(body, () => Effect.sync(() => NodeHttpServerRequest.toIncomingMessage(request).socket?.destroy()))

export const ExportsHandlers = HttpApiBuilder.group(ScaledgerApi, "exports", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ExportStore
    const wallets = yield* WalletsRepo
    const cursors = yield* PageCursorSeal

    return handlers
      .handle("create", ({ payload: body }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const payload = body ?? {}
          const format = payload.format ?? DEFAULT_EXPORT_FORMAT
          if (!isExportFormat(format)) {
            return yield* new UnsupportedFormat({
              message: `Unknown export format ${shownValue(format)}; use one of ${EXPORT_FORMATS.join(", ")}.`,
              details: { format: shownValue(format), supported: EXPORT_FORMATS }
            })
          }
          const { from, to } = yield* validDateRange(payload.from, payload.to)
          let wallet: string | undefined = undefined
          if (payload.wallet !== undefined) {
            const parsed = Address.parseAddress(payload.wallet)
            if (Either.isLeft(parsed)) {
              return yield* Address.invalidAddress(payload.wallet, parsed.left)
            }
            if (Option.isNone(yield* wallets.find(account.id, parsed.right))) {
              return yield* new NotFound({ message: `No watched wallet ${parsed.right}.` })
            }
            wallet = parsed.right
          }
          const started = yield* store.create({ accountId: account.id, format, from, to, wallet })
          const request = yield* HttpServerRequest.HttpServerRequest
          return HttpServerResponse.stream(cutOffOnFailure(request, started.body), {
            contentType: CSV,
            headers: {
              "content-disposition": `attachment; filename="${started.fileName}"`,
              "cache-control": "no-store",
              "scaledger-export-id": started.id
            }
          })
        }).pipe(orUnavailable))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const after = yield* cursors.open(account.id, "exports", urlParams.cursor)
          const page = yield* store.list(account.id, {
            afterSeq: after === undefined ? undefined : Number(after),
            limit: urlParams.limit ?? DEFAULT_PAGE_LIMIT
          })
          const last = page.exports[page.exports.length - 1]
          return {
            exports: page.exports.map(view),
            nextCursor: page.hasMore && last !== undefined
              ? cursors.seal(account.id, "exports", String(last.seq))
              : null
          }
        }).pipe(orUnavailable))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const found = yield* store.find(account.id, path.id)
          if (Option.isNone(found)) return yield* new NotFound({ message: `No export ${shownValue(path.id)}.` })
          const record = found.value
          const request = yield* HttpServerRequest.HttpServerRequest
          const headers = {
            etag: etagOf(record),
            "cache-control": "private, no-cache",
            "scaledger-export-id": record.id
          }
          if (matches(request.headers["if-none-match"], etagOf(record))) {
            return HttpServerResponse.empty({ status: 304, headers })
          }
          return HttpServerResponse.stream(cutOffOnFailure(request, store.bytes(record.id)), {
            contentType: CSV,
            contentLength: record.bytes,
            headers: { ...headers, "content-disposition": `attachment; filename="${record.fileName}"` }
          })
        }).pipe(orUnavailable))
  }))
