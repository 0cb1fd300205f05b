import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { toLedgerAnswer } from "../chain/PriceRounds.js"

/** A stored feed round, its answer rescaled to 8 decimals (USD per token, the multiplier included). */
export interface StoredRound {
  readonly feed: string
  readonly roundId: string
  /** 8 decimals. */
  readonly answer: bigint
  readonly updatedAt: Date
}

/** A token's pause state: the latest pause fact (event, or for the trading pause also a `paused()` read). */
export interface PauseState {
  readonly paused: boolean
  readonly since: Date | null
  readonly block: number | null
  readonly provisional: boolean
}

/** A token's trading pause in force now. */
export interface CurrentPause {
  readonly since: Date
  readonly block: number
  /** Null when a `paused()` read, not an event, first showed the pause. */
  readonly txHash: string | null
  readonly provisional: boolean
}

const key = (address: string) => address.toLowerCase()

/** Reads of the chain record the market reads need: feed rounds around the close, pause events. */
export class MarketReads extends Effect.Service<MarketReads>()("@scaledger/db/MarketReads", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    type RoundRow = { feed_address: string; round_id: string; answer: string; decimals: number; updated_at: Date }
    const toRound = (row: RoundRow): StoredRound => ({
      feed: row.feed_address,
      roundId: row.round_id,
      answer: toLedgerAnswer(BigInt(row.answer), row.decimals),
      updatedAt: row.updated_at
    })

    /** True when a feed is recorded for the token (rounds or progress). */
    const hasFeed = Effect.fn("MarketReads.hasFeed")((chainId: number, token: string) =>
      Effect.map(
        sql<{ n: string | number }>`
          SELECT (SELECT count(*) FROM price_feed_progress WHERE chain_id = ${chainId} AND token_key = ${key(token)})
               + (SELECT count(*) FROM (SELECT 1 FROM price_rounds WHERE chain_id = ${chainId}
                                        AND token_key = ${key(token)} LIMIT 1) r) AS n`,
        (rows) => Number(rows[0]?.n ?? 0) > 0
      )
    )

    /** The round in force at `at`: the newest with `updated_at <= at`. */
    const roundAt = Effect.fn("MarketReads.roundAt")((chainId: number, token: string, at: Date) =>
      Effect.map(
        sql<RoundRow>`
          SELECT feed_address, round_id, answer, decimals, updated_at FROM price_rounds
          WHERE chain_id = ${chainId} AND token_key = ${key(token)} AND updated_at <= ${at}
          ORDER BY updated_at DESC, round_id DESC LIMIT 1`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toRound)
      )
    )

    const pauseOf = (chainId: number, token: string, at: Date, kinds: readonly [string, string]) =>
      Effect.map(
        sql<{ kind: string; block: string | number; block_time: Date; provisional: boolean }>`
          SELECT kind, block, block_time, provisional FROM token_pause_events
          WHERE chain_id = ${chainId} AND token_key = ${key(token)} AND kind IN (${kinds[0]}, ${kinds[1]})
            AND block_time <= ${at}
          ORDER BY block DESC, log_index DESC LIMIT 1`,
        (rows): PauseState => {
          const row = rows[0]
          if (row === undefined) return { paused: false, since: null, block: null, provisional: false }
          return {
            paused: row.kind === kinds[0],
            since: row.block_time,
            block: Number(row.block),
            provisional: row.provisional
          }
        }
      )

    /**
     * The token's trading pause at `at`: the newest of its Paused/Unpaused events and its `paused()` reads (a read
     * after the events of its block), so a pause only a read shows (from before watching, or issuer-wide) counts.
     */
    const tokenPause = (chainId: number, token: string, at: Date) =>
      Effect.map(
        sql<{ paused: boolean; block: string | number; block_time: Date; provisional: boolean }>`
          SELECT paused, block, block_time, provisional FROM (
            SELECT kind = 'Paused' AS paused, block, block_time, provisional, 0 AS src, log_index
            FROM token_pause_events
            WHERE chain_id = ${chainId} AND token_key = ${key(token)} AND kind IN ('Paused', 'Unpaused')
              AND block_time <= ${at}
            UNION ALL
            SELECT paused, block, block_time, false, 1, 0 FROM token_pause_reads
            WHERE chain_id = ${chainId} AND token_key = ${key(token)} AND block_time <= ${at}
          ) f
          ORDER BY block, src, log_index`,
        (rows): PauseState => {
          // The state of the last fact; a pause since its first paused fact after the last unpaused one (as the
          // `token-paused` alert and the positions count it), however many events and reads confirm it.
          let state: PauseState = { paused: false, since: null, block: null, provisional: false }
          for (const row of rows) {
            if (!row.paused) {
              state = { paused: false, since: row.block_time, block: Number(row.block), provisional: row.provisional }
            } else if (!state.paused) {
              state = { paused: true, since: row.block_time, block: Number(row.block), provisional: row.provisional }
            }
          }
          return state
        }
      )

    /**
     * The token's trading pause (`Paused`/`Unpaused` and `paused()` reads) and oracle pause (`OraclePaused`/`OracleUnpaused`) in force at
     * `at`: the latest event of each pair in a block at or before it.
     */
    const pauses = Effect.fn("MarketReads.pauses")((chainId: number, token: string, at: Date) =>
      Effect.all({
        token: tokenPause(chainId, token, at),
        oracle: pauseOf(chainId, token, at, ["OraclePaused", "OracleUnpaused"])
      })
    )

    /**
     * The trading pauses in force now among the given tokens, keyed by lowercase address: from the `Paused`/`Unpaused`
     * events and the `paused()` reads (a read after the events of its block). A pause starts at its first paused fact
     * since the last unpaused one, however many events and reads confirm it (as the `token-paused` alert counts it).
     */
    const currentPauses = (tokens: ReadonlyArray<string>) =>
      tokens.length === 0
        ? Effect.succeed(new Map<string, CurrentPause>())
        : Effect.map(
          sql<
            {
              chain_id: number
              token_key: string
              paused: boolean
              block: string | number
              block_time: Date
              tx_hash: string | null
              provisional: boolean
            }
          >`
            SELECT chain_id, token_key, paused, block, block_time, tx_hash, provisional FROM (
              SELECT chain_id, token_key, kind = 'Paused' AS paused, block, block_time, tx_hash, provisional,
                0 AS src, log_index
              FROM token_pause_events
              WHERE token_key IN ${sql.in([...new Set(tokens.map(key))])} AND kind IN ('Paused', 'Unpaused')
              UNION ALL
              SELECT chain_id, token_key, paused, block, block_time, NULL, false, 1, 0
              FROM token_pause_reads
              WHERE token_key IN ${sql.in([...new Set(tokens.map(key))])}
            ) f
            ORDER BY chain_id, token_key, block, src, log_index`,
          (rows) => {
            const open = new Map<string, CurrentPause>()
            for (const row of rows) {
              if (!row.paused) open.delete(row.token_key)
              else if (!open.has(row.token_key)) {
                open.set(row.token_key, {
                  since: row.block_time,
                  block: Number(row.block),
                  txHash: row.tx_hash,
                  provisional: row.provisional
                })
              }
            }
            return open
          }
        )

    return { hasFeed, roundAt, pauses, currentPauses } as const
  })
}) {}
