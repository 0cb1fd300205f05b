import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type {
  Classification,
  CounterpartyLabel,
  MultiplierEvent,
  TransferEvent
} from "@scaledger/domain/ledger/LedgerInput"
import { Chunk, Effect, Option, Stream } from "effect"

export interface LedgerToken {
  readonly key: string
  readonly address: string
  /** The symbol the ledger and the API name the token by; the address for a token no list names. */
  readonly symbol: string
}

/** Everything a build needs besides the transfers (which are streamed in chain order) and the prices. */
export interface AccountLedgerInputs {
  readonly wallets: ReadonlyArray<{ readonly address: string; readonly self: boolean }>
  readonly country: "US" | "SG" | "DE"
  readonly currency: string
  readonly tokens: ReadonlyArray<LedgerToken>
  readonly multiplierEvents: ReadonlyArray<MultiplierEvent>
  /** Per token symbol, the multiplier in force before its first recorded change (raw, 18 decimals). */
  readonly initialMultipliers: Readonly<Record<string, string>>
  /** Every UTC date an event falls on: the dates figures are converted at. */
  readonly dates: ReadonlyArray<string>
  /** How many transfers were read for them (only those after the cursor, for a load `since` a checkpoint). */
  readonly transferCount: number
  /** The counterparty labels the account confirmed in review, by lowercase address. */
  readonly labels: Readonly<Record<string, CounterpartyLabel>>
  /** Changes whenever a counterparty label changes: a checkpoint built before it no longer holds. */
  readonly classificationStamp: string
}

type ClassificationColumns = {
  c_type: string | null
  c_relationship: string | null
  c_classified_by: string | null
  c_confirmed: boolean | null
}

/** A stored classification as the ledger takes it (none while the worker has not decided). */
const classificationOf = (row: ClassificationColumns): Classification | null =>
  row.c_type === null || row.c_classified_by === null
    ? null
    : {
      type: row.c_type as Classification["type"],
      relationship: row.c_relationship as Classification["relationship"],
      classifiedBy: row.c_classified_by as Classification["classifiedBy"],
      confirmed: row.c_confirmed ?? false
    }

const PAGE = 20_000
/** The first window of a read of transfers spans this fraction of the account's blocks still to read. */
const WINDOWS = 64

/**
 * What an incremental build already knows of the account's transfers up to a checkpoint's position: their tokens
 * (keys) and the dates they fall on. A load given it reads only the transfers after that position.
 */
export interface LoadSince {
  readonly block: number
  readonly logIndex: number
  readonly tokenKeys: ReadonlyArray<string>
  readonly dates: ReadonlyArray<string>
}

/** What a build learns of the transfers it streams besides the events (see `LedgerInputs.transfers`). */
export interface TransfersSeen {
  readonly waiting: Set<string>
}

/** A transfer as the chain record holds it: the ledger's event, and the hash of its block as it was read. */
export interface RecordedTransfer extends TransferEvent {
  readonly blockHash: string
}

/** The ledger's identifiers of chain records: stable across rebuilds. */
export const transferEventId = (txHash: string, logIndex: number) => `${txHash}:${logIndex}`
export const multiplierEventId = (tokenKey: string, effectiveAt: Date) =>
  `multiplier:${tokenKey}:${Math.floor(effectiveAt.getTime() / 1000)}`

/** Reads an account's ledger inputs from the chain record. */
export class LedgerInputs extends Effect.Service<LedgerInputs>()("@scaledger/db/LedgerInputs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const ownKeys = (accountId: string) => sql`SELECT address_key FROM wallets WHERE account_id = ${accountId}`
    const involves = (accountId: string) =>
      sql`(t.from_key IN (${ownKeys(accountId)}) OR t.to_key IN (${ownKeys(accountId)}))`

    /** Transfers after (block, log index); the plain bound on `block` lets the planner use the block index. */
    const after = (position: readonly [number, number] | undefined) =>
      position === undefined
        ? sql``
        : sql`AND t.block >= ${position[0]} AND (t.block, t.log_index) > (${position[0]}, ${position[1]})`

    /** Everything `load` reads, in one statement (one round trip, one snapshot); numbers as text, dates as text. */
    type Loaded = {
      wallets: Array<{ address: string; self: boolean }> | null
      settings: { country: "US" | "SG" | "DE"; currency: string } | null
      groups: Array<{ token_key: string; day: string; n: string }> | null
      listed: Array<{ address_key: string; address: string; symbol: string | null }> | null
      changes:
        | Array<{
          token_key: string
          effective_at: string
          old_multiplier: string
          new_multiplier: string
          kind: "dividend" | "split"
          block: string
        }>
        | null
      starts: Array<{ token_key: string; start_multiplier: string | null }> | null
      labels:
        | Array<{
          address: string
          relationship: CounterpartyLabel["relationship"]
          classified_by: CounterpartyLabel["classifiedBy"]
          confirmed: boolean
        }>
        | null
    }
    const parsed = <A>(value: A | string): A => (typeof value === "string" ? JSON.parse(value) as A : value)

    const load = (accountId: string, chainId: number, since?: LoadSince) =>
      Effect.gen(function*() {
        // One pass over the account's transfers (after `since`) gives its tokens, the dates they fall on and how many
        // there are; the tokens' listing and multiplier changes are read for those and the ones `since` knows. Days
        // are formatted per group, not per transfer (half the statement's time at 100,000 transfers).
        const [loaded] = yield* sql<{ data: Loaded | string }>`
          WITH g AS (
            SELECT token_key, to_char(day, 'YYYY-MM-DD') AS day, n::text AS n FROM (
              SELECT t.token_key, (t.block_time AT TIME ZONE 'UTC')::date AS day, count(*) AS n
              FROM token_transfers t
              WHERE t.chain_id = ${chainId} AND ${involves(accountId)}
                ${after(since === undefined ? undefined : [since.block, since.logIndex])}
              GROUP BY 1, 2
            ) d
          ), k AS (
            SELECT token_key FROM g
            UNION SELECT json_array_elements_text(${JSON.stringify(since?.tokenKeys ?? [])}::json)
          )
          SELECT json_build_object(
            'wallets', (SELECT json_agg(json_build_object('address', address, 'self', self) ORDER BY id)
                        FROM wallets WHERE account_id = ${accountId}),
            'settings', (SELECT json_build_object('country', country, 'currency', reporting_currency)
                         FROM account_settings WHERE account_id = ${accountId}),
            'groups', (SELECT json_agg(g) FROM g),
            'listed', (SELECT json_agg(json_build_object('address_key', address_key, 'address', address,
                                                         'symbol', symbol))
                       FROM chain_tokens WHERE chain_id = ${chainId} AND address_key IN (SELECT token_key FROM k)),
            'changes', (SELECT json_agg(json_build_object('token_key', token_key,
                          'effective_at', to_char(effective_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                          'old_multiplier', old_multiplier::text, 'new_multiplier', new_multiplier::text,
                          'kind', kind, 'block', block::text) ORDER BY block, effective_at, token_key)
                        FROM multiplier_changes
                        WHERE chain_id = ${chainId} AND status = 'active' AND token_key IN (SELECT token_key FROM k)),
            'starts', (SELECT json_agg(json_build_object('token_key', token_key,
                                                         'start_multiplier', start_multiplier::text))
                       FROM multiplier_coverage
                       WHERE chain_id = ${chainId} AND token_key IN (SELECT token_key FROM k)),
            'labels', (SELECT json_agg(json_build_object('address', address, 'relationship', relationship,
                          'classified_by', classified_by, 'confirmed', confirmed) ORDER BY address_key)
                       FROM counterparty_labels WHERE account_id = ${accountId})
          ) AS data`
        const data = parsed(loaded!.data)
        const wallets = data.wallets ?? []
        const settings = data.settings
        const groups = data.groups ?? []
        const tokenKeys = [...new Set([...(since?.tokenKeys ?? []), ...groups.map((row) => row.token_key)])].sort()
        const listing = new Map((data.listed ?? []).map((row) => [row.address_key, row]))
        const tokens = tokenKeys.map((key): LedgerToken => {
          const listed = listing.get(key)
          return { key, address: listed?.address ?? key, symbol: listed?.symbol ?? listed?.address ?? key }
        })
        const byKey = new Map(tokens.map((token) => [token.key, token]))
        const changes = (data.changes ?? []).map((change) => ({
          ...change,
          effective_at: new Date(change.effective_at)
        }))
        const multiplierEvents = changes.map((change): MultiplierEvent => {
          const token = byKey.get(change.token_key)!
          return {
            id: multiplierEventId(change.token_key, change.effective_at),
            kind: "multiplier",
            token: token.symbol,
            tokenAddress: token.address,
            from: change.old_multiplier,
            to: change.new_multiplier,
            effectiveAt: Math.floor(change.effective_at.getTime() / 1000),
            block: Number(change.block),
            logIndex: -1,
            stepKind: change.kind
          }
        })
        // Announcements are complete from coverage on: before a token's first change, its `from` was in force;
        // a token that never changed has the multiplier read when watching began (1.0 if never read).
        const initialMultipliers: Record<string, string> = {}
        for (const token of tokens) {
          const first = multiplierEvents.find((event) => event.tokenAddress === token.address)
          if (first !== undefined) initialMultipliers[token.symbol] = first.from
        }
        for (const start of data.starts ?? []) {
          const token = byKey.get(start.token_key)!
          if (initialMultipliers[token.symbol] === undefined && start.start_multiplier !== null) {
            initialMultipliers[token.symbol] = start.start_multiplier
          }
        }
        const labelRows = data.labels ?? []
        const labels: Record<string, CounterpartyLabel> = {}
        for (const row of labelRows) {
          labels[row.address] = {
            relationship: row.relationship,
            classifiedBy: row.classified_by,
            confirmed: row.confirmed
          }
        }
        // Classifications are not in it: a build holds its checkpoint behind the first transfer still waiting for
        // one, and `recordedSince` tells when one at or before a checkpoint's position changed.
        const classificationStamp = labelRows.map((row) => `${row.address}=${row.relationship}`).join(",")
        const dates = new Set([...(since?.dates ?? []), ...groups.map((row) => row.day)])
        for (const change of changes) dates.add(change.effective_at.toISOString().slice(0, 10))
        return {
          wallets,
          country: settings?.country ?? "US",
          currency: settings?.currency ?? "USD",
          tokens,
          multiplierEvents,
          initialMultipliers,
          dates: [...dates].sort(),
          transferCount: groups.reduce((sum, row) => sum + Number(row.n), 0),
          labels,
          classificationStamp
        } satisfies AccountLedgerInputs
      })

    /**
     * The account's transfers in chain order, a page at a time; only those after `after` (block, log index) when
     * given, for an incremental build. Each page reads one window of blocks (at most `pageSize` rows of it, keyset on
     * block and log index), so a page costs the rows of its window and a long history is read once, not once per
     * page; the window widens while pages come back sparse and narrows when one fills. The ids of the transfers still
     * waiting for their classification (no decision stored yet, on an account whose transfers are being classified)
     * are added to `seen.waiting`, when given.
     */
    const afterPosition = after
    const transfers = (
      accountId: string,
      chainId: number,
      tokens: ReadonlyArray<LedgerToken>,
      after?: readonly [number, number],
      seen?: TransfersSeen,
      pageSize = PAGE
    ) => {
      const byKey = new Map(tokens.map((token) => [token.key, token]))
      type Row = ClassificationColumns & {
        tx_hash: string
        log_index: number
        block: string
        block_seconds: number
        token_key: string
        from_address: string
        to_address: string
        raw: string
        block_hash: string
        c_waiting: boolean
      }
      // The classification is looked up by key for each transfer (LATERAL with LIMIT: never flattened into a join).
      // As a plain join, planned without statistics (tables a backfill and the classifier just filled, not analyzed
      // yet: one row estimated on each side), it read all the account's classifications for every transfer.
      const page = (after: readonly [number, number], span: number) =>
        sql<Row>`
          SELECT t.tx_hash, t.log_index, t.block, t.block_hash, t.token_key, t.from_address, t.to_address, t.raw,
            floor(date_part('epoch', t.block_time)) AS block_seconds,
            c.type AS c_type, c.relationship AS c_relationship, c.classified_by AS c_classified_by,
            c.confirmed AS c_confirmed,
            (c.status IS NULL AND EXISTS (
              SELECT 1 FROM transfer_classifications q WHERE q.account_id = ${accountId} AND q.chain_id = ${chainId}
            )) AS c_waiting
          FROM token_transfers t
          LEFT JOIN LATERAL (
            SELECT c.type, c.relationship, c.classified_by, c.confirmed, c.status FROM transfer_classifications c
            WHERE c.account_id = ${accountId} AND c.chain_id = t.chain_id AND c.tx_hash = t.tx_hash
              AND c.log_index = t.log_index AND c.status = 'done'
            LIMIT 1
          ) c ON true
          WHERE t.chain_id = ${chainId} AND ${involves(accountId)}
            ${afterPosition(after)} AND t.block < ${after[0] + span}
          ORDER BY t.block, t.log_index
          LIMIT ${pageSize}`
      /** The account's first and last transfer blocks, each an index lookup per own address and side. */
      const bounds = Effect.map(
        sql<{ first: string | null; last: string | null }>`
          SELECT min(b.first) AS first, max(b.last) AS last FROM wallets w CROSS JOIN LATERAL (
            SELECT (SELECT min(block) FROM token_transfers WHERE chain_id = ${chainId} AND from_key = w.address_key) AS first,
                   (SELECT max(block) FROM token_transfers WHERE chain_id = ${chainId} AND from_key = w.address_key) AS last
            UNION ALL
            SELECT (SELECT min(block) FROM token_transfers WHERE chain_id = ${chainId} AND to_key = w.address_key),
                   (SELECT max(block) FROM token_transfers WHERE chain_id = ${chainId} AND to_key = w.address_key)
          ) b WHERE w.account_id = ${accountId}`,
        (rows) => {
          const { first, last } = rows[0] ?? { first: null, last: null }
          return first === null || last === null ? undefined : { first: Number(first), last: Number(last) }
        }
      )
      type Cursor = { readonly after: readonly [number, number]; readonly span: number; readonly last: number }
      const start = Effect.map(bounds, (range): Cursor | undefined => {
        if (range === undefined) return undefined
        const from: readonly [number, number] = after !== undefined && after[0] >= range.first
          ? after
          : [range.first, -1]
        return { after: from, span: Math.max(1, Math.ceil((range.last - from[0] + 1) / WINDOWS)), last: range.last }
      })
      const nextCursor = (cursor: Cursor, rows: ReadonlyArray<Row>): Cursor | undefined => {
        if (rows.length === pageSize) {
          // The window held more than a page: go on from the last row, with a narrower window.
          const last = rows[rows.length - 1]!
          return {
            after: [Number(last.block), last.log_index],
            span: Math.max(1, Math.floor(cursor.span / 2)),
            last: cursor.last
          }
        }
        const from = cursor.after[0] + cursor.span
        if (from > cursor.last) return undefined
        const span = rows.length < pageSize / 4 ? cursor.span * 2 : cursor.span
        return { after: [from, -1], span, last: cursor.last }
      }
      type Page = readonly [Chunk.Chunk<RecordedTransfer>, Option.Option<Cursor>]
      /** The next window with transfers in it (a page is empty only at the end: the build reads one as the end). */
      const step = (cursor: Cursor): Effect.Effect<Page, SqlError> =>
        Effect.flatMap(page(cursor.after, cursor.span), (rows): Effect.Effect<Page, SqlError> => {
          // A transfer of a token `tokens` does not hold was recorded after the build read its inputs: the stream
          // ends before it, and the build its recording asked for takes it with its token, day and rates.
          const unknown = rows.findIndex((row) => !byKey.has(row.token_key))
          const known = unknown === -1 ? rows : rows.slice(0, unknown)
          // Every event of one shape (`classification` null when there is none): the ledger reads them all alike.
          const events = known.map((row): RecordedTransfer => {
            const token = byKey.get(row.token_key)!
            const id = transferEventId(row.tx_hash, row.log_index)
            if (seen !== undefined && row.c_waiting) seen.waiting.add(id)
            return {
              id,
              kind: "transfer",
              token: token.symbol,
              tokenAddress: token.address,
              from: row.from_address,
              to: row.to_address,
              raw: row.raw,
              block: Number(row.block),
              logIndex: row.log_index,
              txHash: row.tx_hash,
              timestamp: row.block_seconds,
              classification: classificationOf(row),
              blockHash: row.block_hash
            }
          })
          const next = unknown !== -1 ? undefined : nextCursor(cursor, rows)
          if (events.length === 0 && next !== undefined) return step(next)
          return Effect.succeed([Chunk.unsafeFromArray(events), Option.fromNullable(next)] as const)
        })
      return Stream.unwrap(
        Effect.map(start, (first) => first === undefined ? Stream.empty : Stream.paginateChunkEffect(first, step))
      )
    }

    /**
     * A watermark of recorded transfers: the database's snapshot now (`pg_current_snapshot()`). A transfer recorded
     * by a transaction it does not see (not committed yet) may be missed by reads made after it; every other one is
     * seen by them.
     */
    const recordedWatermark = Effect.map(
      sql<{ snapshot: string }>`SELECT pg_current_snapshot()::text AS snapshot`,
      (rows) => rows[0]!.snapshot
    )

    /**
     * Whether a transfer of the account at or before (block, log index) was recorded by a transaction `watermark`
     * did not see: one a build that took it may have missed (a backfill behind the live recorder); or whether the
     * classification of such a transfer was decided or changed since (a user relabelling an old movement, a model
     * failure queued again). Reads only the rows written since the snapshot's oldest running transaction (BRIN on
     * `recorded_xid`, the partial index on `changed_xid`), not the account's whole history.
     */
    const changedSince = (accountId: string, chainId: number, watermark: string, block: number, logIndex: number) =>
      sql`EXISTS (SELECT 1 FROM token_transfers t
          WHERE t.recorded_xid >= split_part(${watermark}, ':', 1)::bigint
            AND NOT pg_visible_in_snapshot(t.recorded_xid::text::xid8, ${watermark}::pg_snapshot)
            AND t.chain_id = ${chainId} AND ${
        involves(accountId)
      } AND (t.block, t.log_index) <= (${block}, ${logIndex}))
        OR EXISTS (SELECT 1 FROM transfer_classifications c
          JOIN token_transfers t ON t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash AND t.log_index = c.log_index
          WHERE c.account_id = ${accountId} AND c.changed_xid >= split_part(${watermark}, ':', 1)::bigint
            AND NOT pg_visible_in_snapshot(c.changed_xid::text::xid8, ${watermark}::pg_snapshot)
            AND c.chain_id = ${chainId} AND (t.block, t.log_index) <= (${block}, ${logIndex}))`

    /**
     * What tells whether a checkpoint at (block, log index) still holds, in one statement: whether anything at or
     * before it changed since `watermark` (`changedSince`), the block hash its last transfer is recorded with now
     * (null when rolled back), and the first block of the account's provisional transfers after it (null: none).
     */
    const resumeCheck = (
      accountId: string,
      chainId: number,
      watermark: string,
      cursor: { readonly block: number; readonly logIndex: number },
      last: { readonly txHash: string; readonly logIndex: number } | null
    ) =>
      Effect.map(
        sql<{ changed: boolean; last_hash: string | null; provisional: string | null }>`
          SELECT ${changedSince(accountId, chainId, watermark, cursor.block, cursor.logIndex)} AS changed,
            (SELECT block_hash FROM token_transfers
             WHERE chain_id = ${chainId} AND tx_hash = ${last?.txHash ?? ""} AND log_index = ${last?.logIndex ?? -1})
              AS last_hash,
            (SELECT min(t.block) FROM token_transfers t
             WHERE t.chain_id = ${chainId} AND t.provisional AND ${involves(accountId)} AND t.block > ${cursor.block})
              AS provisional`,
        ([row]) => ({
          changed: row!.changed,
          lastHash: row!.last_hash,
          provisionalFrom: row!.provisional === null ? null : Number(row!.provisional)
        })
      )

    /** The block hash a transfer is recorded with, null when it is not recorded (rolled back by a re-org). */
    const blockHashOf = (chainId: number, txHash: string, logIndex: number) =>
      Effect.map(
        sql<{ block_hash: string }>`SELECT block_hash FROM token_transfers
                                     WHERE chain_id = ${chainId} AND tx_hash = ${txHash} AND log_index = ${logIndex}`,
        (rows) => rows[0]?.block_hash ?? null
      )

    /**
     * The first block of the account's provisional transfers (newer than the finality depth), null when none; only
     * those after `block` when given (a checkpoint's cursor: its events are all final).
     */
    const provisionalFrom = (accountId: string, chainId: number, block?: number) =>
      Effect.map(
        sql<{ block: string | null }>`
          SELECT min(t.block) AS block FROM token_transfers t
          WHERE t.chain_id = ${chainId} AND t.provisional AND ${involves(accountId)}
            ${block === undefined ? sql`` : sql`AND t.block > ${block}`}`,
        (rows) => (rows[0]?.block === null || rows[0]?.block === undefined ? null : Number(rows[0].block))
      )

    return { load, transfers, recordedWatermark, resumeCheck, blockHashOf, provisionalFrom } as const
  })
}) {}
