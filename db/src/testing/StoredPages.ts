import { SqlClient } from "@effect/sql"
import { Ledger } from "@scaledger/domain/ledger/index"
import { Effect } from "effect"
import { insertPage } from "../ledger/LedgerStore.js"
import {
  disposalRecords,
  type EventRecord,
  eventRecords,
  type Page,
  PAGE_ROWS,
  PageBuilder
} from "../ledger/RowPages.js"

/** Every stored event row of the account in order, with its position and filter fields (the row as stored). */
export const storedEvents = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pages = yield* sql<{ first_ord: string; lines: string }>`
      SELECT first_ord, lines FROM ledger_event_pages WHERE account_id = ${accountId} ORDER BY first_ord`
    return pages.flatMap((page) =>
      Array.from(eventRecords(page.lines), (record, i) => ({ ord: Number(page.first_ord) + i, ...record }))
    )
  })

/** Every stored disposal row of the account in order, with its position. */
export const storedDisposals = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pages = yield* sql<{ first_ord: string; lines: string }>`
      SELECT first_ord, lines FROM ledger_disposal_pages WHERE account_id = ${accountId} ORDER BY first_ord`
    return pages.flatMap((page) =>
      Array.from(disposalRecords(page.lines), (record, i) => ({ ord: Number(page.first_ord) + i, ...record }))
    )
  })

/**
 * Every stored disposal of the account (of `token` only, any case, when given) as the report lists it: expanded with
 * its token's steps (`ledger_steps`), read in the same statement.
 */
export const expandedDisposals = (accountId: string, token?: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = token?.toUpperCase()
    const [stored] = yield* sql<
      { pages: ReadonlyArray<string> | null; steps: Record<string, ReadonlyArray<Ledger.StoredStep>> | null }
    >`
      SELECT
        (SELECT json_agg(lines ORDER BY first_ord) FROM ledger_disposal_pages WHERE account_id = ${accountId}) AS pages,
        (SELECT json_object_agg(token, steps) FROM ledger_steps WHERE account_id = ${accountId}) AS steps`
    const stepsOf = new Map(Object.entries(stored?.steps ?? {}))
    return (stored?.pages ?? []).flatMap((lines) =>
      Array.from(disposalRecords(lines)).flatMap((record) =>
        key === undefined || record.token.toUpperCase() === key
          ? [Ledger.expandDisposalRow(record.row, stepsOf.get(record.token))]
          : []
      )
    )
  })

/** Replaces the account's stored events with `events`, paged as a build stores them. */
export const storeEvents = (accountId: string, events: ReadonlyArray<EventRecord>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM ledger_event_pages WHERE account_id = ${accountId}`
    const builder = new PageBuilder("events", 0)
    const pages: Array<Page> = []
    for (const event of events) {
      builder.addEvent(event)
      if (builder.size === PAGE_ROWS) pages.push(builder.take())
    }
    if (builder.size > 0) pages.push(builder.take())
    for (const page of pages) yield* insertPage(sql, "ledger_event_pages", accountId, page)
  })
