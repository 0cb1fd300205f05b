import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

export type EdgarDocumentKind = "tickers" | "submissions" | "dividends"

export interface EdgarDocument {
  readonly kind: EdgarDocumentKind
  /** 0 for the ticker map. */
  readonly cik: number
  readonly status: "ok" | "not_found"
  readonly body: unknown
  readonly fetchedAt: Date
}

/** The EDGAR cache (migration 0010): what was read from EDGAR, in the extracted form the reads use. */
export class EdgarCache extends Effect.Service<EdgarCache>()("@scaledger/db/EdgarCache", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const get = Effect.fn("EdgarCache.get")((kind: EdgarDocumentKind, cik: number) =>
      Effect.map(
        sql<{ status: "ok" | "not_found"; body: unknown; fetched_at: Date }>`
          SELECT status, body, fetched_at FROM edgar_documents WHERE kind = ${kind} AND cik = ${cik}`,
        (rows) =>
          Option.map(Option.fromNullable(rows[0]), (row): EdgarDocument => ({
            kind,
            cik,
            status: row.status,
            body: row.body,
            fetchedAt: row.fetched_at
          }))
      )
    )

    const put = Effect.fn("EdgarCache.put")((document: EdgarDocument) =>
      sql`
        INSERT INTO edgar_documents (kind, cik, status, body, fetched_at)
        VALUES (${document.kind}, ${document.cik}, ${document.status},
          ${document.body === null ? null : JSON.stringify(document.body)}::jsonb, ${document.fetchedAt})
        ON CONFLICT (kind, cik) DO UPDATE
          SET status = EXCLUDED.status, body = EXCLUDED.body, fetched_at = EXCLUDED.fetched_at`.pipe(Effect.asVoid)
    )

    /** Documents fetched before `before`, oldest first: what the daily refresh fetches again. */
    const staleBefore = Effect.fn("EdgarCache.staleBefore")((before: Date, limit: number) =>
      Effect.map(
        sql<{ kind: EdgarDocumentKind; cik: string | number }>`
          SELECT kind, cik FROM edgar_documents WHERE fetched_at < ${before} ORDER BY fetched_at LIMIT ${limit}`,
        (rows) => rows.map((row) => ({ kind: row.kind, cik: Number(row.cik) }))
      )
    )

    /** One ticker's entry of the cached ticker map (`{ cik, ticker, name }`), without reading the whole map. */
    const issuerOf = (ticker: string) =>
      Effect.map(
        sql<{ issuer: unknown }>`
          SELECT body -> ${ticker} AS issuer FROM edgar_documents WHERE kind = 'tickers' AND cik = 0 AND status = 'ok'`,
        (rows) => Option.fromNullable(rows[0]?.issuer as { readonly cik: number } | null | undefined)
      )

    return { get, put, staleBefore, issuerOf } as const
  })
}) {}
