import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { newId } from "./Ids.js"
import { READS_CHANNEL } from "./ReadChanges.js"
import { orDieOnParse } from "./Rows.js"

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

/** An `api_keys` row joined with its account's name, as stored. */
const StoredKey = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  account_name: Schema.String,
  lookup: Schema.String,
  hash: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
type KeyDbRow = typeof StoredKey.Type

const StoredAccount = Schema.Struct({ id: Schema.String, name: Schema.String })

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

    const findAccount = SqlSchema.findOne({
      Request: Schema.String,
      Result: StoredAccount,
      execute: (name) => sql`SELECT id, name FROM accounts WHERE name = ${name}`
    })

    const findByName = Effect.fn("AccountsRepo.findByName")((name: string) => orDieOnParse(findAccount(name)))

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

    const findKeyWithLookup = SqlSchema.findOne({
      Request: Schema.String,
      Result: StoredKey,
      execute: (lookup) =>
        sql`SELECT ${keyColumns(sql)} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.lookup = ${lookup}`
    })
    const findKeyWithId = SqlSchema.findOne({
      Request: Schema.String,
      Result: StoredKey,
      execute: (id) =>
        sql`SELECT ${keyColumns(sql)} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ${id}`
    })

    const findKeyByLookup = Effect.fn("AccountsRepo.findKeyByLookup")((lookup: string) =>
      findKeyWithLookup(lookup).pipe(Effect.map(Option.map(toKeyRow)), orDieOnParse)
    )

    /** Records use, at most once a minute per key so that reads do not each become a write. */
    const touchKey = Effect.fn("AccountsRepo.touchKey")((id: string) =>
      sql`UPDATE api_keys SET last_used_at = now()
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`.pipe(Effect.asVoid)
    )

    const findKeysOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: StoredKey,
      execute: (accountId) =>
        sql`SELECT ${keyColumns(sql)} FROM api_keys k JOIN accounts a ON a.id = k.account_id
            WHERE k.account_id = ${accountId} ORDER BY k.created_at, k.id`
    })

    const listKeys = Effect.fn("AccountsRepo.listKeys")((accountId: string) =>
      findKeysOf(accountId).pipe(Effect.map((rows) => rows.map(toKeyRow)), orDieOnParse)
    )

    /**
     * Revokes the key; the row stays for the record. Returns the key and whether it was revoked already (its
     * `revokedAt` is then the first revocation's), or none when no such key exists.
     */
    const revokeKey = Effect.fn("AccountsRepo.revokeKey")((id: string) =>
      Effect.gen(function*() {
        // The notification (on commit) tells every process sharing the database to stop trusting the key from memory.
        const [row] = yield* sql<{ already: boolean }>`
          WITH before AS (SELECT revoked_at IS NOT NULL AS already FROM api_keys WHERE id = ${id}),
               revoked AS (
                 UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id} RETURNING account_id)
          SELECT (SELECT already FROM before) AS already, pg_notify(${READS_CHANNEL}, 'a:' || account_id) FROM revoked`
        return Option.map(
          yield* orDieOnParse(findKeyWithId(id)),
          (key) => ({ key: toKeyRow(key), alreadyRevoked: row?.already === true })
        )
      })
    )

    return { findByName, findOrCreate, count, insertKey, findKeyByLookup, touchKey, listKeys, revokeKey } as const
  })
}) {}
