import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { multiplierKind } from "@scaledger/domain/chain/MultiplierKind"
import { Array as Arr, Effect, Option } from "effect"
import { invalidateLedgers } from "../ledger/LedgerBuilds.js"
import { lockWalletSetShared } from "../WalletSetLock.js"
import { insertBlocks, insertTransfers } from "./BulkInsert.js"
import {
  type BlockRecord,
  type BlockRow,
  type ChainBatch,
  type CursorRow,
  dedupeBlocks,
  dedupeChanges,
  type GapRow,
  key,
  toBlockRow,
  toChangeRow,
  type TokenRow,
  toTokenRow,
  type TransferRow
} from "./ChainRows.js"

/** The row types, public; the helpers stay inside the package. */
export type * from "./ChainRows.js"

const INSERT_CHUNK = 1_000

/** Writes and reads of the chain record for one chain. */
export class ChainStore extends Effect.Service<ChainStore>()("@scaledger/db/ChainStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertChunks = <A>(
      rows: ReadonlyArray<A>,
      insert: (chunk: ReadonlyArray<A>) => Effect.Effect<unknown, SqlError>
    ) => Effect.forEach(Arr.chunksOf(rows, INSERT_CHUNK), insert, { discard: true })

    const upsertTokens = (chainId: number, tokens: ReadonlyArray<Omit<TokenRow, "chainId">>) =>
      insertChunks(tokens, (chunk) =>
        sql`INSERT INTO chain_tokens ${
          sql.insert(chunk.map((t) => ({
            chain_id: chainId,
            address_key: key(t.address),
            address: t.address,
            symbol: t.symbol,
            name: t.name,
            isin: t.isin,
            decimals: t.decimals,
            feed_address: t.feedAddress,
            feed_decimals: t.feedDecimals,
            listed: t.listed,
            is_stock: t.isStock
          })))
        } ON CONFLICT (chain_id, address_key) DO UPDATE SET
            symbol = excluded.symbol, name = excluded.name, isin = excluded.isin, decimals = excluded.decimals,
            feed_address = excluded.feed_address, feed_decimals = excluded.feed_decimals,
            listed = excluded.listed, is_stock = excluded.is_stock`)

    const tokens = (chainId: number) =>
      Effect.map(
        sql`SELECT * FROM chain_tokens WHERE chain_id = ${chainId} ORDER BY symbol NULLS LAST, address_key`,
        (rows) => rows.map(toTokenRow)
      )

    const stockTokens = (chainId: number) =>
      Effect.map(
        sql`SELECT * FROM chain_tokens WHERE chain_id = ${chainId} AND is_stock ORDER BY address_key`,
        (rows) => rows.map(toTokenRow)
      )

    /** A stock token by symbol (case-insensitive) or address. */
    const findToken = (chainId: number, symbolOrAddress: string) =>
      Effect.map(
        sql`SELECT * FROM chain_tokens
            WHERE chain_id = ${chainId} AND is_stock
              AND (upper(symbol) = ${symbolOrAddress.toUpperCase()} OR address_key = ${key(symbolOrAddress)})
            ORDER BY listed DESC LIMIT 1`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toTokenRow)
      )

    const cursor = (chainId: number, name: string) =>
      Effect.map(
        sql<{ block: string; block_hash: string; started_block: string; started_at: Date }>`
          SELECT block, block_hash, started_block, started_at FROM chain_cursors WHERE chain_id = ${chainId} AND name = ${name}`,
        (rows) =>
          Option.map(Option.fromNullable(rows[0]), (row): CursorRow => ({
            block: Number(row.block),
            hash: row.block_hash,
            startedBlock: Number(row.started_block),
            startedAt: row.started_at
          }))
      )

    const setCursor = (chainId: number, name: string, block: BlockRow) =>
      sql`INSERT INTO chain_cursors (chain_id, name, block, block_hash, started_block, started_at)
          VALUES (${chainId}, ${name}, ${block.number}, ${block.hash}, ${block.number}, ${block.time})
          ON CONFLICT (chain_id, name) DO UPDATE SET block = excluded.block, block_hash = excluded.block_hash, updated_at = now()`

    const storedBlock = (chainId: number, number: number) =>
      Effect.map(
        sql<BlockRecord>`SELECT * FROM chain_blocks WHERE chain_id = ${chainId} AND number = ${number}`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toBlockRow)
      )

    /** Stored blocks at or below `number`, newest first: where a re-org search walks back. */
    const storedBlocksBelow = (chainId: number, number: number, limit: number) =>
      Effect.map(
        sql<BlockRecord>`
          SELECT * FROM chain_blocks WHERE chain_id = ${chainId} AND number <= ${number}
          ORDER BY number DESC LIMIT ${limit}`,
        (rows) => rows.map(toBlockRow)
      )

    /**
     * The same change announced again with other values (a corrected figure, same effectiveAt): a pending change
     * takes the values of its latest announcement on record, which is what the chain stages.
     */
    const stageLatestValues = (chainId: number, tokens: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const corrected = yield* sql<
          { token_key: string; effective_at: Date; old_multiplier: string; new_multiplier: string }
        >`
          SELECT c.token_key, c.effective_at, a.old_multiplier::text, a.new_multiplier::text
          FROM multiplier_changes c
          JOIN LATERAL (
            SELECT e.old_multiplier, e.new_multiplier FROM multiplier_announcements e
            WHERE e.chain_id = c.chain_id AND e.token_key = c.token_key AND e.effective_at = c.effective_at
            ORDER BY e.block DESC, e.log_index DESC LIMIT 1
          ) a ON true
          WHERE c.chain_id = ${chainId} AND c.status = 'pending' AND c.token_key IN ${sql.in(tokens)}
            AND (c.old_multiplier <> a.old_multiplier OR c.new_multiplier <> a.new_multiplier)`
        yield* Effect.forEach(corrected, (c) =>
          sql`UPDATE multiplier_changes SET old_multiplier = ${c.old_multiplier}, new_multiplier = ${c.new_multiplier},
                kind = ${multiplierKind(BigInt(c.old_multiplier), BigInt(c.new_multiplier))}
              WHERE chain_id = ${chainId} AND token_key = ${c.token_key} AND effective_at = ${c.effective_at}`, {
          discard: true
        })
      })

    const writeBatch = (chainId: number, batch: ChainBatch) =>
      Effect.gen(function*() {
        const blocks = dedupeBlocks(batch.blocks ?? [])
        const changes = dedupeChanges(batch.changes ?? [])
        const final = batch.finalizedThrough
        const provisional = (block: number) => final !== undefined && block > final
        yield* insertBlocks(sql, chainId, blocks)
        yield* insertTransfers(sql, chainId, batch.transfers ?? [], provisional)
        yield* insertChunks(batch.receipts ?? [], (chunk) =>
          sql`INSERT INTO tx_receipts ${
            sql.insert(chunk.map((r) => ({
              chain_id: chainId,
              tx_hash: r.txHash,
              block: r.block,
              block_hash: r.blockHash,
              tx_from: r.from,
              tx_to: r.to,
              status: r.status,
              logs: JSON.stringify(r.logs),
              provisional: provisional(r.block)
            })))
          } ON CONFLICT (chain_id, tx_hash) DO NOTHING`)
        yield* insertChunks(batch.announcements ?? [], (chunk) =>
          sql`INSERT INTO multiplier_announcements ${
            sql.insert(chunk.map((a) => ({
              chain_id: chainId,
              tx_hash: a.txHash,
              log_index: a.logIndex,
              block: a.block,
              block_hash: a.blockHash,
              block_time: a.time,
              token_key: key(a.token),
              old_multiplier: a.oldMultiplier.toString(),
              new_multiplier: a.newMultiplier.toString(),
              effective_at: a.effectiveAt,
              variant: a.variant,
              provisional: provisional(a.block)
            })))
          } ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`)
        yield* insertChunks(batch.pauses ?? [], (chunk) =>
          sql`INSERT INTO token_pause_events ${
            sql.insert(chunk.map((p) => ({
              chain_id: chainId,
              tx_hash: p.txHash,
              log_index: p.logIndex,
              block: p.block,
              block_time: p.time,
              token_key: key(p.token),
              kind: p.kind,
              provisional: provisional(p.block)
            })))
          } ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`)
        yield* insertChunks(changes, (chunk) =>
          sql`INSERT INTO multiplier_changes ${
            sql.insert(chunk.map((c) => ({
              chain_id: chainId,
              token_key: key(c.token),
              effective_at: c.effectiveAt,
              old_multiplier: c.oldMultiplier.toString(),
              new_multiplier: c.newMultiplier.toString(),
              kind: c.kind,
              status: c.status,
              source: c.source,
              block: c.block,
              block_time: c.blockTime,
              announced_at: c.announcedAt,
              announced_block: c.announcedBlock,
              provisional: c.block !== null && provisional(c.block)
            })))
          } ON CONFLICT (chain_id, token_key, effective_at) DO UPDATE SET
              announced_at = least(multiplier_changes.announced_at, excluded.announced_at),
              announced_block = least(multiplier_changes.announced_block, excluded.announced_block)`)
        // A token holds one staged change: an announcement made before an earlier one took effect replaces it.
        const announcedTokens = [
          ...new Set(
            changes.filter((c) =>
              c.announcedBlock !== null
            ).map((c) =>
              key(c.token)
            )
          )
        ]
        if (announcedTokens.length > 0) {
          yield* stageLatestValues(chainId, announcedTokens)
          yield* sql`DELETE FROM multiplier_changes p
                     WHERE p.chain_id = ${chainId} AND p.status = 'pending' AND p.token_key IN ${
            sql.in(announcedTokens)
          }
                       AND EXISTS (
                         SELECT 1 FROM multiplier_changes n
                         WHERE n.chain_id = p.chain_id AND n.token_key = p.token_key
                           AND n.announced_at < p.effective_at
                           -- One seen only in state (staged before the first run) was read at the recorder's first block.
                           AND n.announced_block > coalesce(p.announced_block, (
                             SELECT r.started_block FROM chain_cursors r
                             WHERE r.chain_id = p.chain_id AND r.name = 'recorder')))`
        }
        yield* Effect.forEach(batch.activations ?? [], (c) =>
          Effect.zipRight(
            sql`UPDATE multiplier_changes SET
                  status = 'active', source = ${c.source}, block = ${c.block}, block_time = ${c.blockTime},
                  new_multiplier = ${c.newMultiplier.toString()}, kind = ${c.kind},
                  provisional = ${c.block !== null && provisional(c.block)}
                WHERE chain_id = ${chainId} AND token_key = ${key(c.token)} AND effective_at = ${c.effectiveAt}`,
            // The value read when it was due is the one before it: nothing changed (a change replaced on chain).
            sql`DELETE FROM multiplier_changes
                WHERE chain_id = ${chainId} AND token_key = ${key(c.token)} AND effective_at = ${c.effectiveAt}
                  AND status = 'active' AND new_multiplier = old_multiplier`
          ), { discard: true })
        yield* insertChunks(batch.gaps ?? [], (chunk) =>
          sql`INSERT INTO coverage_gaps ${
            sql.insert(chunk.map((g) => ({
              chain_id: chainId,
              token_key: key(g.token),
              wallet_id: g.walletId,
              from_date: g.fromDate,
              to_date: g.toDate,
              reason: g.reason
            })))
          }`)
        yield* Effect.forEach(batch.coverage ?? [], (c) =>
          sql`INSERT INTO multiplier_coverage (chain_id, token_key, from_block, from_time, start_multiplier)
              VALUES (${chainId}, ${key(c.token)}, ${c.fromBlock}, ${c.fromTime}, ${c.multiplier?.toString() ?? null})
              ON CONFLICT (chain_id, token_key) DO UPDATE SET
                from_block = least(multiplier_coverage.from_block, excluded.from_block),
                from_time = least(multiplier_coverage.from_time, excluded.from_time),
                start_multiplier = coalesce(multiplier_coverage.start_multiplier, excluded.start_multiplier)`, {
          discard: true
        })
        yield* invalidateLedgers({
          chainId,
          addresses: (batch.transfers ?? []).flatMap((t) => [t.from, t.to]),
          tokens: (batch.activations ?? []).map((c) =>
            c.token
          )
        })
        if (final !== undefined) {
          // One statement (one round trip) for the five tables.
          const settle = (table: string) =>
            sql`UPDATE ${sql(table)} SET provisional = false
                WHERE chain_id = ${chainId} AND provisional AND block <= ${final}`
          yield* sql`WITH transfers AS (${settle("token_transfers")}), receipts AS (${settle("tx_receipts")}),
                       announcements AS (${settle("multiplier_announcements")}),
                       pauses AS (${settle("token_pause_events")})
                     ${settle("multiplier_changes")}`
        }
      })

    /**
     * After a re-org dropped announcements of `tokens`: a token's latest announcement left, not yet due on the
     * branch kept (after its newest block's time) and without its change, is staged again. A dropped announcement
     * had replaced it (an announcement made before the staged change took effect replaces it, as on chain), and the
     * chain stages it again. One already due is left as recorded: its activation ran on a block the re-org kept.
     */
    const restoreStaged = (chainId: number, tokens: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const staged = yield* sql<{
          token_key: string
          effective_at: Date
          old_multiplier: string
          new_multiplier: string
          announced_block: string
          announced_at: Date
        }>`
          SELECT a.token_key, a.effective_at, a.old_multiplier::text, a.new_multiplier::text,
            (SELECT min(e.block) FROM multiplier_announcements e
             WHERE e.chain_id = a.chain_id AND e.token_key = a.token_key AND e.effective_at = a.effective_at)
              AS announced_block,
            (SELECT min(e.block_time) FROM multiplier_announcements e
             WHERE e.chain_id = a.chain_id AND e.token_key = a.token_key AND e.effective_at = a.effective_at)
              AS announced_at
          FROM (
            SELECT DISTINCT ON (token_key) * FROM multiplier_announcements
            WHERE chain_id = ${chainId} AND token_key IN ${sql.in(tokens)}
            ORDER BY token_key, block DESC, log_index DESC
          ) a
          WHERE a.effective_at > coalesce((SELECT max(block_time) FROM chain_blocks WHERE chain_id = ${chainId}),
                                          '-infinity'::timestamptz)
            AND NOT EXISTS (SELECT 1 FROM multiplier_changes c
                            WHERE c.chain_id = a.chain_id AND c.token_key = a.token_key AND c.effective_at = a.effective_at)`
        yield* Effect.forEach(staged, (a) => {
          const oldMultiplier = BigInt(a.old_multiplier)
          const newMultiplier = BigInt(a.new_multiplier)
          return sql`INSERT INTO multiplier_changes ${
            sql.insert({
              chain_id: chainId,
              token_key: a.token_key,
              effective_at: a.effective_at,
              old_multiplier: a.old_multiplier,
              new_multiplier: a.new_multiplier,
              kind: multiplierKind(oldMultiplier, newMultiplier),
              status: "pending",
              announced_block: a.announced_block,
              announced_at: a.announced_at
            })
          }`
        }, { discard: true })
      })

    /**
     * Undoes everything recorded above `forkBlock` (a re-org replaced those blocks): events from the dropped blocks
     * go, changes activated in them become pending again, and changes only those blocks announced go. The ledgers
     * that read any of it are asked for new builds: the new branch may hold nothing of theirs to ask for one.
     */
    const rollbackAbove = (chainId: number, forkBlock: number) =>
      Effect.gen(function*() {
        const parties = yield* sql<{ address_key: string }>`
          SELECT p.address_key FROM (
            SELECT from_key AS address_key FROM token_transfers WHERE chain_id = ${chainId} AND block > ${forkBlock}
            UNION
            SELECT to_key FROM token_transfers WHERE chain_id = ${chainId} AND block > ${forkBlock}
          ) p WHERE EXISTS (SELECT 1 FROM wallets w WHERE w.address_key = p.address_key)`
        const deactivated = yield* sql<{ token_key: string }>`
          SELECT DISTINCT token_key FROM multiplier_changes WHERE chain_id = ${chainId} AND block > ${forkBlock}`
        const reannounced = yield* sql<{ token_key: string }>`
          SELECT DISTINCT token_key FROM multiplier_announcements WHERE chain_id = ${chainId} AND block > ${forkBlock}`
        for (
          const table of [
            "token_transfers",
            "tx_receipts",
            "multiplier_announcements",
            "token_pause_events",
            "chain_blocks"
          ]
        ) {
          const column = table === "chain_blocks" ? sql`number` : sql`block`
          yield* sql`DELETE FROM ${sql(table)} WHERE chain_id = ${chainId} AND ${column} > ${forkBlock}`
        }
        yield* sql`UPDATE multiplier_changes SET status = 'pending', source = NULL, block = NULL, block_time = NULL, provisional = false
                   WHERE chain_id = ${chainId} AND block > ${forkBlock}`
        yield* sql`DELETE FROM multiplier_changes c
                   WHERE c.chain_id = ${chainId} AND c.announced_block > ${forkBlock}
                     AND NOT EXISTS (SELECT 1 FROM multiplier_announcements a
                                     WHERE a.chain_id = c.chain_id AND a.token_key = c.token_key AND a.effective_at = c.effective_at)`
        yield* sql`UPDATE multiplier_changes c SET
                     announced_block = (SELECT min(a.block) FROM multiplier_announcements a
                                        WHERE a.chain_id = c.chain_id AND a.token_key = c.token_key AND a.effective_at = c.effective_at),
                     announced_at = (SELECT min(a.block_time) FROM multiplier_announcements a
                                     WHERE a.chain_id = c.chain_id AND a.token_key = c.token_key AND a.effective_at = c.effective_at)
                   WHERE c.chain_id = ${chainId} AND c.announced_block > ${forkBlock}`
        if (reannounced.length > 0) {
          yield* restoreStaged(chainId, reannounced.map((row) => row.token_key))
          yield* stageLatestValues(chainId, reannounced.map((row) => row.token_key))
        }
        yield* invalidateLedgers({
          chainId,
          addresses: parties.map((row) => row.address_key),
          tokens: deactivated.map((row) => row.token_key)
        })
      })

    /** Blocks in `[from, to]` holding recorded transfers or announcements, with the hash each was recorded under. */
    const recordedBlockHashes = (chainId: number, from: number, to: number) =>
      Effect.map(
        sql<{ block: string; block_hash: string }>`
          SELECT DISTINCT block, block_hash FROM token_transfers
          WHERE chain_id = ${chainId} AND block BETWEEN ${from} AND ${to}
          UNION
          SELECT DISTINCT block, block_hash FROM multiplier_announcements
          WHERE chain_id = ${chainId} AND block BETWEEN ${from} AND ${to}`,
        (rows) => rows.map((row) => ({ block: Number(row.block), hash: row.block_hash }))
      )

    /**
     * Drops what was recorded from blocks the chain no longer has (a backfill recorded them ahead of the recorder,
     * and a re-org replaced them before the recorder got there): their transfers and announcements, and the changes
     * only those announced. The ledgers that read any of it are asked for new builds.
     */
    const dropReplacedBlocks = (
      chainId: number,
      stale: ReadonlyArray<{ readonly block: number; readonly hash: string }>
    ) =>
      Effect.forEach(stale, ({ block, hash }) =>
        Effect.gen(function*() {
          const parties = yield* sql<{ from_key: string; to_key: string }>`
            DELETE FROM token_transfers WHERE chain_id = ${chainId} AND block = ${block} AND block_hash = ${hash}
            RETURNING from_key, to_key`
          const tokens = yield* sql<{ token_key: string }>`
            DELETE FROM multiplier_announcements WHERE chain_id = ${chainId} AND block = ${block} AND block_hash = ${hash}
            RETURNING token_key`
          if (tokens.length > 0) {
            yield* sql`DELETE FROM multiplier_changes c
                       WHERE c.chain_id = ${chainId} AND c.status = 'pending' AND c.announced_block = ${block}
                         AND NOT EXISTS (SELECT 1 FROM multiplier_announcements a
                                         WHERE a.chain_id = c.chain_id AND a.token_key = c.token_key
                                           AND a.effective_at = c.effective_at)`
          }
          yield* sql`DELETE FROM chain_blocks WHERE chain_id = ${chainId} AND number = ${block} AND hash = ${hash}`
          yield* invalidateLedgers({
            chainId,
            addresses: parties.flatMap((row) => [row.from_key, row.to_key]),
            tokens: tokens.map((row) => row.token_key)
          })
        }), { discard: true })

    const pendingChanges = (chainId: number) =>
      Effect.map(
        sql`SELECT * FROM multiplier_changes WHERE chain_id = ${chainId} AND status = 'pending' ORDER BY effective_at, token_key`,
        (rows) => rows.map(toChangeRow)
      )

    const changesOf = (chainId: number, token: string) =>
      Effect.map(
        sql`SELECT * FROM multiplier_changes WHERE chain_id = ${chainId} AND token_key = ${
          key(token)
        } ORDER BY effective_at`,
        (rows) => rows.map(toChangeRow)
      )

    const gapsWhere = (condition: Statement.Fragment) =>
      Effect.map(
        sql<{ from_date: string; to_date: string; reason: GapRow["reason"] }>`
          SELECT DISTINCT from_date, to_date, reason FROM coverage_gaps WHERE ${condition}
          ORDER BY from_date, to_date, reason`,
        (rows) => rows.map((row) => ({ from: row.from_date, to: row.to_date, reason: row.reason }))
      )

    const gapsOfToken = (chainId: number, token: string) =>
      gapsWhere(sql`chain_id = ${chainId} AND token_key = ${key(token)}`)

    const gapsOfWallet = (walletId: string) => gapsWhere(sql`wallet_id = ${walletId}`)

    const coverageOf = (chainId: number, token: string) =>
      Effect.map(
        sql<{ from_block: string; from_time: Date; start_multiplier: string | null }>`
          SELECT from_block, from_time, start_multiplier FROM multiplier_coverage
          WHERE chain_id = ${chainId} AND token_key = ${key(token)}`,
        (rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({
            fromBlock: Number(row.from_block),
            fromTime: row.from_time,
            startMultiplier: row.start_multiplier === null ? null : BigInt(row.start_multiplier)
          }))
      )

    /** Distinct tokens a wallet has sent or received, with the block of its first transfer of each. */
    const tokensOfWallet = (chainId: number, address: string) =>
      Effect.map(
        sql<{ token_key: string; first_block: string; first_time: Date }>`
          SELECT token_key, min(block) AS first_block, min(block_time) AS first_time FROM token_transfers
          WHERE chain_id = ${chainId} AND (from_key = ${key(address)} OR to_key = ${key(address)})
          GROUP BY token_key ORDER BY token_key`,
        (rows) =>
          rows.map((row) => ({ token: row.token_key, firstBlock: Number(row.first_block), firstTime: row.first_time }))
      )

    /** Every distinct address any account watches on any chain, lowercase. */
    const watchedAddresses = Effect.map(
      sql<{ address_key: string }>`SELECT DISTINCT address_key FROM wallets ORDER BY address_key`,
      (rows) => rows.map((row) => row.address_key)
    )

    /**
     * Of `transfers`, those a watched address is still a party to, read under the wallet-set lock (shared; held to
     * the end of the transaction): a wallet removed after the recorder read its addresses leaves no rows behind.
     * Removal takes the lock exclusively (`WalletsRepo.remove`), so it waits for a recording that kept the
     * wallet's transfers and then deletes them with the rest.
     */
    const stillWatched = (transfers: ReadonlyArray<TransferRow>) =>
      Effect.gen(function*() {
        yield* lockWalletSetShared(sql)
        if (transfers.length === 0) return transfers
        const watched = new Set(yield* watchedAddresses)
        return transfers.filter((t) => watched.has(key(t.from)) || watched.has(key(t.to)))
      })

    /**
     * The blocks wallets' `watchingFrom` names (or will name: `from` for wallets the recorder has not reached yet)
     * at or below `to` whose date is not known yet.
     */
    const undatedWatchBlocks = (from: number, to: number) =>
      Effect.map(
        sql<{ block: string }>`
          SELECT DISTINCT coalesce(watching_from_block, ${from}) AS block FROM wallets
          WHERE watching_from_at IS NULL AND coalesce(watching_from_block, ${from}) <= ${to} ORDER BY 1`,
        (rows) => rows.map((row) => Number(row.block))
      )

    /** Dates the wallets whose `watchingFrom` names these blocks with the blocks' times. */
    const dateWatchBlocks = (blocks: ReadonlyArray<{ readonly block: number; readonly time: Date }>) =>
      Effect.forEach(blocks, ({ block, time }) =>
        sql`UPDATE wallets SET watching_from_at = ${time}
            WHERE watching_from_block = ${block} AND watching_from_at IS NULL`, { discard: true })

    /** A re-org replaced the blocks above `forkBlock`: their dates are unknown again. */
    const undateWatchBlocksAbove = (forkBlock: number) =>
      sql`UPDATE wallets SET watching_from_at = NULL WHERE watching_from_block > ${forkBlock}`

    return {
      undatedWatchBlocks,
      dateWatchBlocks,
      undateWatchBlocksAbove,
      upsertTokens,
      tokens,
      stockTokens,
      findToken,
      cursor,
      setCursor,
      storedBlock,
      storedBlocksBelow,
      writeBatch,
      rollbackAbove,
      recordedBlockHashes,
      dropReplacedBlocks,
      pendingChanges,
      changesOf,
      gapsOfToken,
      gapsOfWallet,
      coverageOf,
      tokensOfWallet,
      watchedAddresses,
      stillWatched
    } as const
  })
}) {}
