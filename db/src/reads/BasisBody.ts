import { SqlClient } from "@effect/sql"
import { NotFound, ServiceUnavailable } from "@scaledger/domain/Errors"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { Disposal, Lot } from "@scaledger/domain/ledger/LedgerReport"
import { DisposalView, GainTotals, LotView } from "@scaledger/domain/LedgerApi"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Effect, Option, Schema, type Stream } from "effect"
import { eachBatch } from "../Cursors.js"
import { LedgerStore } from "../ledger/LedgerStore.js"
import { disposalRecords } from "../ledger/RowPages.js"
import { Spool, type SpoolError } from "../Spool.js"
import { disposalView, GainsSum, lotView, type StoredReport } from "./LedgerViews.js"
import { settledBuild } from "./SettledBuild.js"

/** Lot rows fetched from the snapshot's cursor at a time. */
const LOT_BATCH = 1_000
/** A basis record stays in memory up to this size; a larger one is spooled to a file (`Spool`). */
export const BASIS_MEMORY_LIMIT = 8 * 1024 * 1024

const encodeLot = Schema.encodeSync(LotView)
const encodeDisposal = Schema.encodeSync(DisposalView)
const encodeGains = Schema.encodeSync(GainTotals)

/** A token's lots and disposals as JSON (without their brackets), gathered before the record is written in order. */
class TokenParts {
  readonly lots: Spool
  readonly disposals: Spool
  readonly gains = new GainsSum()
  lotCount = 0
  disposalCount = 0

  constructor(memoryLimit: number) {
    this.lots = new Spool(memoryLimit)
    this.disposals = new Spool(memoryLimit)
  }

  readonly discard = Effect.suspend(() => Effect.zipRight(this.lots.discard, this.disposals.discard))
}

/** `GET /v1/basis` as JSON bytes: written whole from one snapshot, then streamed (see `BasisBodies.basis`). */
export interface BasisBody {
  readonly bytes: number
  /** Read once; its end (or interruption) gives the spool's file back. */
  readonly body: Stream.Stream<Uint8Array, SpoolError>
  /** Gives the spool's file back when the body will not be read (a HEAD request, a client gone before it). */
  readonly discard: Effect.Effect<void>
}

/**
 * The basis record (`GET /v1/basis`): every open lot and every disposal of a token, or of every token. A long
 * history has hundreds of thousands of them (hundreds of MB of JSON at a million events), so the record is never
 * held whole: it is read from one consistent snapshot (a REPEATABLE READ transaction: the lots, disposals and summary
 * of one build) through cursors, a batch at a time, each lot and disposal encoded by its schema as it comes, into
 * spools that move to temporary files past `BASIS_MEMORY_LIMIT` (shared by the record and each token's parts). The transaction ends before the first byte is
 * sent, so a slow client holds no connection, and a failure midway is still an error answer.
 */
export class BasisBodies extends Effect.Service<BasisBodies>()("@scaledger/db/BasisBodies", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* LedgerStore

    const write = (accountId: string, token: string | undefined, spool: Spool, memoryLimit: number) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        // The build's state and summary, of the same snapshot as the rows (409 while a replay runs, 503 failed).
        const state = yield* settledBuild(store, accountId)
        const report = Option.isNone(state)
          ? Option.none<StoredReport>()
          : (yield* store.report(accountId)) as Option.Option<StoredReport>
        const currency = Option.match(report, { onNone: () => "USD", onSome: (r) => r.currency })
        const lotScope = Option.match(report, { onNone: () => "wallet" as const, onSome: (r) => r.lotScope })
        const tokens = Option.match(report, { onNone: () => [], onSome: (r) => r.tokens })
        const wanted = token?.toUpperCase()
        const chosen = tokens.filter((t) =>
          wanted === undefined || t.token.toUpperCase() === wanted || t.tokenAddress.toUpperCase() === wanted
        )
        if (wanted !== undefined && chosen.length === 0) {
          return yield* new NotFound({ message: `No basis record for token ${shownValue(token ?? "")}.` })
        }
        // The tokens' steps the lots and disposals cite (`ledger_steps`), of the same snapshot.
        const stepsOf = new Map(
          (yield* sql<{ token: string; steps: ReadonlyArray<Ledger.StoredStep> }>`
            SELECT token, steps FROM ledger_steps WHERE account_id = ${accountId}`).map((row) => [row.token, row.steps])
        )
        const json = JSON.stringify
        // Each token's lots and disposals, gathered in one pass over each table (pages hold rows of every token:
        // a pass per token would read and parse every page once per token), then written in the record's order.
        const memoryEach = Math.floor(memoryLimit / Math.max(1, 2 * chosen.length))
        // By the ledger's symbol, as the lot rows and disposal rows name their token.
        const parts = new Map(chosen.map((t) => [t.token, new TokenParts(memoryEach)] as const))
        const only = wanted === undefined ? undefined : chosen[0]!.token
        /** Writes each part's text of a batch to its spool. */
        const gathered = (texts: Map<Spool, string>) =>
          Effect.forEach(texts, ([part, text]) => part.write(text), { discard: true })
        // The parts' files go when the record is written, or when it fails midway.
        yield* Effect.gen(function*() {
          yield* eachBatch(
            sql,
            "basis_lots",
            sql`SELECT token, row FROM ledger_lots WHERE account_id = ${accountId}
              ${only === undefined ? sql`` : sql`AND token = ${only}`} ORDER BY ord`,
            LOT_BATCH,
            (rows: ReadonlyArray<{ token: string; row: unknown }>) => {
              const texts = new Map<Spool, string>()
              for (const r of rows) {
                const part = parts.get(r.token)
                if (part === undefined) continue
                const lot = Ledger.expandLotRow(r.row, stepsOf.get(r.token)) as Lot
                const text = `${part.lotCount++ > 0 ? "," : ""}${json(encodeLot(lotView(lot)))}`
                texts.set(part.lots, (texts.get(part.lots) ?? "") + text)
              }
              return gathered(texts)
            }
          )
          // A page at a time: a page holds up to PAGE_ROWS rows of every token it lists.
          yield* eachBatch(
            sql,
            "basis_disposals",
            sql`SELECT lines FROM ledger_disposal_pages WHERE account_id = ${accountId}
              ${only === undefined ? sql`` : sql`AND ${only.toUpperCase()} = ANY(tokens)`} ORDER BY first_ord`,
            1,
            (pages: ReadonlyArray<{ lines: string }>) => {
              const texts = new Map<Spool, string>()
              for (const page of pages) {
                for (const stored of disposalRecords(page.lines)) {
                  const part = parts.get(stored.token)
                  if (part === undefined) continue
                  const disposal = Ledger.expandDisposalRow(stored.row, stepsOf.get(stored.token)) as Disposal
                  part.gains.add(disposal)
                  const text = `${part.disposalCount++ > 0 ? "," : ""}${json(encodeDisposal(disposalView(disposal)))}`
                  texts.set(part.disposals, (texts.get(part.disposals) ?? "") + text)
                }
              }
              return gathered(texts)
            }
          )

          /** One token's record, in the order of the `BasisRecord` schema. */
          const record = (t: (typeof tokens)[number]) =>
            Effect.gen(function*() {
              const part = parts.get(t.token)!
              yield* spool.write(`{"token":${json(t.token)},"currency":${json(currency)},"lots":[`)
              yield* spool.append(part.lots)
              yield* spool.write(
                `],"accruedIncomeAddedToBasis":${json(t.accruedIncomeAddedToBasis)},"accruedIncomeAddedToBasisUsd":${
                  json(t.accruedIncomeAddedToBasisUsd)
                },"lotMatching":"fifo","lotScope":${json(lotScope)},"disposals":[`
              )
              yield* spool.append(part.disposals)
              yield* spool.write(`],"realisedGains":${json(encodeGains(part.gains.view()))}}`)
            })

          if (wanted !== undefined) {
            yield* record(chosen[0]!)
          } else {
            yield* spool.write(
              `{"currency":${json(currency)},"lotMatching":"fifo","lotScope":${json(lotScope)},"records":[`
            )
            for (const [i, t] of chosen.entries()) {
              if (i > 0) yield* spool.write(",")
              yield* record(t)
            }
            yield* spool.write("]}")
          }
        }).pipe(Effect.ensuring(Effect.forEach(parts.values(), (part) => part.discard, { discard: true })))
        yield* spool.flush
      }))

    /**
     * One token's basis record (symbol or address, any case), or every token's: 404 `not_found` for a token the
     * record does not hold, 409 while a replay runs, 503 when the build failed or the record could not be written.
     */
    const basis = (accountId: string, token?: string, memoryLimit = BASIS_MEMORY_LIMIT) =>
      Effect.gen(function*() {
        const spool = new Spool(memoryLimit)
        yield* write(accountId, token, spool, memoryLimit).pipe(
          Effect.catchTag("SpoolError", (error) =>
            Effect.fail(
              new ServiceUnavailable({ message: `The basis record could not be written: ${error.message}` })
            )),
          Effect.onError(() => spool.discard)
        )
        return { bytes: spool.byteLength, body: spool.body(), discard: spool.discard } satisfies BasisBody
      }).pipe(Effect.withSpan("BasisBodies.basis"))

    return { basis } as const
  }),
  dependencies: [LedgerStore.Default]
}) {}
