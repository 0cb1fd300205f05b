import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { newId } from "./Ids.js"

export interface AccountRow {
  readonly id: string
  readonly name: string
}

export interface ApiKeyRow {
  readonly id: string
  readonly accountId: string
  readonly accountName: string
  readonly lookup: string
  readonly hash: string
  readonly createdAt: Date
  readonly lastUsedAt: Date | null
  readonly revokedAt: Date | null
}

const keyColumns = (sql: SqlClient.SqlClient) =>
  sql`k.id, k.account_id, a.name AS account_name, k.lookup, k.hash, k.created_at, k.last_used_at, k.revoked_at`

interface KeyDbRow {
  readonly id: string
  readonly account_id: string
  readonly account_name: string
  readonly lookup: string
  readonly hash: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

const toKeyRow = (row: KeyDbRow): ApiKeyRow => ({
  id: row.id,
  accountId: row.account_id,
  accountName: row.account_name,
  lookup: row.lookup,
  hash: row.hash,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at
})

/** Accounts and their API keys (stored as keyed hashes only). */
export class AccountsRepo extends Effect.Service<AccountsRepo>()("@scaledger/db/AccountsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findByName = Effect.fn("AccountsRepo.findByName")((name: string) =>
      Effect.map(
        sql<AccountRow>`SELECT id, name FROM accounts WHERE name = ${name}`,
        (rows) => Option.fromNullable(rows[0])
      )
    )

    /** The account called `name`, created (with default settings) if new. */
    const findOrCreate = Effect.fn("AccountsRepo.findOrCreate")((name: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const id = newId("acct")
        const inserted = yield* sql<AccountRow>`
          INSERT INTO accounts (id, name) VALUES (${id}, ${name})
          ON CONFLICT (name) DO NOTHING
          RETURNING id, name`
        if (inserted[0] !== undefined) {
          yield* sql`INSERT INTO account_settings (account_id) VALUES (${id})`
          return { account: inserted[0], created: true }
        }
        const existing = yield* sql<AccountRow>`SELECT id, name FROM accounts WHERE name = ${name}`
        return { account: existing[0]!, created: false }
      }))
    )

    const count = Effect.withSpan(
      Effect.map(
        sql<{ count: string }>`SELECT count(*) AS count FROM accounts`,
        (rows) => Number(rows[0]!.count)
      ),
      "AccountsRepo.count"
    )

    const insertKey = Effect.fn("AccountsRepo.insertKey")((
      key: { readonly id: string; readonly accountId: string; readonly lookup: string; readonly hash: string }
    ) =>
      sql`INSERT INTO api_keys (id, account_id, lookup, hash) VALUES (${key.id}, ${key.accountId}, ${key.lookup}, ${key.hash})`
    )

    const findKeyByLookup = Effect.fn("AccountsRepo.findKeyByLookup")((lookup: string) =>
      Effect.map(
        sql<KeyDbRow>`SELECT ${
          keyColumns(sql)
        } FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.lookup = ${lookup}`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toKeyRow)
      )
    )

    /** Records use, at most once a minute per key so that reads do not each become a write. */
    const touchKey = Effect.fn("AccountsRepo.touchKey")((id: string) =>
      sql`UPDATE api_keys SET last_used_at = now()
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`.pipe(Effect.asVoid)
    )

    const listKeys = Effect.fn("AccountsRepo.listKeys")((accountId: string) =>
      Effect.map(
        sql<KeyDbRow>`SELECT ${keyColumns(sql)} FROM api_keys k JOIN accounts a ON a.id = k.account_id
                      WHERE k.account_id = ${accountId} ORDER BY k.created_at, k.id`,
        (rows) => rows.map(toKeyRow)
      )
    )

    /** Revokes the key; the row stays for the record. Returns the key, or none when no such key exists. */
    const revokeKey = Effect.fn("AccountsRepo.revokeKey")((id: string) =>
      Effect.gen(function*() {
        yield* sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id}`
        const rows = yield* sql<KeyDbRow>`SELECT ${
          keyColumns(sql)
        } FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ${id}`
        return Option.map(Option.fromNullable(rows[0]), toKeyRow)
      })
    )

    return { findByName, findOrCreate, count, insertKey, findKeyByLookup, touchKey, listKeys, revokeKey } as const
  })
}) {}
