import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const key = (address: string) => address.toLowerCase()

/** One `paused()` answer: the token, the block it was read at and that block's time. */
export interface PauseRead {
  readonly token: string
  readonly block: number
  readonly time: Date
  readonly paused: boolean
}

/**
 * The `paused()` reads of stock tokens (migration 0014). A read is stored only where it changes what the record
 * shows at its block (the newest Paused/Unpaused event or earlier read at or before it, a read outranking events of
 * the same block), so a token read every few minutes adds a row only when its state moved without an event.
 */
export class PauseReads extends Effect.Service<PauseReads>()("@scaledger/db/PauseReads", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The pause state the record shows for `token` at `block` (false when it shows nothing). */
    const stateAt = (chainId: number, token: string, block: number) =>
      Effect.map(
        sql<{ paused: boolean }>`
          SELECT paused FROM (
            SELECT block, 0 AS src, log_index AS ord, kind = 'Paused' AS paused FROM token_pause_events
            WHERE chain_id = ${chainId} AND token_key = ${key(token)} AND kind IN ('Paused', 'Unpaused')
              AND block <= ${block}
            UNION ALL
            SELECT block, 1 AS src, 0 AS ord, paused FROM token_pause_reads
            WHERE chain_id = ${chainId} AND token_key = ${key(token)} AND block <= ${block}
          ) f
          ORDER BY block DESC, src DESC, ord DESC LIMIT 1`,
        (rows) => rows[0]?.paused ?? false
      )

    /** Stores the reads that change the record; answers those it stored. */
    const record = (chainId: number, reads: ReadonlyArray<PauseRead>) =>
      Effect.map(
        Effect.forEach(reads, (read) =>
          Effect.flatMap(stateAt(chainId, read.token, read.block), (shown) =>
            shown === read.paused
              ? Effect.succeed([])
              : Effect.as(
                sql`INSERT INTO token_pause_reads (chain_id, token_key, block, block_time, paused)
                    VALUES (${chainId}, ${key(read.token)}, ${read.block}, ${read.time}, ${read.paused})
                    ON CONFLICT (chain_id, token_key, block) DO UPDATE SET paused = excluded.paused, read_at = now()`,
                [read]
              ))),
        (stored) =>
          stored.flat()
      )

    /** Drops the reads of blocks a re-org replaced. */
    const rollbackAbove = (chainId: number, forkBlock: number) =>
      sql`DELETE FROM token_pause_reads WHERE chain_id = ${chainId} AND block > ${forkBlock}`

    return { stateAt, record, rollbackAbove } as const
  })
}) {}
