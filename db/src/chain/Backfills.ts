import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

export type BackfillPhase = "transfers" | "multipliers" | "done"

export interface BackfillJob {
  readonly walletId: string
  readonly chainId: number
  readonly address: string
  readonly fromBlock: number
  /** Null until a worker first takes the job and fixes the range's end at the head it sees then. */
  readonly targetBlock: number | null
  readonly nextBlock: number
  readonly phase: BackfillPhase
  readonly attempts: number
}

const toJob = (row: any): BackfillJob => ({
  walletId: row.wallet_id,
  chainId: row.chain_id,
  address: row.address_key,
  fromBlock: Number(row.from_block),
  targetBlock: row.target_block === null ? null : Number(row.target_block),
  nextBlock: Number(row.next_block),
  phase: row.phase,
  attempts: row.attempts
})

/** Durable per-wallet backfill jobs: claimed with a lease (`FOR UPDATE SKIP LOCKED`), advanced by checkpoints. */
export class Backfills extends Effect.Service<Backfills>()("@scaledger/db/Backfills", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Leases up to `limit` due jobs of the chain to `owner` (jobs whose lease expired count as due: their worker
     * died). Skips jobs other workers hold.
     */
    const claim = (chainId: number, owner: string, limit: number, leaseSeconds: number) =>
      Effect.map(
        sql`UPDATE wallet_backfills SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseSeconds})
            WHERE wallet_id IN (
              SELECT wallet_id FROM wallet_backfills
              WHERE chain_id = ${chainId} AND phase <> 'done' AND retry_at <= now()
                AND (lease_until IS NULL OR lease_until < now() OR lease_owner = ${owner})
              ORDER BY retry_at, wallet_id
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED)
            RETURNING *`,
        (rows) => rows.map(toJob)
      )

    /** Extends the lease; false when the job is gone (the wallet was deleted) or another worker took it. */
    const renew = (walletId: string, owner: string, leaseSeconds: number) =>
      Effect.map(
        sql`UPDATE wallet_backfills SET lease_until = now() + make_interval(secs => ${leaseSeconds})
            WHERE wallet_id = ${walletId} AND lease_owner = ${owner} RETURNING wallet_id`,
        (rows) => rows.length > 0
      )

    const release = (walletId: string, owner: string) =>
      sql`UPDATE wallet_backfills SET lease_owner = NULL, lease_until = NULL
          WHERE wallet_id = ${walletId} AND lease_owner = ${owner}`.pipe(Effect.asVoid)

    const find = (walletId: string) =>
      Effect.map(
        sql`SELECT * FROM wallet_backfills WHERE wallet_id = ${walletId}`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toJob)
      )

    /** Fixes the range on first start. */
    const start = (walletId: string, fromBlock: number, targetBlock: number) =>
      Effect.gen(function*() {
        yield* sql`UPDATE wallet_backfills SET from_block = ${fromBlock}, target_block = ${targetBlock},
                     next_block = ${fromBlock}, updated_at = now()
                   WHERE wallet_id = ${walletId} AND target_block IS NULL`
        yield* sql`UPDATE wallets SET backfill_blocks_total = ${Math.max(0, targetBlock - fromBlock + 1)},
                     backfill_blocks_done = 0
                   WHERE id = ${walletId}`
      })

    /** Records progress: the next block to fetch (the phase's work below it is stored). */
    const advance = (walletId: string, nextBlock: number, blocksDone: number) =>
      Effect.gen(function*() {
        yield* sql`UPDATE wallet_backfills SET next_block = ${nextBlock}, attempts = 0, last_error = NULL, updated_at = now()
                   WHERE wallet_id = ${walletId}`
        yield* sql`UPDATE wallets SET backfill_blocks_done = ${blocksDone} WHERE id = ${walletId}`
      })

    const enterPhase = (walletId: string, phase: BackfillPhase) =>
      sql`UPDATE wallet_backfills SET phase = ${phase}, updated_at = now() WHERE wallet_id = ${walletId}`.pipe(
        Effect.asVoid
      )

    /**
     * Summarizes the block ranges of `recorded_xid`'s BRIN index that a backfill's transfers filled: until then every
     * incremental ledger build's check reads those pages (PGlite has no autovacuum to do it; PostgreSQL's does it
     * only as each range fills). The last, partial range is summarized too and kept so by later inserts. Run after
     * the job's transaction (it locks the table against other summaries and vacuums). An optimisation only: a failure
     * is logged, never the backfill's.
     */
    const summarizeRecorded = sql`SELECT brin_summarize_new_values('token_transfers_recorded'::regclass)`.pipe(
      Effect.asVoid,
      Effect.catchAll((error) => Effect.logWarning("summarizing token_transfers_recorded failed", error))
    )

    /** The job is done: `complete` without coverage gaps, `partial` with some. */
    const finish = (walletId: string) =>
      Effect.gen(function*() {
        // Done: an attempt that failed before the one that finished leaves no error behind.
        yield* sql`UPDATE wallet_backfills SET phase = 'done', attempts = 0, last_error = NULL, lease_owner = NULL,
                     lease_until = NULL, updated_at = now()
                   WHERE wallet_id = ${walletId}`
        yield* sql`UPDATE wallets SET
                     backfill_status = CASE WHEN EXISTS (SELECT 1 FROM coverage_gaps g WHERE g.wallet_id = wallets.id)
                                            THEN 'partial' ELSE 'complete' END,
                     backfill_error = NULL
                   WHERE id = ${walletId}`
      })

    /**
     * A failed attempt, counted from the job's stored count (progress since the claim reset it: `advance`): retried
     * after a wait doubling per consecutive failure (at most 10 minutes), or, at the last attempt, the wallet shows
     * `failed`. Answers which attempt this was and whether it was the last (`held: false`, changing nothing, when
     * another worker holds the job now).
     */
    const attemptFailed = (
      walletId: string,
      owner: string,
      error: string,
      policy: { readonly maxAttempts: number; readonly retryBaseMs: number }
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        // Only while the job is still this worker's: once its lease lapsed and another worker took the job, this
        // attempt's end is not the job's (it would take the job from the worker running it, or fail it).
        const rows = yield* sql<{ attempts: number }>`
          SELECT attempts FROM wallet_backfills WHERE wallet_id = ${walletId} AND lease_owner = ${owner} FOR UPDATE`
        if (rows.length === 0) return { attempt: 0, last: false, held: false }
        const failed = Number(rows[0]!.attempts)
        const attempt = failed + 1
        const last = attempt >= policy.maxAttempts
        if (last) {
          yield* sql`UPDATE wallet_backfills SET phase = 'done', last_error = ${error}, lease_owner = NULL, lease_until = NULL,
                       updated_at = now() WHERE wallet_id = ${walletId}`
          yield* sql`UPDATE wallets SET backfill_status = 'failed', backfill_error = ${error} WHERE id = ${walletId}`
        } else {
          const retryAt = new Date(Date.now() + Math.min(policy.retryBaseMs * 2 ** failed, 10 * 60_000))
          yield* sql`UPDATE wallet_backfills SET attempts = attempts + 1, last_error = ${error}, retry_at = ${retryAt},
                       lease_owner = NULL, lease_until = NULL, updated_at = now() WHERE wallet_id = ${walletId}`
        }
        return { attempt, last, held: true }
      }))

    /**
     * Serialises fixing a job's range against the recorder's first start (in the caller's transaction): a range
     * fixed before it is extended by it, one fixed after it reads its cursor.
     */
    const lockRanges = sql`SELECT pg_advisory_xact_lock(hashtext('scaledger:backfill-ranges'))`.pipe(Effect.asVoid)

    /**
     * Extends every job of the chain whose range ends below `block` to end there (the recorder's first cursor: the
     * blocks between are recorded by neither otherwise). A job past its transfers re-opens at the block after its
     * old end; a failed one stays failed.
     */
    const extendTo = (chainId: number, block: number) =>
      sql`WITH extended AS (
            UPDATE wallet_backfills b SET
              phase = 'transfers',
              next_block = CASE WHEN b.phase = 'transfers' THEN b.next_block ELSE b.target_block + 1 END,
              retry_at = CASE WHEN b.phase = 'done' THEN now() ELSE b.retry_at END,
              target_block = ${block}, updated_at = now()
            WHERE b.chain_id = ${chainId} AND b.target_block < ${block}
              AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.id = b.wallet_id AND w.backfill_status = 'failed')
            RETURNING b.wallet_id, b.from_block, b.target_block)
          UPDATE wallets w SET backfill_status = 'running', backfill_blocks_total = e.target_block - e.from_block + 1
          FROM extended e WHERE w.id = e.wallet_id`.pipe(Effect.asVoid)

    return {
      summarizeRecorded,
      claim,
      renew,
      release,
      find,
      start,
      advance,
      enterPhase,
      finish,
      attemptFailed,
      lockRanges,
      extendTo
    } as const
  })
}) {}
