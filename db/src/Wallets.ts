import { SqlClient, SqlSchema } from "@effect/sql"
import { BackfillStatus } from "@scaledger/domain/Wallet"
import { Effect, Option, Schema } from "effect"
import { orDieOnParse } from "./Rows.js"
import { lockWalletSetExclusive } from "./WalletSetLock.js"

export interface WalletRow {
  readonly id: string
  readonly accountId: string
  readonly address: string
  readonly addressKey: string
  readonly label: string
  readonly self: boolean
  readonly createdAt: Date
  readonly watchingFromBlock: string | null
  readonly watchingFromAt: Date | null
  readonly backfillStatus: "running" | "complete" | "partial" | "failed"
  readonly backfillError: string | null
  readonly backfillBlocksDone: string
  readonly backfillBlocksTotal: string | null
}

/** A `wallets` row as stored, checked on the way out (extra columns are ignored). */
const StoredWallet = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  address: Schema.String,
  address_key: Schema.String,
  label: Schema.String,
  self: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  watching_from_block: Schema.NullOr(Schema.String),
  watching_from_at: Schema.NullOr(Schema.DateFromSelf),
  backfill_status: BackfillStatus,
  backfill_error: Schema.NullOr(Schema.String),
  backfill_blocks_done: Schema.String,
  backfill_blocks_total: Schema.NullOr(Schema.String)
})
type WalletDbRow = typeof StoredWallet.Type

const decodeWallets = Schema.decodeUnknown(Schema.Array(StoredWallet))

const toRow = (row: WalletDbRow): WalletRow => ({
  id: row.id,
  accountId: row.account_id,
  address: row.address,
  addressKey: row.address_key,
  label: row.label,
  self: row.self,
  createdAt: row.created_at,
  watchingFromBlock: row.watching_from_block,
  watchingFromAt: row.watching_from_at,
  backfillStatus: row.backfill_status,
  backfillError: row.backfill_error,
  backfillBlocksDone: row.backfill_blocks_done,
  backfillBlocksTotal: row.backfill_blocks_total
})

export interface NewWallet {
  readonly accountId: string
  /** Checksummed. */
  readonly address: string
  readonly label: string
  readonly self: boolean
  readonly watchingFromBlock: number | null
  readonly watchingFromAt: Date | null
  /** The chain whose history a durable backfill job will fetch for the new wallet. */
  readonly chainId: number
}

/** The addresses each account watches. Every query is scoped to one account: no key sees another's wallets. */
export class WalletsRepo extends Effect.Service<WalletsRepo>()("@scaledger/db/WalletsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findStored = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, addressKey: Schema.String }),
      Result: StoredWallet,
      execute: ({ accountId, addressKey }) =>
        sql`SELECT * FROM wallets WHERE account_id = ${accountId} AND address_key = ${addressKey}`
    })

    const find = Effect.fn("WalletsRepo.find")((accountId: string, address: string) =>
      findStored({ accountId, addressKey: address.toLowerCase() }).pipe(Effect.map(Option.map(toRow)), orDieOnParse)
    )

    const findStoredLocked = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, addressKey: Schema.String }),
      Result: StoredWallet,
      execute: ({ accountId, addressKey }) =>
        sql`SELECT * FROM wallets WHERE account_id = ${accountId} AND address_key = ${addressKey} FOR UPDATE`
    })

    /**
     * The wallet, its row locked until the caller's transaction ends: what a change is compared with (was it own?)
     * is then what the change replaces, not a value another change is replacing meanwhile.
     */
    const findForUpdate = Effect.fn("WalletsRepo.findForUpdate")((accountId: string, address: string) =>
      findStoredLocked({ accountId, addressKey: address.toLowerCase() }).pipe(
        Effect.map(Option.map(toRow)),
        orDieOnParse
      )
    )

    /**
     * An address watched and marked not own: the wallet's flag says what it is. A `self` label the account gave it
     * in review before it was watched (or while it was own) would keep its movements self-transfers against the
     * flag, and review refuses `self` for it: the label goes, and the movements it settled are classified again by
     * the rules (a disposal or an acquisition, needing review).
     */
    const dropSelfLabel = (accountId: string, addressKey: string) =>
      Effect.gen(function*() {
        const dropped = yield* sql`
          DELETE FROM counterparty_labels
          WHERE account_id = ${accountId} AND address_key = ${addressKey} AND relationship = 'self'
          RETURNING address_key`
        if (dropped.length === 0) return
        yield* sql`
          UPDATE transfer_classifications
          SET status = 'pending', attempts = 0, lease_owner = NULL, lease_until = NULL, updated_at = now()
          WHERE account_id = ${accountId} AND status = 'done' AND classified_by = 'user'
            AND counterparty_key = ${addressKey} AND relationship = 'self'`
      })

    /**
     * Inserts the wallet with its backfill job, or returns the account's existing one for the same address
     * (`created: false`).
     */
    const insert = Effect.fn("WalletsRepo.insert")((wallet: NewWallet) =>
      sql.withTransaction(Effect.gen(function*() {
        const inserted = yield* sql`
          INSERT INTO wallets (account_id, address, address_key, label, self, watching_from_block, watching_from_at)
          VALUES (${wallet.accountId}, ${wallet.address}, ${wallet.address.toLowerCase()}, ${wallet.label},
                  ${wallet.self}, ${wallet.watchingFromBlock}, ${wallet.watchingFromAt})
          ON CONFLICT (account_id, address_key) DO NOTHING
          RETURNING *`.pipe(Effect.flatMap(decodeWallets), orDieOnParse)
        if (inserted[0] !== undefined) {
          yield* sql`INSERT INTO wallet_backfills (wallet_id, chain_id, address_key, from_block, next_block, phase)
                     VALUES (${inserted[0].id}, ${wallet.chainId}, ${inserted[0].address_key}, 0, 0, 'transfers')`
          if (!wallet.self) yield* dropSelfLabel(wallet.accountId, inserted[0].address_key)
          return { wallet: toRow(inserted[0]), created: true }
        }
        const existing = yield* find(wallet.accountId, wallet.address)
        return { wallet: Option.getOrThrow(existing), created: false }
      }))
    )

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({
        accountId: Schema.String,
        afterId: Schema.UndefinedOr(Schema.String),
        take: Schema.Int
      }),
      Result: StoredWallet,
      execute: ({ accountId, afterId, take }) =>
        sql`
          SELECT * FROM wallets
          WHERE account_id = ${accountId} ${afterId === undefined ? sql`` : sql`AND id > ${afterId}`}
          ORDER BY id
          LIMIT ${take}`
    })

    /** One page in order of creation, starting after the wallet with id `afterId`. */
    const list = Effect.fn("WalletsRepo.list")((
      accountId: string,
      options: { readonly afterId: string | undefined; readonly limit: number }
    ) =>
      findPage({ accountId, afterId: options.afterId, take: options.limit + 1 }).pipe(
        Effect.map((rows) => ({
          wallets: rows.slice(0, options.limit).map(toRow),
          hasMore: rows.length > options.limit
        })),
        orDieOnParse
      )
    )

    const findAllOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: StoredWallet,
      execute: (accountId) => sql`SELECT * FROM wallets WHERE account_id = ${accountId} ORDER BY id`
    })

    const listAll = Effect.fn("WalletsRepo.listAll")((accountId: string) =>
      findAllOf(accountId).pipe(Effect.map((rows) => rows.map(toRow)), orDieOnParse)
    )

    /**
     * An address that stops being own (deleted, or marked not own): the transfers between it and the account's other
     * addresses are classified again, from the side of the address that stays own (to a plain address such a transfer
     * is a disposal, from one an acquisition, needing review, unless the address is labelled `self`). What was decided
     * of them before was from either end while both were own (the both-own rule, or a classification made from the
     * address that goes). A user's decision about the address itself stays.
     */
    const reclassifyBothOwn = (accountId: string, addressKey: string) =>
      sql`
        UPDATE transfer_classifications c
        SET status = 'pending', attempts = 0, lease_owner = NULL, lease_until = NULL, updated_at = now()
        FROM token_transfers t
        WHERE c.account_id = ${accountId} AND c.status = 'done'
          AND (c.classified_by <> 'user' OR c.counterparty_key IS DISTINCT FROM ${addressKey})
          AND t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash
          AND t.log_index = c.log_index AND (t.from_key = ${addressKey} OR t.to_key = ${addressKey})`

    const update = Effect.fn("WalletsRepo.update")((
      accountId: string,
      address: string,
      patch: { readonly label?: string | undefined; readonly self?: boolean | undefined }
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`
          UPDATE wallets SET
            label = ${patch.label === undefined ? sql`label` : sql`${patch.label}`},
            self = ${patch.self === undefined ? sql`self` : sql`${patch.self}`}
          WHERE account_id = ${accountId} AND address_key = ${address.toLowerCase()}
          RETURNING *`.pipe(Effect.flatMap(decodeWallets), orDieOnParse)
        if (rows.length > 0 && patch.self === false) {
          yield* reclassifyBothOwn(accountId, address.toLowerCase())
          yield* dropSelfLabel(accountId, address.toLowerCase())
        }
        return Option.map(Option.fromNullable(rows[0]), toRow)
      }))
    )

    /**
     * Deletes the wallet and what was derived from it: its backfill job and coverage gaps (foreign keys cascade),
     * and the chain records of its transfers unless another watched address (of any account) is a party to them.
     */
    const remove = Effect.fn("WalletsRepo.remove")((accountId: string, address: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const addressKey = address.toLowerCase()
        yield* lockWalletSetExclusive(sql)
        const deleted = yield* sql<{ id: string }>`
          DELETE FROM wallets WHERE account_id = ${accountId} AND address_key = ${addressKey} RETURNING id`
        if (deleted.length === 0) return false
        const orphaned = yield* sql<{ chain_id: number; tx_hash: string }>`
          DELETE FROM token_transfers t
          WHERE (t.from_key = ${addressKey} OR t.to_key = ${addressKey})
            AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.address_key IN (t.from_key, t.to_key))
          RETURNING t.chain_id, t.tx_hash`
        // Their transactions' receipts that no remaining transfer needs, in one statement (the wallet-set lock holds
        // up recording meanwhile: one statement per transfer took tens of seconds for a large wallet).
        const transactions = [...new Map(orphaned.map((o) => [`${o.chain_id}:${o.tx_hash}`, o])).values()]
        if (transactions.length > 0) {
          yield* sql`
            DELETE FROM tx_receipts r
            USING json_to_recordset(${JSON.stringify(transactions)}) AS o(chain_id integer, tx_hash text)
            WHERE r.chain_id = o.chain_id AND r.tx_hash = o.tx_hash
              AND NOT EXISTS (SELECT 1 FROM token_transfers t WHERE t.chain_id = r.chain_id AND t.tx_hash = r.tx_hash)`
        }
        // The account's classifications of transfers none of its remaining addresses is a party to.
        yield* sql`
          DELETE FROM transfer_classifications c
          WHERE c.account_id = ${accountId} AND NOT EXISTS (
            SELECT 1 FROM token_transfers t JOIN wallets w ON w.account_id = c.account_id
              AND w.address_key IN (t.from_key, t.to_key)
            WHERE t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash AND t.log_index = c.log_index)`
        yield* reclassifyBothOwn(accountId, addressKey)
        return true
      }))
    )

    return { find, findForUpdate, insert, list, listAll, update, remove } as const
  })
}) {}
