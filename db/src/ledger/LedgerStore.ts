import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Ledger } from "@scaledger/domain/ledger/index"
import { Data, Effect, Fiber, Iterable, Option, type Scope } from "effect"
import { chunksOf, type Column, delimitedInsert, INSERT_CHUNK, LOT_COLUMNS, POSITION_COLUMNS } from "./BulkRows.js"
import {
  type DisposalRecord,
  disposalRecords,
  type EventRecord,
  eventRecords,
  type Page,
  PAGE_ROWS,
  PageBuilder,
  type StoredRecords
} from "./RowPages.js"

export type { DisposalRecord, EventRecord } from "./RowPages.js"

export interface BuildState {
  readonly requestedVersion: number
  readonly replayVersion: number
  readonly builtVersion: number
  readonly builtAt: Date | null
  readonly status: "pending" | "ready" | "failed"
  readonly error: string | null
}

export interface DueBuild {
  readonly accountId: string
  readonly version: number
  readonly replay: boolean
}

export interface EventFilter {
  /** A token symbol, any case. */
  readonly token?: string | undefined
  readonly type?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly needsReview?: boolean | undefined
}

/** Whether an event row passes the filter (the page it is on passed the same filter on its summary). */
const passes = (filter: EventFilter, token: string | undefined, record: EventRecord) =>
  (token === undefined || record.token.toUpperCase() === token) &&
  (filter.type === undefined || record.type === filter.type) &&
  (filter.from === undefined || record.day >= filter.from) &&
  (filter.to === undefined || record.day <= filter.to) &&
  (filter.needsReview === undefined || record.needsReview === filter.needsReview)

/**
 * Lot rows to write: all of them (`replace`), or only those that changed since the stored build. `rows` is read once,
 * as the rows are written.
 */
export interface LotWrites {
  readonly replace: boolean
  readonly deletes: ReadonlyArray<number>
  readonly rows: Iterable<{ readonly token: string; readonly ord: number; readonly json: string }>
}

/**
 * Rows of dividend steps (`Ledger.storedSteps`, by token symbol) to write: all of them (`replace`), or those that
 * changed, the rows of `deletes` going.
 */
export interface StepWrites {
  readonly replace: boolean
  readonly deletes: ReadonlyArray<string>
  readonly rows: ReadonlyArray<{ readonly token: string; readonly json: string }>
}

/** What `store` writes of a build. */
export interface StoredBuild {
  readonly report: unknown
  readonly positions: ReadonlyArray<
    { readonly token: string; readonly wallet: string | null; readonly row: unknown }
  >
  readonly lots: ReadonlyArray<{ readonly token: string; readonly row: unknown }>
  /**
   * How to write the lots instead of replacing them all in order: the stored rows to delete (by `ord`) and
   * the rows to insert (JSON already written), or every row with its `ord` (`replace`).
   */
  readonly lotWrites?: LotWrites
  /** The tokens' steps the lot rows cite; without it, none are written. */
  readonly stepWrites?: StepWrites
  /**
   * The `ord` of each row of `positions` when only those changed since the stored build (the others are kept
   * as stored); without it every position row is replaced.
   */
  readonly positionOrds?: ReadonlyArray<number> | undefined
  readonly disposals: Iterable<DisposalRecord>
  readonly events: Iterable<EventRecord>
}

/** Where a full build writes its event and disposal rows as it makes them (`LedgerStore.storeBuild`). */
export interface RowSink {
  readonly events: (records: Iterable<EventRecord>) => Effect.Effect<void, SqlError>
  readonly disposals: (records: Iterable<DisposalRecord>) => Effect.Effect<void, SqlError>
}

/** A build made by `storeBuild`'s `make`: what to store, and how its event and disposal rows are written. */
export interface MadeBuild {
  readonly build: StoredBuild
  /**
   * `"streamed"`: a full build that gave every event and disposal row to the sink (`build.events` and
   * `build.disposals` are not read); otherwise the rows are in `build`, after the stored rows kept (`since`, an
   * incremental build) or replacing them all (undefined).
   */
  readonly rows: "streamed" | { readonly events: number; readonly disposals: number } | undefined
}

/** The build's lease was lost before it was stored: its transaction is rolled back. */
class LeaseNotHeld extends Data.TaggedError("LeaseNotHeld") {}

/** A stored last page with fewer rows than this takes the next build's rows; a fuller one is followed by a new page. */
const MERGE_BELOW = PAGE_ROWS / 4

/** Writes one page of events or disposals (see `RowPages`), in place of the stored page at its position. */
export const insertPage = (
  sql: SqlClient.SqlClient,
  table: "ledger_event_pages" | "ledger_disposal_pages",
  accountId: string,
  page: Page
) =>
  table === "ledger_event_pages"
    ? sql`INSERT INTO ledger_event_pages (account_id, first_ord, count, first_day, last_day, tokens, types,
                                          review_count, review, lines)
          VALUES (${accountId}, ${page.firstOrd}, ${page.count}, ${page.firstDay}, ${page.lastDay},
                  ARRAY(SELECT json_array_elements_text(${JSON.stringify(page.tokens)}::json)),
                  ARRAY(SELECT json_array_elements_text(${JSON.stringify(page.types)}::json)),
                  ${page.review.length}, ${JSON.stringify(page.review)}, ${page.text})
          ON CONFLICT (account_id, first_ord) DO UPDATE SET count = EXCLUDED.count, first_day = EXCLUDED.first_day,
            last_day = EXCLUDED.last_day, tokens = EXCLUDED.tokens, types = EXCLUDED.types,
            review_count = EXCLUDED.review_count, review = EXCLUDED.review, lines = EXCLUDED.lines`
    : sql`INSERT INTO ledger_disposal_pages (account_id, first_ord, count, first_day, last_day, tokens, lines)
          VALUES (${accountId}, ${page.firstOrd}, ${page.count}, ${page.firstDay}, ${page.lastDay},
                  ARRAY(SELECT json_array_elements_text(${JSON.stringify(page.tokens)}::json)), ${page.text})
          ON CONFLICT (account_id, first_ord) DO UPDATE SET count = EXCLUDED.count, first_day = EXCLUDED.first_day,
            last_day = EXCLUDED.last_day, tokens = EXCLUDED.tokens, lines = EXCLUDED.lines`

/** Derived ledger records: which builds are due, storing a build whole, and the reads the API serves from them. */
export class LedgerStore extends Effect.Service<LedgerStore>()("@scaledger/db/LedgerStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const state = (accountId: string) =>
      Effect.map(
        sql<{
          requested_version: string
          replay_version: string
          built_version: string
          built_at: Date | null
          status: BuildState["status"]
          error: string | null
        }>`SELECT requested_version, replay_version, built_version, built_at, status, error
           FROM ledger_builds WHERE account_id = ${accountId}`,
        (rows) =>
          Option.map(Option.fromNullable(rows[0]), (row): BuildState => ({
            requestedVersion: Number(row.requested_version),
            replayVersion: Number(row.replay_version),
            builtVersion: Number(row.built_version),
            builtAt: row.built_at,
            status: row.status,
            error: row.error
          }))
      )

    /**
     * Leases due builds: replays at once, other changes at most every `minIntervalMs` per account (chain data
     * arrives in small steps; one build covers many of them). A build whose worker died is due again once its
     * lease lapses. Replays first, then builds asked for by the account's own movements (a new block of a wallet
     * must not wait behind every account a classification run or a price round touched), then the oldest request.
     */
    const claim = (owner: string, limit: number, leaseSeconds: number, minIntervalMs: number) =>
      Effect.map(
        sql<{ account_id: string; requested_version: string; replay_version: string; built_version: string }>`
          UPDATE ledger_builds SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseSeconds})
          WHERE account_id IN (
            SELECT account_id FROM ledger_builds
            WHERE requested_version > built_version
              AND (lease_until IS NULL OR lease_until < now())
              AND (replay_version > built_version OR built_at IS NULL
                   OR built_at < now() - make_interval(secs => ${minIntervalMs / 1000}))
            ORDER BY (replay_version > built_version) DESC, (movement_version > built_version) DESC, requested_at
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          RETURNING account_id, requested_version, replay_version, built_version`,
        (rows) =>
          rows.map((row): DueBuild => ({
            accountId: row.account_id,
            version: Number(row.requested_version),
            replay: Number(row.replay_version) > Number(row.built_version)
          }))
      )

    /** Asks again for builds older than `maxAgeSeconds`: "now" moves (the year's figures, the current value). */
    const expireOlderThan = (maxAgeSeconds: number) =>
      sql`UPDATE ledger_builds SET requested_version = requested_version + 1, requested_at = now()
          WHERE requested_version = built_version AND built_at < now() - make_interval(secs => ${maxAgeSeconds})`.pipe(
        Effect.asVoid
      )

    /**
     * Inserts rows a chunk at a time, one statement in flight: while the database writes a chunk, the next one is
     * made (rows formatted, JSON written), so the two overlap instead of waiting on each other.
     */
    const insertChunks = <A, E>(
      rows: Iterable<A>,
      insert: (chunk: ReadonlyArray<A>) => Effect.Effect<unknown, E>,
      size = INSERT_CHUNK
    ) =>
      Effect.gen(function*() {
        let inFlight: Fiber.RuntimeFiber<unknown, E> | undefined
        for (const chunk of chunksOf(rows, size)) {
          const statement = insert(chunk)
          if (inFlight !== undefined) yield* Fiber.join(inFlight)
          inFlight = yield* Effect.fork(statement)
          // Let the statement go out before the next chunk is made.
          yield* Effect.yieldNow()
        }
        if (inFlight !== undefined) yield* Fiber.join(inFlight)
      })

    /**
     * Replaces the rows from position `since` on with `records`, a page at a time. The stored page before them
     * is written again with the new rows when it holds rows from `since` on, or holds fewer than `MERGE_BELOW` rows
     * (an incremental build adds a few rows a block; its pages would otherwise stay that small), keeping its rows
     * before `since`. A block then reads and writes at most a quarter page besides its own rows.
     */
    const writePages = <A>(
      table: "ledger_event_pages" | "ledger_disposal_pages",
      accountId: string,
      since: number,
      records: Iterable<A>,
      add: (page: PageBuilder, record: A) => void,
      decode: (text: string) => StoredRecords<A>
    ) =>
      Effect.gen(function*() {
        const kind = table === "ledger_event_pages" ? "events" : "disposals"
        const iterator = records[Symbol.iterator]()
        let next = iterator.next()
        const more = next.done !== true
        // One statement: the rows from `since` on go, and the page before them is read (its rows only if kept).
        const [last] = yield* sql<{ first_ord: string; lines: string | null }>`
          WITH gone AS (DELETE FROM ${sql(table)} WHERE account_id = ${accountId} AND first_ord >= ${since})
          SELECT first_ord,
            CASE WHEN first_ord + count > ${since} OR (count < ${MERGE_BELOW} AND ${more}) THEN lines END AS lines
          FROM ${sql(table)} WHERE account_id = ${accountId} AND first_ord < ${since}
          ORDER BY first_ord DESC LIMIT 1`
        let builder = new PageBuilder(kind, since)
        if (last !== undefined && last.lines !== null) {
          const first = Number(last.first_ord)
          builder = new PageBuilder(kind, first)
          const kept = decode(last.lines)
          for (let i = 0; i < Math.min(since - first, kept.length); i++) add(builder, kept.at(i))
        }
        function* pages(): Generator<Page> {
          for (; next.done !== true; next = iterator.next()) {
            add(builder, next.value)
            if (builder.size === PAGE_ROWS) yield builder.take()
          }
          if (builder.size > 0) yield builder.take()
        }
        yield* insertChunks(
          pages(),
          (chunk) => Effect.tap(insertPage(sql, table, accountId, chunk[0]!), () => builder.recycle(chunk[0]!)),
          1
        )
      })

    /**
     * Writes a build in the transaction it runs in, first making sure the lease is still held: `LeaseNotHeld`
     * otherwise, and the transaction is rolled back. See `store` and `storeBuild`.
     */
    const writeBuild = (
      accountId: string,
      owner: string,
      version: number,
      build: StoredBuild,
      rows: MadeBuild["rows"]
    ) =>
      Effect.gen(function*() {
        const held =
          yield* sql`SELECT 1 FROM ledger_builds WHERE account_id = ${accountId} AND lease_owner = ${owner} FOR UPDATE`
        if (held.length === 0) return yield* new LeaseNotHeld()
        const positionOrds = build.positionOrds
        if (positionOrds === undefined) {
          yield* sql`DELETE FROM ledger_positions WHERE account_id = ${accountId}`
        } else if (positionOrds.length > 0) {
          yield* sql`DELETE FROM ledger_positions WHERE account_id = ${accountId} AND ord IN ${sql.in(positionOrds)}`
        }
        const lotWrites = build.lotWrites
        if (lotWrites === undefined || lotWrites.replace) {
          yield* sql`DELETE FROM ledger_lots WHERE account_id = ${accountId}`
        } else {
          for (const chunk of chunksOf(lotWrites.deletes, 10_000)) {
            yield* sql`DELETE FROM ledger_lots WHERE account_id = ${accountId} AND ord IN ${sql.in(chunk)}`
          }
        }
        const stepWrites = build.stepWrites
        if (stepWrites !== undefined) {
          if (stepWrites.replace) {
            yield* sql`DELETE FROM ledger_steps WHERE account_id = ${accountId}`
          } else if (stepWrites.deletes.length > 0) {
            yield* sql`DELETE FROM ledger_steps WHERE account_id = ${accountId} AND token IN ${
              sql.in(stepWrites.deletes)
            }`
          }
          if (stepWrites.rows.length > 0) {
            yield* sql`INSERT INTO ledger_steps ${
              sql.insert(stepWrites.rows.map((row) => ({ account_id: accountId, token: row.token, steps: row.json })))
            } ON CONFLICT (account_id, token) DO UPDATE SET steps = EXCLUDED.steps`
          }
        }
        /** A chunk as one delimited text, or with a parameter per value when a field holds a separator. */
        const insert = (
          table: string,
          columns: ReadonlyArray<Column>,
          rows: ReadonlyArray<ReadonlyArray<string>>,
          perValue: () => Statement.Statement<unknown>
        ) => {
          const delimited = delimitedInsert(table, columns, rows)
          return delimited === undefined ? perValue() : sql.unsafe(delimited.statement, [accountId, delimited.text])
        }
        let ord = 0
        yield* insertChunks(build.positions, (chunk) => {
          const rows = chunk.map((p) => ({
            ord: positionOrds === undefined ? ord++ : positionOrds[ord++]!,
            token: p.token,
            wallet_key: p.wallet?.toLowerCase() ?? null,
            row: JSON.stringify(p.row)
          }))
          return insert(
            "ledger_positions",
            POSITION_COLUMNS,
            rows.map((r) => [String(r.ord), r.token, r.wallet_key ?? "", r.row]),
            () => sql`INSERT INTO ledger_positions ${sql.insert(rows.map((r) => ({ account_id: accountId, ...r })))}`
          )
        })
        ord = 0
        const lotRows = lotWrites === undefined
          ? Iterable.map(build.lots, (l) => ({ ord: ord++, token: l.token, json: JSON.stringify(l.row) }))
          : lotWrites.rows
        yield* insertChunks(lotRows, (chunk) =>
          insert(
            "ledger_lots",
            LOT_COLUMNS,
            chunk.map((l) => [String(l.ord), l.token, l.json]),
            () =>
              sql`INSERT INTO ledger_lots ${
                sql.insert(chunk.map((l) => ({ account_id: accountId, ord: l.ord, token: l.token, row: l.json })))
              }`
          ))
        if (rows !== "streamed") {
          yield* writePages("ledger_disposal_pages", accountId, rows?.disposals ?? 0, build.disposals, (page, d) =>
            page.addDisposal(d), disposalRecords)
          yield* writePages("ledger_event_pages", accountId, rows?.events ?? 0, build.events, (page, e) =>
            page.addEvent(e), eventRecords)
        }
        yield* sql`UPDATE ledger_builds SET built_version = greatest(built_version, ${version}), built_at = now(),
                     status = 'ready', error = NULL, report = ${
          JSON.stringify(build.report)
        }, lease_owner = NULL, lease_until = NULL
                   WHERE account_id = ${accountId}`
      })

    /**
     * Replaces the account's derived records with a build made from inputs as of `version`. False (and nothing
     * written) when the lease was lost meanwhile. Runs in one transaction: readers see the old build or the new one.
     *
     * With `since` (an incremental build), the stored events and disposals before those positions are kept: only
     * the rows from there on are replaced (`build.events` and `build.disposals` then hold just those rows).
     * Positions, lots and the summary are always replaced.
     */
    const store = (
      accountId: string,
      owner: string,
      version: number,
      build: StoredBuild,
      since?: { readonly events: number; readonly disposals: number }
    ) =>
      sql.withTransaction(writeBuild(accountId, owner, version, build, since)).pipe(
        Effect.as(true),
        Effect.catchTag("LeaseNotHeld", () => Effect.succeed(false))
      )

    /**
     * Makes a build and stores it, in one transaction: readers see the old build or the new one. A full build
     * writes its event and disposal rows through the sink while it is made (the old pages go with its first page),
     * so it needs to keep neither its records nor its rows; it then returns `rows: "streamed"`. The rest is
     * written as `store` writes it. None (and nothing written) when the lease was lost meanwhile; a failure of
     * `make` rolls back what the sink wrote.
     */
    const storeBuild = <A extends MadeBuild, E, R>(
      accountId: string,
      owner: string,
      version: number,
      make: (sink: RowSink) => Effect.Effect<A, E, R>
    ) =>
      sql.withTransaction(Effect.scoped(Effect.gen(function*() {
        const sink = makeSink(accountId, yield* Effect.scope)
        const made = yield* make(sink)
        if (made.rows === "streamed") yield* sink.finish
        yield* writeBuild(accountId, owner, version, made.build, made.rows)
        return Option.some(made)
      }))).pipe(Effect.catchTag("LeaseNotHeld", () => Effect.succeed(Option.none<A>())))

    /**
     * Event and disposal pages written as a full build gives its rows, one statement in flight while the next page
     * is made. The account's stored pages are deleted before its first page is written. Statements run in
     * `scope` (the build's; a build gives rows from the fibers of its transfer stream, which end before it).
     */
    const makeSink = (accountId: string, scope: Scope.Scope) => {
      const builders = {
        ledger_event_pages: new PageBuilder("events", 0),
        ledger_disposal_pages: new PageBuilder("disposals", 0)
      }
      let cleared = false
      let inFlight: Fiber.RuntimeFiber<unknown, SqlError> | undefined
      const clear = Effect.suspend((): Effect.Effect<void, SqlError> => {
        if (cleared) return Effect.void
        cleared = true
        return Effect.asVoid(Effect.zipRight(
          sql`DELETE FROM ledger_event_pages WHERE account_id = ${accountId}`,
          sql`DELETE FROM ledger_disposal_pages WHERE account_id = ${accountId}`
        ))
      })
      const send = (table: keyof typeof builders, page: Page) =>
        Effect.gen(function*() {
          yield* clear
          if (inFlight !== undefined) yield* Fiber.join(inFlight)
          inFlight = yield* Effect.forkIn(
            Effect.tap(insertPage(sql, table, accountId, page), () => builders[table].recycle(page)),
            scope
          )
          // Let the statement go out before the next page is made.
          yield* Effect.yieldNow()
        })
      const add = <A>(
        table: keyof typeof builders,
        records: Iterable<A>,
        addTo: (page: PageBuilder, record: A) => void
      ) =>
        Effect.gen(function*() {
          const builder = builders[table]
          for (const record of records) {
            addTo(builder, record)
            if (builder.size === PAGE_ROWS) yield* send(table, builder.take())
          }
        })
      const sink: RowSink = {
        events: (records) => add("ledger_event_pages", records, (page, e) => page.addEvent(e)),
        disposals: (records) => add("ledger_disposal_pages", records, (page, d) => page.addDisposal(d))
      }
      const finish = Effect.gen(function*() {
        for (const table of ["ledger_disposal_pages", "ledger_event_pages"] as const) {
          if (builders[table].size > 0) yield* send(table, builders[table].take())
        }
        yield* clear
        if (inFlight !== undefined) yield* Fiber.join(inFlight)
      })
      return { ...sink, finish }
    }

    /** A build that cannot be made from its inputs: recorded, so reads say why instead of waiting forever. */
    const fail = (accountId: string, owner: string, version: number, error: string) =>
      sql`UPDATE ledger_builds SET built_version = greatest(built_version, ${version}), built_at = now(), status = 'failed',
            error = ${error}, lease_owner = NULL, lease_until = NULL
          WHERE account_id = ${accountId} AND lease_owner = ${owner}`.pipe(Effect.asVoid)

    /**
     * Extends a build's lease while it runs; false only when another worker holds it now. A lease nobody holds counts
     * as still ours: the build's own store may have released it (a renewal waiting on the store's row lock runs once
     * it committed), and a build whose lease lapsed is refused by the store's own check.
     */
    const renew = (accountId: string, owner: string, leaseSeconds: number) =>
      Effect.map(
        sql<{ held: boolean }>`
          WITH renewed AS (
            UPDATE ledger_builds SET lease_until = now() + make_interval(secs => ${leaseSeconds})
            WHERE account_id = ${accountId} AND lease_owner = ${owner} RETURNING account_id
          )
          SELECT EXISTS (SELECT 1 FROM renewed) OR NOT EXISTS (
            SELECT 1 FROM ledger_builds WHERE account_id = ${accountId} AND lease_owner <> ${owner}
          ) AS held`,
        (rows) => rows[0]?.held === true
      )

    const release = (accountId: string, owner: string) =>
      sql`UPDATE ledger_builds SET lease_owner = NULL, lease_until = NULL WHERE account_id = ${accountId} AND lease_owner = ${owner}`
        .pipe(Effect.asVoid)

    const report = (accountId: string) =>
      Effect.map(
        sql<{ report: unknown }>`SELECT report FROM ledger_builds WHERE account_id = ${accountId}`,
        (rows) => Option.fromNullable(rows[0]?.report)
      )

    const positions = (accountId: string) =>
      Effect.map(
        sql<{ row: unknown }>`SELECT row FROM ledger_positions WHERE account_id = ${accountId} ORDER BY ord`,
        (rows) => rows.map((r) => r.row)
      )

    /**
     * The open lots, each made by `make` from its row and its token's steps (`ledger_steps`), read in the same
     * statement (one snapshot: the steps of the build that stored the lots). A token's steps come with the first of
     * its lots (with each first of a run of its lots, in `ord` order).
     */
    const storedLots = <A>(
      accountId: string,
      token: string | undefined,
      make: (row: unknown, steps: ReadonlyArray<Ledger.StoredStep> | undefined) => A
    ) =>
      Effect.map(
        sql<{ token: string; row: unknown; steps: ReadonlyArray<Ledger.StoredStep> | null }>`
          SELECT l.token, l.row,
            CASE WHEN l.token IS DISTINCT FROM lag(l.token) OVER (ORDER BY l.ord) THEN
              (SELECT s.steps FROM ledger_steps s WHERE s.account_id = l.account_id AND s.token = l.token)
            END AS steps
          FROM ledger_lots l WHERE l.account_id = ${accountId}
          ${token === undefined ? sql`` : sql`AND upper(l.token) = ${token.toUpperCase()}`} ORDER BY l.ord`,
        (rows) => {
          const stepsOf = new Map<string, ReadonlyArray<Ledger.StoredStep>>()
          return rows.map((r) => {
            if (r.steps !== null) stepsOf.set(r.token, r.steps)
            return make(r.row, stepsOf.get(r.token))
          })
        }
      )

    /** The open lots as the report lists them, with their steps' income. */
    const lots = (accountId: string, token: string | undefined) => storedLots(accountId, token, Ledger.expandLotRow)

    /**
     * A token's open lots as a sale estimate reads them: where each is held and what FIFO orders it by, the lot as
     * the report lists it made by `whole` (a lot's steps' income grows with the history; a sale draws from few lots).
     */
    const lotSources = (accountId: string, token: string) =>
      storedLots(accountId, token, (row, steps) => ({
        ...Ledger.lotRowHead(row),
        whole: () => Ledger.expandLotRow(row, steps)
      }))

    /**
     * The ids of the open lots behind positions, in order: a position's lots are its token's lots in its address's
     * pool (`wallet`), or in the account's pool (null, account lot scope); lots in transit belong to none.
     */
    const positionLotIds = (
      accountId: string,
      positions: ReadonlyArray<{ readonly token: string; readonly wallet: string | null }>
    ) =>
      positions.length === 0 ? Effect.succeed<Array<string>>([]) : Effect.map(
        sql<{ token: string; wallet: string | null; location: string; id: string }>`
          SELECT token, row->>'wallet' AS wallet, row->>'location' AS location, row->>'id' AS id FROM ledger_lots
          WHERE account_id = ${accountId} AND token IN ${sql.in([...new Set(positions.map((p) => p.token))])}
          ORDER BY ord`,
        (rows) => {
          const byPosition = new Map<string, Array<string>>()
          for (const row of rows) {
            if (row.location === "in_transit") continue
            const key = `${row.token}|${row.location === "wallet" ? row.wallet?.toLowerCase() : ""}`
            let ids = byPosition.get(key)
            if (ids === undefined) byPosition.set(key, ids = [])
            ids.push(row.id)
          }
          return positions.flatMap((p) => byPosition.get(`${p.token}|${p.wallet?.toLowerCase() ?? ""}`) ?? [])
        }
      )

    /** The pages of a table that pass `where`, in order, after `afterFirst`, `limit` at a time. */
    const pagesAfter = (
      table: "ledger_event_pages" | "ledger_disposal_pages",
      where: Statement.Fragment,
      afterFirst: number,
      limit: number
    ) =>
      sql<{ first_ord: string; lines: string }>`
        SELECT first_ord, lines FROM ${sql(table)} WHERE ${where} AND first_ord > ${afterFirst}
        ORDER BY first_ord LIMIT ${limit}`

    /** A page of events in chain order after position `afterOrd`, filtered; `hasMore` when another page follows. */
    const events = (
      accountId: string,
      filter: EventFilter,
      page: { readonly afterOrd: number | undefined; readonly limit: number }
    ) =>
      Effect.gen(function*() {
        const token = filter.token?.toUpperCase()
        const afterOrd = page.afterOrd ?? -1
        // Pages whose summary passes the filter, from the one holding the row after `afterOrd` on.
        const where = sql`account_id = ${accountId} AND first_ord + count > ${afterOrd + 1}
          ${token === undefined ? sql`` : sql`AND ${token} = ANY(tokens)`}
          ${filter.type === undefined ? sql`` : sql`AND ${filter.type} = ANY(types)`}
          ${filter.from === undefined ? sql`` : sql`AND last_day >= ${filter.from}`}
          ${filter.to === undefined ? sql`` : sql`AND first_day <= ${filter.to}`}
          ${
          filter.needsReview === undefined
            ? sql``
            : filter.needsReview
            ? sql`AND review_count > 0`
            : sql`AND review_count < count`
        }`
        const found: Array<{ ord: number; row: unknown }> = []
        let after = -1
        for (;;) {
          const [stored] = yield* pagesAfter("ledger_event_pages", where, after, 1)
          if (stored === undefined) break
          const first = Number(stored.first_ord)
          const records = eventRecords(stored.lines)
          for (let i = Math.max(0, afterOrd + 1 - first); i < records.length && found.length <= page.limit; i++) {
            const record = records.at(i)
            if (passes(filter, token, record)) found.push({ ord: first + i, row: record.row })
          }
          if (found.length > page.limit) break
          after = first
        }
        return {
          events: found.slice(0, page.limit).map((e) => ({
            ord: e.ord,
            row: Ledger.expandEventRow(e.row)
          })),
          hasMore: found.length > page.limit
        }
      })

    /** The id of the event row at position `ord` of the stored build, undefined when it holds none there. */
    const eventIdAt = (accountId: string, ord: number) =>
      Effect.map(
        sql<{ first_ord: string; lines: string }>`
          SELECT first_ord, lines FROM ledger_event_pages
          WHERE account_id = ${accountId} AND first_ord <= ${ord} AND first_ord + count > ${ord}`,
        ([page]) => page === undefined ? undefined : eventRecords(page.lines).at(ord - Number(page.first_ord)).id
      )

    /** The account's last `count` events, newest first. */
    const recentEvents = (accountId: string, count: number) =>
      Effect.gen(function*() {
        const out: Array<unknown> = []
        let before: number | undefined
        while (out.length < count) {
          const [stored] = yield* sql<{ first_ord: string; lines: string }>`
            SELECT first_ord, lines FROM ledger_event_pages WHERE account_id = ${accountId}
              ${before === undefined ? sql`` : sql`AND first_ord < ${before}`}
            ORDER BY first_ord DESC LIMIT 1`
          if (stored === undefined) break
          const records = eventRecords(stored.lines)
          for (let i = records.length - 1; i >= 0 && out.length < count; i--) {
            out.push(Ledger.expandEventRow(records.at(i).row))
          }
          before = Number(stored.first_ord)
        }
        return out
      })

    const countNeedingReview = (accountId: string) =>
      Effect.map(
        sql<
          { n: string | null }
        >`SELECT sum(review_count) AS n FROM ledger_event_pages WHERE account_id = ${accountId}`,
        (rows) => Number(rows[0]?.n ?? 0)
      )

    return {
      eventIdAt,
      state,
      claim,
      expireOlderThan,
      store,
      storeBuild,
      fail,
      renew,
      release,
      report,
      positions,
      lots,
      lotSources,
      positionLotIds,
      events,
      recentEvents,
      countNeedingReview
    } as const
  })
}) {}
