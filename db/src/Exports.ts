import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { IsoDate } from "@scaledger/domain/Basic"
import { ReplayInProgress, ServiceUnavailable } from "@scaledger/domain/Errors"
import {
  activityLine,
  type ActivityRow,
  type EventRow,
  exportFileName,
  type ExportFormat,
  gainLine,
  header,
  type Labels,
  multiplierLine,
  positionLine,
  TaxtoolRows
} from "@scaledger/domain/exports/Formats"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { Disposal, Position } from "@scaledger/domain/ledger/LedgerReport"
import { Deferred, Effect, Exit, Option, Queue, Schema, Scope, Stream, Take } from "effect"
import { createHash } from "node:crypto"
import { eachBatch } from "./Cursors.js"
import { newId } from "./Ids.js"
import { disposalRecords, eventRecords } from "./ledger/RowPages.js"
import { orDieOnParse } from "./Rows.js"
import { Spool, type SpoolError } from "./Spool.js"

export interface ExportRequest {
  readonly accountId: string
  readonly format: ExportFormat
  /** First and last day included (YYYY-MM-DD). */
  readonly from?: string | undefined
  readonly to?: string | undefined
  /** A watched address of the account (checksummed). */
  readonly wallet?: string | undefined
}

export interface ExportRecord {
  readonly id: string
  readonly seq: number
  readonly format: string
  readonly fileName: string
  readonly from: string | null
  readonly to: string | null
  readonly wallet: string | null
  readonly rows: number
  readonly bytes: number
  readonly sha256: string
  readonly asOfBlock: number | null
  readonly createdAt: Date
}

/** Why an export could not be made: a replay under way, a failed build, or the database. */
export type ExportFailure = ReplayInProgress | ServiceUnavailable | SqlError

/** A started export: its id and file name are known, its bytes follow as they are written. */
export interface StartedExport {
  readonly id: string
  readonly fileName: string
  /** The CSV bytes; the export is committed before the stream ends, and rolled back if the stream is interrupted. */
  readonly body: Stream.Stream<Uint8Array, ExportFailure>
}

/** The parties of a stored event or disposal row, as its JSON names them. */
interface StoredParties {
  readonly wallet?: string | null
  readonly counterparty?: string | null
  readonly tokenAddress?: string | null
}

/** Whether an event moved tokens of the address `key`: its own, or the receiving side of a move between own ones. */
const involves = (row: StoredParties, type: string, key: string) =>
  row.wallet?.toLowerCase() === key || (type === "transfer.self" && row.counterparty?.toLowerCase() === key)
/** Batches written ahead of a slow reader (each one a page of rows, up to PAGE_ROWS). */
const QUEUE_BATCHES = 4
/**
 * How long the writer waits for the reader to take a batch before it stops waiting: the rest is spooled (memory,
 * then a temporary file) and sent after the commit, so a client that stops reading never holds the transaction (on
 * the embedded database, its one session) longer than this.
 */
const READER_PATIENCE = "500 millis"
/** Spooled bytes kept in memory before they move to a temporary file. */
const SPOOL_MEMORY = 8 * 1024 * 1024

/** An `exports` row as stored (`bigint` columns arrive as decimal strings). */
const StoredExport = Schema.Struct({
  id: Schema.String,
  seq: Schema.NumberFromString,
  format: Schema.String,
  file_name: Schema.String,
  from_date: Schema.NullOr(IsoDate),
  to_date: Schema.NullOr(IsoDate),
  wallet: Schema.NullOr(Schema.String),
  row_count: Schema.NumberFromString,
  byte_count: Schema.NumberFromString,
  sha256: Schema.String,
  as_of_block: Schema.NullOr(Schema.NumberFromString),
  created_at: Schema.DateFromSelf
})

const toRecord = (row: typeof StoredExport.Type): ExportRecord => ({
  id: row.id,
  seq: row.seq,
  format: row.format,
  fileName: row.file_name,
  from: row.from_date,
  to: row.to_date,
  wallet: row.wallet,
  rows: row.row_count,
  bytes: row.byte_count,
  sha256: row.sha256,
  asOfBlock: row.as_of_block,
  createdAt: row.created_at
})

const encoder = new TextEncoder()

/**
 * CSV exports of the derived record: each one written from one consistent snapshot (a REPEATABLE READ transaction
 * that reads through a server-side cursor), streamed to the caller as it is written, and stored whole with its
 * SHA-256 in that same transaction, so it is committed complete or not at all.
 */
export class ExportStore extends Effect.Service<ExportStore>()("@scaledger/db/ExportStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Writes the export inside the snapshot transaction: `ready` is settled once the snapshot is taken and the
     * record is known to be settled (or fails: a replay under way, a failed build), then every batch goes to `out`
     * and to the stored chunks.
     */
    /** The tokens (lower-case addresses) of the account's events involving the address `key`. */
    const tokensMovedBy = (accountId: string, key: string) =>
      Effect.gen(function*() {
        const tokens = new Set<string>()
        let after = -1
        for (;;) {
          const [page] = yield* sql<{ first_ord: string; lines: string }>`
            SELECT first_ord, lines FROM ledger_event_pages WHERE account_id = ${accountId} AND first_ord > ${after}
            ORDER BY first_ord LIMIT 1`
          if (page === undefined) return [...tokens]
          for (const record of eventRecords(page.lines)) {
            const row = record.row as StoredParties
            if (typeof row.tokenAddress === "string" && involves(row, record.type, key)) {
              tokens.add(row.tokenAddress.toLowerCase())
            }
          }
          after = Number(page.first_ord)
        }
      })

    /**
     * Writes the export in its transaction, handing its bytes to `out` while the reader keeps up; once it does not,
     * spooling the rest, which is handed over after the commit.
     */
    const write = (
      request: ExportRequest,
      id: string,
      fileName: string,
      ready: Deferred.Deferred<void, ExportFailure>,
      out: Queue.Queue<Take.Take<Uint8Array, ExportFailure>>
    ) =>
      Effect.gen(function*() {
        const spool = new Spool(SPOOL_MEMORY)
        let spooling = false
        const send = (bytes: Uint8Array): Effect.Effect<void, SpoolError> =>
          spooling ? spool.writeBytes(bytes) : out.offer(Take.of(bytes)).pipe(
            Effect.timeout(READER_PATIENCE),
            Effect.catchTag("TimeoutException", () =>
              Effect.suspend(() => {
                spooling = true
                return spool.writeBytes(bytes)
              }))
          )
        yield* writeInTransaction(request, id, fileName, ready, send).pipe(
          Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : spool.discard)
        )
        if (!spooling) return
        yield* spool.flush
        yield* Stream.runForEach(spool.body(), (bytes) => out.offer(Take.of(bytes)))
      }).pipe(
        Effect.catchTag("SpoolError", (error) =>
          new ServiceUnavailable({ message: `The export could not be spooled: ${error.message}` }))
      )

    const writeInTransaction = (
      request: ExportRequest,
      id: string,
      fileName: string,
      ready: Deferred.Deferred<void, ExportFailure>,
      send: (bytes: Uint8Array) => Effect.Effect<void, SpoolError>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        const { accountId } = request
        const builds = yield* sql<{
          built_version: string
          replay_version: string
          status: string
          error: string | null
          currency: string | null
          tokens: unknown
        }>`SELECT built_version, replay_version, status, error, report->>'currency' AS currency,
                  report->'tokens' AS tokens
           FROM ledger_builds WHERE account_id = ${accountId}`
        const build = builds[0]
        if (build !== undefined) {
          if (Number(build.built_version) === 0 || Number(build.replay_version) > Number(build.built_version)) {
            return yield* new ReplayInProgress({
              message: "The account's history is being rebuilt; retry shortly.",
              retryAfterSeconds: 1
            })
          }
          if (build.status === "failed") {
            return yield* new ServiceUnavailable({ message: `The account's ledger could not be built: ${build.error}` })
          }
        }
        const currency = build?.currency ?? "USD"
        const labels: Labels = new Map(
          (yield* sql<{ address_key: string; label: string }>`
            SELECT address_key, label FROM wallets WHERE account_id = ${accountId}`).map((
            w
          ) => [w.address_key, w.label])
        )
        const [cursor] = yield* sql<{ block: string | null }>`
          SELECT max(block) AS block FROM chain_cursors WHERE name = 'recorder'`
        const asOfBlock = cursor?.block ?? null
        yield* sql`INSERT INTO exports ${
          sql.insert({
            id,
            account_id: accountId,
            format: request.format,
            file_name: fileName,
            from_date: request.from ?? null,
            to_date: request.to ?? null,
            wallet: request.wallet ?? null,
            as_of_block: asOfBlock
          })
        }`
        yield* Deferred.succeed(ready, undefined)

        const hash = createHash("sha256")
        let rowCount = 0
        let byteCount = 0
        let chunkSeq = 0
        // Each batch is stored as it is sent: one chunk per batch, no copies gathered in memory.
        const emit = (text: string, rows: number) =>
          Effect.suspend(() => {
            if (text === "") return Effect.void
            const bytes = encoder.encode(text)
            hash.update(bytes)
            rowCount += rows
            byteCount += bytes.length
            return Effect.zipRight(
              send(bytes),
              Effect.asVoid(
                sql`INSERT INTO export_chunks (export_id, seq, data) VALUES (${id}, ${chunkSeq++}, ${bytes})`
              )
            )
          })

        yield* emit(header(request.format), 0)
        const key = request.wallet?.toLowerCase()
        // Pages with a row in the period, then their rows in it.
        const pageDays = sql`
          ${request.from === undefined ? sql`` : sql`AND last_day >= ${request.from}`}
          ${request.to === undefined ? sql`` : sql`AND first_day <= ${request.to}`}`
        const inDays = (day: string) =>
          (request.from === undefined || day >= request.from) && (request.to === undefined || day <= request.to)

        switch (request.format) {
          case "positions": {
            const rows = yield* sql<{ row: Position }>`
              SELECT row FROM ledger_positions WHERE account_id = ${accountId} ORDER BY ord`
            const chosen = rows.map((r) => r.row).filter((p) =>
              key === undefined || p.wallet?.toLowerCase() === key ||
              (p.wallet === null && p.holdings.some((h) => h.wallet.toLowerCase() === key))
            )
            yield* emit(chosen.map((p) => positionLine(p, labels)).join(""), chosen.length)
            break
          }
          case "activity":
          case "taxtool": {
            const query = sql`
              SELECT lines FROM ledger_event_pages WHERE account_id = ${accountId} ${pageDays} ORDER BY first_ord`
            // Koinly's rows: a swap's two sides are one trade row (they may straddle two pages).
            const taxtool = new TaxtoolRows(currency)
            // A page at a time: a page holds up to PAGE_ROWS rows.
            yield* eachBatch(sql, "export_rows", query, 1, (pages: ReadonlyArray<{ lines: string }>) => {
              let text = ""
              let count = 0
              for (const page of pages) {
                for (const record of eventRecords(page.lines)) {
                  if (!inDays(record.day)) continue
                  const parsed = record.row as StoredParties
                  if (key !== undefined && !involves(parsed, record.type, key)) continue
                  if (request.format === "activity") {
                    text += activityLine(Ledger.expandActivityRow(parsed) as ActivityRow, labels)
                    count++
                  } else {
                    for (const written of taxtool.add(Ledger.expandEventRow(parsed) as EventRow)) {
                      text += written
                      count++
                    }
                  }
                }
              }
              return emit(text, count)
            })
            const rest = taxtool.end()
            yield* emit(rest.join(""), rest.length)
            break
          }
          case "gains": {
            // The tokens' steps the disposals cite (`ledger_steps`), of the same snapshot.
            const stepsOf = new Map(
              (yield* sql<{ token: string; steps: ReadonlyArray<Ledger.StoredStep> }>`
                SELECT token, steps FROM ledger_steps WHERE account_id = ${accountId}`).map((row) =>
                [row.token, row.steps] as const
              )
            )
            const query = sql`
              SELECT lines FROM ledger_disposal_pages WHERE account_id = ${accountId} ${pageDays} ORDER BY first_ord`
            yield* eachBatch(sql, "export_rows", query, 1, (pages: ReadonlyArray<{ lines: string }>) => {
              let text = ""
              let count = 0
              for (const page of pages) {
                for (const record of disposalRecords(page.lines)) {
                  if (!inDays(record.day)) continue
                  const parsed = record.row as StoredParties
                  if (key !== undefined && parsed.wallet?.toLowerCase() !== key) continue
                  text += gainLine(Ledger.expandDisposalRow(parsed, stepsOf.get(record.token)) as Disposal, labels)
                  count++
                }
              }
              return emit(text, count)
            })
            break
          }
          case "multipliers": {
            const tokenKeys = key === undefined
              ? Array.isArray(build?.tokens)
                ? (build.tokens as ReadonlyArray<{ tokenAddress?: string }>).flatMap((t) =>
                  t.tokenAddress === undefined ? [] : [t.tokenAddress.toLowerCase()]
                )
                : []
              : yield* tokensMovedBy(accountId, key)
            if (tokenKeys.length === 0) break
            const changes = yield* sql<{
              symbol: string | null
              token_key: string
              block: string | null
              block_time: Date | null
              effective_at: Date
              announced_at: Date | null
              old_multiplier: string
              new_multiplier: string
              kind: string
              source: string | null
            }>`
              SELECT t.symbol, c.token_key, c.block, c.block_time, c.effective_at, c.announced_at,
                     c.old_multiplier::text AS old_multiplier, c.new_multiplier::text AS new_multiplier, c.kind, c.source
              FROM multiplier_changes c
              LEFT JOIN chain_tokens t ON t.chain_id = c.chain_id AND t.address_key = c.token_key
              WHERE c.token_key IN ${sql.in(tokenKeys)} AND c.status = 'active' AND c.block IS NOT NULL
                ${request.from === undefined ? sql`` : sql`AND c.effective_at >= ${`${request.from}T00:00:00Z`}`}
                ${
              request.to === undefined
                ? sql``
                : sql`AND c.effective_at < ${`${request.to}T00:00:00Z`}::timestamptz + interval '1 day'`
            }
              ORDER BY c.effective_at, c.token_key`
            yield* emit(
              changes.map((c) =>
                multiplierLine({
                  token: c.symbol ?? c.token_key,
                  block: c.block,
                  blockTime: c.block_time,
                  effectiveAt: c.effective_at,
                  announcedAt: c.announced_at,
                  oldMultiplier: c.old_multiplier,
                  newMultiplier: c.new_multiplier,
                  kind: c.kind,
                  source: c.source
                })
              ).join(""),
              changes.length
            )
            break
          }
        }
        yield* sql`UPDATE exports SET complete = true, sha256 = ${hash.digest("hex")}, row_count = ${rowCount},
                     byte_count = ${byteCount}
                   WHERE id = ${id}`
      }))

    /**
     * Starts an export. Fails (nothing stored) when the record is being replayed or its build failed; otherwise
     * answers once the snapshot is taken, with the bytes to stream. Interrupting the stream (a client that goes
     * away) before the commit rolls the export back: it never appears in the list half written.
     */
    const create = Effect.fn("ExportStore.create")((request: ExportRequest, now: Date = new Date()) =>
      Effect.gen(function*() {
        const id = newId("exp")
        const fileName = exportFileName(request.format, now)
        const ready = yield* Deferred.make<void, ExportFailure>()
        const out = yield* Queue.bounded<Take.Take<Uint8Array, ExportFailure>>(QUEUE_BATCHES)
        const scope = yield* Scope.make()
        const writer = write(request, id, fileName, ready, out).pipe(
          Effect.matchCauseEffect({
            onFailure: (cause) => Effect.zipRight(Deferred.failCause(ready, cause), out.offer(Take.failCause(cause))),
            // Only after the commit: the stream's end means the export is stored.
            onSuccess: () => out.offer(Take.end)
          })
        )
        yield* Effect.forkIn(writer, scope)
        yield* Deferred.await(ready).pipe(
          Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit))
        )
        const body = Stream.fromQueue(out).pipe(
          Stream.flattenTake,
          Stream.ensuring(Scope.close(scope, Exit.void))
        )
        const started: StartedExport = { id, fileName, body }
        return started
      })
    )

    const findStored = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, id: Schema.String }),
      Result: StoredExport,
      execute: ({ accountId, id }) =>
        sql`SELECT * FROM exports WHERE account_id = ${accountId} AND id = ${id} AND complete`
    })

    const find = Effect.fn("ExportStore.find")((accountId: string, id: string) =>
      findStored({ accountId, id }).pipe(Effect.map(Option.map(toRecord)), orDieOnParse)
    )

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({
        accountId: Schema.String,
        afterSeq: Schema.UndefinedOr(Schema.Number),
        take: Schema.Int
      }),
      Result: StoredExport,
      execute: ({ accountId, afterSeq, take }) =>
        sql`
          SELECT * FROM exports WHERE account_id = ${accountId} AND complete
            ${afterSeq === undefined ? sql`` : sql`AND seq > ${afterSeq}`}
          ORDER BY seq LIMIT ${take}`
    })

    const list = Effect.fn("ExportStore.list")((
      accountId: string,
      page: { readonly afterSeq: number | undefined; readonly limit: number }
    ) =>
      findPage({ accountId, afterSeq: page.afterSeq, take: page.limit + 1 }).pipe(
        Effect.map((rows) => ({ exports: rows.slice(0, page.limit).map(toRecord), hasMore: rows.length > page.limit })),
        orDieOnParse
      )
    )

    /** The stored bytes of an export, one chunk at a time. */
    const bytes = (id: string): Stream.Stream<Uint8Array, SqlError> =>
      Stream.unfoldEffect(0, (seq) =>
        Effect.map(
          sql<{ data: Uint8Array }>`SELECT data FROM export_chunks WHERE export_id = ${id} AND seq = ${seq}`,
          (rows) => Option.map(Option.fromNullable(rows[0]), (row) => [row.data, seq + 1] as const)
        )).pipe(Stream.withSpan("ExportStore.bytes"))

    return { create, find, list, bytes } as const
  })
}) {}
