import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"

/** What the alert monitor reads about its accounts: facts the record already holds, nothing derived here. */
export interface HeldToken {
  readonly chainId: number
  readonly tokenKey: string
  readonly symbol: string | null
  /** Raw units (integer string). */
  readonly balance: string
}

export interface ChangeFact {
  readonly chainId: number
  readonly tokenKey: string
  readonly symbol: string | null
  readonly effectiveAt: Date
  readonly announcedAt: Date | null
  readonly oldMultiplier: string
  readonly newMultiplier: string
  readonly kind: "dividend" | "split"
  readonly block: string | null
  /** Raw balance the account held just before the change's block (accrued income only). */
  readonly balance: string
}

export interface PauseFact {
  readonly chainId: number
  readonly tokenKey: string
  readonly symbol: string | null
  readonly txHash: string
  readonly logIndex: number
  readonly at: Date
}

/** A token paused now, with the first fact of the current pause: a Paused event, or a `paused()` read. */
export interface TokenPauseFact {
  readonly chainId: number
  readonly tokenKey: string
  readonly symbol: string | null
  readonly block: number
  /** The event's transaction; null when the pause was first seen by a `paused()` read. */
  readonly txHash: string | null
  readonly logIndex: number | null
  readonly at: Date
}

/** A chain reader whose reads fail past the retry budget now. */
export interface DegradedReader {
  readonly chainId: number
  readonly reader: string
  readonly cause: string
  readonly error: string | null
  readonly since: Date
}

/** How late a dividend step may be recorded and still raise its `accrued-income` alert (then resolved at once). */
export const LATE_STEP_DAYS = 90

export interface LatestRound {
  readonly chainId: number
  readonly tokenKey: string
  readonly symbol: string | null
  /**
   * The newest round answering a price (above zero) and stamped no later than the chain's time or now, whichever is
   * later; the first round when none does.
   */
  readonly updatedAt: Date
  /** The chain's newest stored block's time (null before any): the clock a feed's silence is measured by. */
  readonly chainTime: Date | null
}

export interface ReviewBacklog {
  readonly count: number
  readonly topCounterparty: string | null
  readonly topCount: number
}

export interface DegradedBackfill {
  readonly walletId: string
  readonly address: string
  readonly status: "partial" | "failed"
  readonly error: string | null
  readonly at: Date
}

/** The record's watermark (`AlertSources.watermark`): the facts shared by every account, and each account's own. */
export interface Watermark {
  readonly shared: string
  readonly accounts: ReadonlyMap<string, string>
  /**
   * Per account, the part of its mark its held tokens depend on: its wallets, and the version of the last build its
   * own addresses' transfers asked for (`movement_version`: every transfer written or rolled back for them moves
   * it). Classification and builds move the account's mark, not this.
   */
  readonly holdings: ReadonlyMap<string, string>
}

/** An account's facts of one kind, read for many accounts at once: each account's list (none: empty). */
export type ByAccount<A> = ReadonlyMap<string, ReadonlyArray<A>>

/** Rows of many accounts as each account's list, in the rows' order. */
export const groupByAccount = <Row extends { readonly account_id: string }, A>(
  rows: ReadonlyArray<Row>,
  f: (row: Row) => A
): Map<string, Array<A>> => {
  const grouped = new Map<string, Array<A>>()
  for (const row of rows) {
    const key = String(row.account_id)
    const list = grouped.get(key)
    if (list === undefined) grouped.set(key, [f(row)])
    else list.push(f(row))
  }
  return grouped
}

/** `chains(chain_id)`: the chains with transfers, one index probe each (for a recursive `WITH`). */
const CHAINS = (sql: SqlClient.SqlClient) =>
  sql`chains(chain_id) AS (
    SELECT min(chain_id) FROM token_transfers
    UNION ALL
    SELECT (SELECT min(t.chain_id) FROM token_transfers t WHERE t.chain_id > c.chain_id)
    FROM chains c WHERE c.chain_id IS NOT NULL
  )`

/** Read-only queries behind the alert causes: facts shared by every account, and facts per account for many at once. */
export class AlertSources extends Effect.Service<AlertSources>()("@scaledger/db/AlertSources", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const accounts = Effect.map(
      sql<{ id: string; reporting_currency: string | null }>`
        SELECT a.id, s.reporting_currency FROM accounts a LEFT JOIN account_settings s ON s.account_id = a.id
        WHERE EXISTS (SELECT 1 FROM wallets w WHERE w.account_id = a.id)
           OR EXISTS (SELECT 1 FROM alerts l WHERE l.account_id = a.id AND l.resolved_at IS NULL)
           OR s.reporting_currency <> 'USD'
        ORDER BY a.id`,
      (rows) => rows.map((row) => ({ id: row.id, reportingCurrency: row.reporting_currency ?? "USD" }))
    )

    /**
     * Tokens each account's watched addresses hold now (net of transfers between them), raw balance > 0. Each side
     * of the accounts' transfers is read through its index, per chain that has transfers: a condition `to_key IN
     * (…) OR from_key IN (…)` on subqueries reads the whole table for every account.
     */
    const held = (accountIds: ReadonlyArray<string>) =>
      accountIds.length === 0 ? Effect.succeed(new Map() as ByAccount<HeldToken>) : Effect.map(
        sql<{ account_id: string; chain_id: number; token_key: string; symbol: string | null; balance: string }>`
          WITH RECURSIVE ${CHAINS(sql)}, own AS (
            SELECT account_id, address_key FROM wallets WHERE account_id IN ${sql.in(accountIds)}
          ), moves AS (
            SELECT o.account_id, t.chain_id, t.token_key, t.raw AS delta
            FROM chains c JOIN own o ON true JOIN token_transfers t ON t.chain_id = c.chain_id AND t.to_key = o.address_key
            UNION ALL
            SELECT o.account_id, t.chain_id, t.token_key, -t.raw
            FROM chains c JOIN own o ON true JOIN token_transfers t ON t.chain_id = c.chain_id AND t.from_key = o.address_key
          )
          SELECT m.account_id, m.chain_id, m.token_key, max(k.symbol) AS symbol, sum(m.delta) AS balance
          FROM moves m
          LEFT JOIN chain_tokens k ON k.chain_id = m.chain_id AND k.address_key = m.token_key
          GROUP BY m.account_id, m.chain_id, m.token_key
          ORDER BY m.account_id, m.chain_id, m.token_key`,
        (rows): ByAccount<HeldToken> =>
          groupByAccount(
            rows.filter((row) => BigInt(row.balance) > 0n),
            (row): HeldToken => ({
              chainId: Number(row.chain_id),
              tokenKey: row.token_key,
              symbol: row.symbol,
              balance: String(row.balance)
            })
          )
      )

    /**
     * The multiplier changes `where` selects (it may name the account as `a.id`), for each account, with the raw
     * balance the account's wallets that `counted` selects (`w`, beside the change `c`) held just before the change's
     * block (all of it for a change not in a block yet); only those where they held some.
     */
    const changeRows = (
      accountIds: ReadonlyArray<string>,
      where: Statement.Fragment,
      counted: Statement.Fragment = sql`TRUE`
    ) =>
      accountIds.length === 0 ? Effect.succeed(new Map() as ByAccount<ChangeFact>) : sql<{
        account_id: string
        chain_id: number
        token_key: string
        symbol: string | null
        effective_at: Date
        announced_at: Date | null
        old_multiplier: string
        new_multiplier: string
        kind: "dividend" | "split"
        block: string | null
        balance: string | null
      }>`
        SELECT a.id AS account_id, c.chain_id, c.token_key, k.symbol, c.effective_at, c.announced_at,
               c.old_multiplier, c.new_multiplier, c.kind, c.block,
               (SELECT sum(d.delta) FROM (
                  SELECT t.raw AS delta FROM wallets w
                  JOIN token_transfers t ON t.chain_id = c.chain_id AND t.to_key = w.address_key
                  WHERE w.account_id = a.id AND t.token_key = c.token_key AND ${counted}
                    AND (c.block IS NULL OR t.block < c.block)
                  UNION ALL
                  SELECT -t.raw FROM wallets w
                  JOIN token_transfers t ON t.chain_id = c.chain_id AND t.from_key = w.address_key
                  WHERE w.account_id = a.id AND t.token_key = c.token_key AND ${counted}
                    AND (c.block IS NULL OR t.block < c.block)
                ) d) AS balance
        FROM multiplier_changes c
        CROSS JOIN (SELECT id FROM accounts WHERE id IN ${sql.in(accountIds)}) a
        LEFT JOIN chain_tokens k ON k.chain_id = c.chain_id AND k.address_key = c.token_key
        WHERE ${where}
        ORDER BY a.id, c.effective_at, c.token_key`.pipe(
        Effect.map((rows): ByAccount<ChangeFact> =>
          groupByAccount(
            rows.filter((row) => row.balance !== null && BigInt(row.balance) > 0n),
            (row): ChangeFact => ({
              chainId: Number(row.chain_id),
              tokenKey: row.token_key,
              symbol: row.symbol,
              effectiveAt: row.effective_at,
              announcedAt: row.announced_at,
              oldMultiplier: String(row.old_multiplier),
              newMultiplier: String(row.new_multiplier),
              kind: row.kind,
              block: row.block === null ? null : String(row.block),
              balance: String(row.balance)
            })
          )
        )
      )

    /** Changes announced for a token each account holds that have not taken effect yet. */
    const pendingChanges = (accountIds: ReadonlyArray<string>) => changeRows(accountIds, sql`c.status = 'pending'`)

    /**
     * Dividend steps that raised the multiplier (a lower one adds no income: the ledger records none) on a token held
     * just before them by the account's wallets that were watched when the step took effect (at or after the
     * wallet's `watchingFrom`: history a backfill found, of any wallet, raises no alerts), at most `openDays` before
     * the chain's newest stored block (chain time, so a test chain's clock works the same); and older ones, up to
     * `LATE_STEP_DAYS`, of a token the account has received and has had no alert of yet (recorded late, after an
     * outage), so each step is told once.
     */
    const recentDividendSteps = (accountIds: ReadonlyArray<string>, openDays: number) =>
      changeRows(
        accountIds,
        sql`c.status = 'active' AND c.kind = 'dividend' AND c.new_multiplier > c.old_multiplier
          AND (c.effective_at >= (SELECT max(b.block_time) FROM chain_blocks b WHERE b.chain_id = c.chain_id)
                                 - make_interval(days => ${openDays})
            OR (c.effective_at >= (SELECT max(b.block_time) FROM chain_blocks b WHERE b.chain_id = c.chain_id)
                                  - make_interval(days => ${LATE_STEP_DAYS})
              AND EXISTS (
                SELECT 1 FROM wallets w JOIN token_transfers t ON t.chain_id = c.chain_id AND t.to_key = w.address_key
                WHERE w.account_id = a.id AND t.token_key = c.token_key)
              AND NOT EXISTS (
                SELECT 1 FROM alerts x WHERE x.account_id = a.id
                  AND x.cause_key = 'accrued-income:' || c.chain_id || ':' || c.token_key || ':'
                                    || (extract(epoch FROM c.effective_at) * 1000)::bigint)))`,
        sql`coalesce(w.watching_from_at, w.created_at) <= c.effective_at`
      )

    /** Tokens whose latest event of a pause pair (`paused` / `unpaused`) is the pause. */
    const latestPauses = (paused: string, unpaused: string) =>
      Effect.map(
        sql<
          {
            chain_id: number
            token_key: string
            symbol: string | null
            tx_hash: string
            log_index: number
            kind: string
            block_time: Date
          }
        >`
          SELECT DISTINCT ON (p.chain_id, p.token_key) p.chain_id, p.token_key, k.symbol, p.tx_hash, p.log_index,
                 p.kind, p.block_time
          FROM token_pause_events p
          LEFT JOIN chain_tokens k ON k.chain_id = p.chain_id AND k.address_key = p.token_key
          WHERE p.kind IN (${paused}, ${unpaused})
          ORDER BY p.chain_id, p.token_key, p.block DESC, p.log_index DESC`,
        (rows) =>
          rows.filter((row) => row.kind === paused).map((row): PauseFact => ({
            chainId: Number(row.chain_id),
            tokenKey: row.token_key,
            symbol: row.symbol,
            txHash: row.tx_hash,
            logIndex: Number(row.log_index),
            at: row.block_time
          }))
      )

    /**
     * Tokens paused now (whether held is decided by the caller), by Paused/Unpaused events and `paused()` reads
     * together: per block the last fact (a read after the events), the newest block decides, and the pause is named
     * by the first paused block since the last unpaused one, so a read confirming an event's pause, or an event
     * inside a pause already read, does not start a new one.
     */
    const pausedTokens = Effect.map(
      sql<{
        chain_id: number
        token_key: string
        symbol: string | null
        block: string
        tx_hash: string | null
        log_index: number | null
        block_time: Date
      }>`
        WITH facts AS (
          SELECT chain_id, token_key, block, block_time, kind = 'Paused' AS paused, 0 AS src, log_index, tx_hash
          FROM token_pause_events WHERE kind IN ('Paused', 'Unpaused')
          UNION ALL
          SELECT chain_id, token_key, block, block_time, paused, 1 AS src, NULL, NULL FROM token_pause_reads
        ), per_block AS (
          SELECT DISTINCT ON (chain_id, token_key, block) *
          FROM facts ORDER BY chain_id, token_key, block, src DESC, log_index DESC NULLS FIRST
        ), last_unpaused AS (
          SELECT chain_id, token_key, max(block) AS block FROM per_block WHERE NOT paused GROUP BY chain_id, token_key
        )
        SELECT DISTINCT ON (p.chain_id, p.token_key) p.chain_id, p.token_key, k.symbol, p.block, p.tx_hash,
               p.log_index, p.block_time
        FROM per_block p
        LEFT JOIN last_unpaused u ON u.chain_id = p.chain_id AND u.token_key = p.token_key
        LEFT JOIN chain_tokens k ON k.chain_id = p.chain_id AND k.address_key = p.token_key
        WHERE p.paused AND (u.block IS NULL OR p.block > u.block)
        ORDER BY p.chain_id, p.token_key, p.block`,
      (rows) =>
        rows.map((row): TokenPauseFact => ({
          chainId: Number(row.chain_id),
          tokenKey: row.token_key,
          symbol: row.symbol,
          block: Number(row.block),
          txHash: row.tx_hash,
          logIndex: row.log_index === null ? null : Number(row.log_index),
          at: row.block_time
        }))
    )

    /** Chain readers whose reads fail past the retry budget (`chain_read_health`). */
    const degradedReads = Effect.map(
      sql<{ chain_id: number; reader: string; cause: string; error: string | null; since: Date }>`
        SELECT chain_id, reader, cause, error, since FROM chain_read_health
        WHERE status = 'degraded' ORDER BY chain_id, reader`,
      (rows) =>
        rows.map((row): DegradedReader => ({
          chainId: Number(row.chain_id),
          reader: row.reader,
          cause: row.cause,
          error: row.error,
          since: row.since
        }))
    )

    /**
     * The newest recorded price-feed round of every token that has a feed, with the chain's time. A round answering
     * zero or less is no price: it does not count; nor does one stamped later than both the chain's time and `now`,
     * which no block could have carried yet (a chain recorded behind the price feeds still counts their rounds; with
     * no block recorded there is no chain time to check against).
     */
    const latestRounds = (now: Date) =>
      Effect.map(
        sql<{ chain_id: number; token_key: string; symbol: string | null; updated_at: Date; chain_time: Date | null }>`
        WITH clock AS (
          SELECT c.chain_id, (SELECT max(b.block_time) FROM chain_blocks b WHERE b.chain_id = c.chain_id) AS chain_time
          FROM (SELECT DISTINCT chain_id FROM price_rounds) c
        )
        SELECT r.chain_id, r.token_key, max(k.symbol) AS symbol,
               coalesce(max(r.updated_at) FILTER (WHERE r.answer > 0
                                                    AND (c.chain_time IS NULL
                                                      OR r.updated_at <= greatest(c.chain_time, ${now}::timestamptz))),
                        min(r.updated_at)) AS updated_at,
               c.chain_time
        FROM price_rounds r
        JOIN clock c ON c.chain_id = r.chain_id
        LEFT JOIN chain_tokens k ON k.chain_id = r.chain_id AND k.address_key = r.token_key
        GROUP BY r.chain_id, r.token_key, c.chain_time`,
        (rows) =>
          rows.map((row): LatestRound => ({
            chainId: Number(row.chain_id),
            tokenKey: row.token_key,
            symbol: row.symbol,
            updatedAt: row.updated_at,
            chainTime: row.chain_time
          }))
      )

    /** The time of each chain's newest stored block (the clock a feed's silence is measured by), one probe each. */
    const chainTimes = (chainIds: ReadonlyArray<number>) =>
      chainIds.length === 0 ? Effect.succeed(new Map<number, Date>()) : Effect.map(
        sql<{ chain_id: number; block_time: Date }>`
          SELECT c.chain_id, b.block_time
          FROM unnest(${`{${chainIds.join(",")}}`}::int[]) AS c(chain_id)
          CROSS JOIN LATERAL (SELECT block_time FROM chain_blocks WHERE chain_id = c.chain_id
                              ORDER BY number DESC LIMIT 1) b`,
        (rows) => new Map(rows.map((row) => [Number(row.chain_id), row.block_time]))
      )

    /** Tokens whose latest OraclePaused/OracleUnpaused event is `OraclePaused`. */
    const oraclePausedTokens = latestPauses("OraclePaused", "OracleUnpaused")

    /** Per account with any, the movements that need review and the counterparty most of them involve. */
    const reviewBacklog = (accountIds: ReadonlyArray<string>) =>
      accountIds.length === 0 ? Effect.succeed(new Map<string, ReviewBacklog>()) : Effect.map(
        sql<{ account_id: string; n: string; top: string | null; top_n: string }>`
          SELECT account_id, sum(n) AS n, (array_agg(counterparty ORDER BY n DESC, counterparty))[1] AS top,
                 max(n) AS top_n
          FROM (
            SELECT p.account_id, r->>4 AS counterparty, count(*) AS n
            FROM ledger_event_pages p, json_array_elements(p.review) r
            WHERE p.account_id IN ${sql.in(accountIds)} AND p.review_count > 0
            GROUP BY 1, 2
          ) g
          GROUP BY account_id`,
        (rows) =>
          new Map(rows.map((row): [string, ReviewBacklog] => [String(row.account_id), {
            count: Number(row.n),
            topCounterparty: row.top,
            topCount: Number(row.top_n)
          }]))
      )

    /** Wallets whose backfill ended `partial` or `failed`, per account. */
    const degradedBackfills = (accountIds: ReadonlyArray<string>) =>
      accountIds.length === 0 ? Effect.succeed(new Map() as ByAccount<DegradedBackfill>) : Effect.map(
        sql<
          {
            account_id: string
            id: string
            address: string
            backfill_status: "partial" | "failed"
            backfill_error: string | null
            updated_at: Date | null
            created_at: Date
          }
        >`
          SELECT w.account_id, w.id, w.address, w.backfill_status, w.backfill_error, b.updated_at, w.created_at
          FROM wallets w LEFT JOIN wallet_backfills b ON b.wallet_id = w.id
          WHERE w.account_id IN ${sql.in(accountIds)} AND w.backfill_status IN ('partial', 'failed')
          ORDER BY w.account_id, w.id`,
        (rows): ByAccount<DegradedBackfill> =>
          groupByAccount(rows, (row): DegradedBackfill => ({
            walletId: String(row.id),
            address: row.address,
            status: row.backfill_status,
            error: row.backfill_error,
            at: row.updated_at ?? row.created_at
          }))
      )

    /**
     * One cheap reading of everything the record-driven causes depend on, in two parts. `shared`: the facts every
     * account's causes read (multiplier changes, pause events and reads, chain read health, ECB days); when it moves,
     * every account needs a pass. `accounts`: per account, its own inputs (its wallets and their backfills, its
     * ledger build's versions, which move with every transfer recorded for it and every build, its settings, its
     * open alerts), for the accounts a pass covers (those with wallets or open alerts, and those reporting in another
     * currency than USD, whose ECB rates may be stale without a wallet); when only these move, only
     * those accounts need one. Equal readings mean no such cause can have changed. Time-driven causes (a silent
     * feed, stale rates, an income alert's window) are left to the monitor's safety pass.
     */
    const watermark = Effect.gen(function*() {
      const shared = yield* sql<{ mark: string }>`
        SELECT concat_ws('|',
          (SELECT count(*) || ':' || count(*) FILTER (WHERE status = 'active') FROM multiplier_changes),
          (SELECT count(*) || ':' || coalesce(max(block), 0) FROM token_pause_events),
          (SELECT count(*) || ':' || coalesce(max(id), 0) FROM token_pause_reads),
          (SELECT coalesce(max(updated_at)::text, '') FROM chain_read_health),
          (SELECT coalesce(max(day)::text, '') FROM fx_rates)
        ) AS mark`
      const perAccount = yield* sql<{ id: string; mark: string; holdings: string }>`
        SELECT a.id, coalesce(w.mark, '') || '|' || coalesce(b.requested_version || ':' || b.built_version, '')
               || '|' || coalesce(s.updated_at::text, '') || '|' || coalesce(l.open, 0) AS mark,
               coalesce(w.mark, '') || '|' || coalesce(b.movement_version, 0) AS holdings
        FROM accounts a
        LEFT JOIN (
          SELECT w.account_id, count(*) || ':' || max(w.id) || ':'
                 || count(*) FILTER (WHERE w.backfill_status IN ('partial', 'failed')) || ':'
                 || coalesce(max(wb.updated_at)::text, '') AS mark
          FROM wallets w LEFT JOIN wallet_backfills wb ON wb.wallet_id = w.id
          GROUP BY w.account_id
        ) w ON w.account_id = a.id
        LEFT JOIN ledger_builds b ON b.account_id = a.id
        LEFT JOIN account_settings s ON s.account_id = a.id
        LEFT JOIN (
          SELECT account_id, count(*) AS open FROM alerts WHERE resolved_at IS NULL GROUP BY account_id
        ) l ON l.account_id = a.id
        WHERE w.account_id IS NOT NULL OR l.account_id IS NOT NULL OR s.reporting_currency <> 'USD'`
      return {
        shared: shared[0]?.mark ?? "",
        accounts: new Map(perAccount.map((row) => [String(row.id), row.mark])),
        holdings: new Map(perAccount.map((row) => [String(row.id), row.holdings]))
      } satisfies Watermark
    })

    return {
      watermark,
      accounts,
      held,
      pendingChanges,
      recentDividendSteps,
      pausedTokens,
      latestRounds,
      chainTimes,
      oraclePausedTokens,
      reviewBacklog,
      degradedBackfills,
      degradedReads
    } as const
  })
}) {}
