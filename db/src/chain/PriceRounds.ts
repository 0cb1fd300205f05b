import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { PriceRound } from "@scaledger/domain/ledger/LedgerInput"
import { Array as Arr, Effect, Option } from "effect"
import { invalidateLedgers } from "../ledger/LedgerBuilds.js"

/** One AggregatorV3 round as the feed answered it; `answer` is raw, in the feed's `decimals`. */
export interface PriceRoundRow {
  /** Checksummed. */
  readonly feed: string
  readonly token: string
  readonly roundId: bigint
  readonly answer: bigint
  readonly decimals: number
  /** Unix seconds. */
  readonly startedAt: number
  readonly updatedAt: number
  readonly answeredInRound: bigint
}

/** Where a feed's recording has got to (see migration 0005). */
export interface FeedProgress {
  /** Checksummed. */
  readonly feed: string
  readonly token: string
  readonly decimals: number
  /** The stored rounds form the unbroken run `[oldestRoundId, newestRoundId]`. */
  readonly newestRoundId: bigint
  readonly oldestRoundId: bigint
  /** Unix seconds of the oldest stored round. */
  readonly oldestUpdatedAt: number
  /** No round before `oldestRoundId` exists (in any phase). */
  readonly historyStart: boolean
  /** A catch-up in progress, walking down from `top` to `newestRoundId`: the rounds above `next` are stored. */
  readonly fill: { readonly top: bigint; readonly next: bigint } | null
}

/** The ledger reads prices with 8 decimals. */
export const LEDGER_PRICE_DECIMALS = 8

/**
 * An answer in `decimals` rescaled to the ledger's 8 (half up when digits are dropped). A round that is not a
 * positive price becomes "0", which the ledger treats as no price.
 */
export const toLedgerAnswer = (answer: bigint, decimals: number): bigint => {
  if (answer <= 0n) return 0n
  if (decimals === LEDGER_PRICE_DECIMALS) return answer
  if (decimals < LEDGER_PRICE_DECIMALS) return answer * 10n ** BigInt(LEDGER_PRICE_DECIMALS - decimals)
  const unit = 10n ** BigInt(decimals - LEDGER_PRICE_DECIMALS)
  return (answer + unit / 2n) / unit
}

const key = (address: string) => address.toLowerCase()
const INSERT_CHUNK = 1_000
const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
const fromSeconds = (unix: number) => new Date(unix * 1000)

const toProgress = (row: any): FeedProgress => ({
  feed: row.feed_address,
  token: row.token_key,
  decimals: row.decimals,
  newestRoundId: BigInt(row.newest_round_id),
  oldestRoundId: BigInt(row.oldest_round_id),
  oldestUpdatedAt: seconds(row.oldest_updated_at),
  historyStart: row.history_start,
  fill: row.fill_top_round_id === null
    ? null
    : { top: BigInt(row.fill_top_round_id), next: BigInt(row.fill_next_round_id) }
})

/** The price feeds' rounds and the recorder's progress per feed. */
/** A stored round as the ledger prices with it: its answer rescaled to 8 decimals (a non-positive one as "0"). */
const ledgerRound = (row: {
  readonly feed_address: string
  readonly round_id: string
  readonly answer: string
  readonly decimals: number
  readonly updated_at: Date
}): PriceRound => ({
  roundId: row.round_id,
  answer: toLedgerAnswer(BigInt(row.answer), row.decimals).toString(),
  updatedAt: seconds(row.updated_at),
  feed: row.feed_address
})

export class PriceRounds extends Effect.Service<PriceRounds>()("@scaledger/db/PriceRounds", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRounds = (chainId: number, rounds: ReadonlyArray<PriceRoundRow>) =>
      Effect.map(
        Effect.forEach(Arr.chunksOf(rounds, INSERT_CHUNK), (chunk) =>
          sql<{ token_key: string }>`INSERT INTO price_rounds ${
            sql.insert(chunk.map((r) => ({
              chain_id: chainId,
              feed_key: key(r.feed),
              round_id: r.roundId.toString(),
              feed_address: r.feed,
              token_key: key(r.token),
              answer: r.answer.toString(),
              decimals: r.decimals,
              started_at: fromSeconds(r.startedAt),
              updated_at: fromSeconds(r.updatedAt),
              answered_in_round: r.answeredInRound.toString()
            })))
          } ON CONFLICT (chain_id, feed_key, round_id) DO NOTHING RETURNING token_key`),
        (inserted) =>
          inserted.flat().map((row) =>
            row.token_key
          )
      )

    const saveProgress = (chainId: number, p: FeedProgress) =>
      sql`INSERT INTO price_feed_progress ${
        sql.insert({
          chain_id: chainId,
          feed_key: key(p.feed),
          feed_address: p.feed,
          token_key: key(p.token),
          decimals: p.decimals,
          newest_round_id: p.newestRoundId.toString(),
          oldest_round_id: p.oldestRoundId.toString(),
          oldest_updated_at: fromSeconds(p.oldestUpdatedAt),
          history_start: p.historyStart,
          fill_top_round_id: p.fill === null ? null : p.fill.top.toString(),
          fill_next_round_id: p.fill === null ? null : p.fill.next.toString()
        })
      } ON CONFLICT (chain_id, feed_key) DO UPDATE SET
          feed_address = excluded.feed_address, token_key = excluded.token_key, decimals = excluded.decimals,
          newest_round_id = excluded.newest_round_id, oldest_round_id = excluded.oldest_round_id,
          oldest_updated_at = excluded.oldest_updated_at, history_start = excluded.history_start,
          fill_top_round_id = excluded.fill_top_round_id, fill_next_round_id = excluded.fill_next_round_id,
          updated_at = now()`

    /**
     * Stores rounds (a round already stored is left as it is) and, when given, the feed's progress, in one
     * transaction; asks for new ledger builds of the accounts holding a token that got a new round. Returns how
     * many rounds were new.
     */
    const store = (chainId: number, rounds: ReadonlyArray<PriceRoundRow>, progress?: FeedProgress) =>
      sql.withTransaction(Effect.gen(function*() {
        const tokens = yield* insertRounds(chainId, rounds)
        if (progress !== undefined) yield* saveProgress(chainId, progress)
        yield* invalidateLedgers({ chainId, tokens })
        return tokens.length
      }))

    const progress = (chainId: number, feed: string) =>
      Effect.map(
        sql`SELECT * FROM price_feed_progress WHERE chain_id = ${chainId} AND feed_key = ${key(feed)}`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toProgress)
      )

    /** When each token's earliest stored transfer happened (unix seconds); tokens without one are left out. */
    const firstTransfers = (chainId: number, tokens: ReadonlyArray<string>) =>
      Effect.map(
        Effect.forEach([...new Set(tokens.map(key))], (token) =>
          Effect.map(
            sql<{ first: Date | null }>`SELECT min(block_time) AS first FROM token_transfers
                                        WHERE chain_id = ${chainId} AND token_key = ${token}`,
            (rows) => [token, rows[0]?.first ?? null] as const
          )),
        (pairs) => {
          const firsts = new Map<string, number>()
          for (const [token, first] of pairs) if (first !== null) firsts.set(token, seconds(first))
          return firsts
        }
      )

    /** A feed's stored rounds, oldest first, as stored (raw answer, the feed's decimals). */
    const roundsOfFeed = (chainId: number, feed: string) =>
      Effect.map(
        sql`SELECT * FROM price_rounds WHERE chain_id = ${chainId} AND feed_key = ${key(feed)} ORDER BY round_id`,
        (rows) =>
          rows.map((row: any): PriceRoundRow => ({
            feed: row.feed_address,
            token: row.token_key,
            roundId: BigInt(row.round_id),
            answer: BigInt(row.answer),
            decimals: row.decimals,
            startedAt: seconds(row.started_at),
            updatedAt: seconds(row.updated_at),
            answeredInRound: BigInt(row.answered_in_round)
          }))
      )

    /**
     * What the ledger prices with: per token key (lowercase; every key asked for is present), its rounds sorted by
     * `updatedAt`, answers rescaled to 8 decimals, and a round that is not a positive price answered as "0".
     */
    const roundsFor = (
      chainId: number,
      tokenKeys: ReadonlyArray<string>
    ): Effect.Effect<Record<string, ReadonlyArray<PriceRound>>, SqlError> =>
      Effect.gen(function*() {
        const keys = [...new Set(tokenKeys.map(key))]
        const table: Record<string, Array<PriceRound>> = {}
        for (const token of keys) table[token] = []
        if (keys.length === 0) return table
        const rows = yield* sql<{
          token_key: string
          feed_address: string
          round_id: string
          answer: string
          decimals: number
          updated_at: Date
        }>`SELECT token_key, feed_address, round_id, answer, decimals, updated_at FROM price_rounds
           WHERE chain_id = ${chainId} AND token_key IN ${sql.in(keys)}
           ORDER BY token_key, updated_at, round_id`
        for (const row of rows) table[row.token_key]!.push(ledgerRound(row))
        return table
      })

    /**
     * The rounds a reader holding `held` (keys whose rounds it read up to the snapshot `since`) is missing, with the
     * snapshot this read saw: every round of `missing`, and every round of `held` recorded by a transaction `since`
     * did not see. Rounds come per key, sorted as `roundsFor` sorts them. `pg_current_snapshot()` in the same
     * statement is the snapshot the statement reads with, so a round is either read here or recorded after it.
     */
    const roundsRecordedSince = (
      chainId: number,
      missing: ReadonlyArray<string>,
      held: ReadonlyArray<string>,
      since: string | undefined
    ): Effect.Effect<
      { readonly snapshot: string; readonly rounds: Record<string, Array<PriceRound>> },
      SqlError
    > =>
      Effect.gen(function*() {
        const full = [...new Set(missing.map(key))]
        const delta = since === undefined ? [] : [...new Set(held.map(key))]
        const rows = yield* sql<{
          snapshot: string
          token_key: string | null
          feed_address: string
          round_id: string
          answer: string
          decimals: number
          updated_at: Date
        }>`SELECT s.snapshot::text AS snapshot, r.token_key, r.feed_address, r.round_id, r.answer, r.decimals, r.updated_at
           FROM (SELECT pg_current_snapshot() AS snapshot) s
           LEFT JOIN price_rounds r ON r.chain_id = ${chainId} AND (${
          full.length === 0 ? sql`false` : sql`r.token_key IN ${sql.in(full)}`
        } OR ${
          delta.length === 0 || since === undefined ? sql`false` : sql`(r.token_key IN ${sql.in(delta)}
               AND r.recorded_xid >= split_part(${since}, ':', 1)::bigint
               AND NOT pg_visible_in_snapshot(r.recorded_xid::text::xid8, ${since}::pg_snapshot))`
        })
           ORDER BY r.token_key, r.updated_at, r.round_id`
        const rounds: Record<string, Array<PriceRound>> = {}
        for (const token of [...full, ...delta]) rounds[token] = []
        for (const row of rows) {
          if (row.token_key !== null) rounds[row.token_key]!.push(ledgerRound(row))
        }
        return { snapshot: rows[0]!.snapshot, rounds }
      })

    return { store, progress, firstTransfers, roundsOfFeed, roundsFor, roundsRecordedSince } as const
  })
}) {}
