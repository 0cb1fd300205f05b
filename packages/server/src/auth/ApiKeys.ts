import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Ids from "@scaledger/db/Ids"
import { ReadChanges } from "@scaledger/db/ReadChanges"
import type { Account } from "@scaledger/domain/Auth"
import { Effect, Option, Redacted } from "effect"
import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto"
import { KeyHashSecret } from "./KeyHashSecret.js"

const KEY_PREFIX = "sk_live_"
const KEY_BODY = /^sk_live_[0-9A-Za-z]{32}$/
/** The stored lookup: the key's first characters, enough to find the row, useless to authenticate. */
const lookupOf = (key: string) => key.slice(0, KEY_PREFIX.length + 8)
/**
 * How long a key checked against the database is trusted from memory. A key revoked through this process stops at
 * once; one revoked by another process sharing the database (the CLI on PostgreSQL, another API instance) as soon as
 * the revocation's notification arrives (`ReadChanges`), and within this time should the notifications be lost.
 */
export const KEY_CACHE_MS = 5_000
const KEY_CACHE_MAX = 10_000

export interface CreatedKey {
  readonly account: string
  readonly keyId: string
  readonly key: string
}

export interface KeyInfo {
  readonly keyId: string
  readonly account: string
  readonly prefix: string
  readonly createdAt: string
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

/** A revocation's answer: the key, and whether an earlier revocation had already stopped it. */
export interface RevokedKey extends KeyInfo {
  readonly alreadyRevoked: boolean
}

/**
 * API keys: `sk_live_` + 32 base62 characters, shown once, stored only as HMAC-SHA256 under the server secret,
 * found by a short prefix and compared in constant time.
 */
export class ApiKeys extends Effect.Service<ApiKeys>()("@scaledger/server/ApiKeys", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountsRepo
    const secret = yield* KeyHashSecret
    // A key object made once: a string secret would be converted to one on every request.
    const hmacKey = createSecretKey(Buffer.from(Redacted.value(secret), "utf8"))
    const hash = (key: string) => createHmac("sha256", hmacKey).update(key).digest("hex")
    // Keys recently found valid, by their HMAC (never the key itself): a request then needs no query to authenticate.
    const verified = new Map<
      string,
      { readonly keyId: string; readonly account: Account; readonly until: number; readonly changes: string }
    >()
    // What is known here of changes to an account's rows (a revocation notifies its account): a remembered key is
    // trusted only while its account's token is the one taken when the key was read.
    const changes = Option.getOrUndefined(yield* Effect.serviceOption(ReadChanges))
    const changesOf = (accountId: string) => changes?.token(accountId) ?? ""
    const remember = (digest: string, keyId: string, account: Account, token: string) => {
      const now = Date.now()
      if (verified.size >= KEY_CACHE_MAX) {
        for (const [k, entry] of verified) if (entry.until <= now) verified.delete(k)
        if (verified.size >= KEY_CACHE_MAX) verified.clear()
      }
      verified.set(digest, { keyId, account, until: now + KEY_CACHE_MS, changes: token })
    }

    const info = (
      row: {
        id: string
        accountName: string
        lookup: string
        createdAt: Date
        lastUsedAt: Date | null
        revokedAt: Date | null
      }
    ): KeyInfo => ({
      keyId: row.id,
      account: row.accountName,
      prefix: row.lookup,
      createdAt: row.createdAt.toISOString(),
      lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
      revokedAt: row.revokedAt?.toISOString() ?? null
    })

    /** Creates a key for the account `name`, creating the account if it is new. */
    const create = (name: string) =>
      Effect.gen(function*() {
        const { account } = yield* accounts.findOrCreate(name)
        const key = `${KEY_PREFIX}${Ids.randomBase62(32)}`
        const keyId = Ids.newId("key")
        yield* accounts.insertKey({ id: keyId, accountId: account.id, lookup: lookupOf(key), hash: hash(key) })
        return { account: account.name, keyId, key } satisfies CreatedKey
      }).pipe(
        // Two keys sharing their first 8 random characters (1 in 2e14) collide on the lookup index: draw again.
        Effect.retry({ times: 3 })
      )

    const list = (name: string) =>
      Effect.gen(function*() {
        const account = yield* accounts.findByName(name)
        if (Option.isNone(account)) return Option.none<ReadonlyArray<KeyInfo>>()
        return Option.some((yield* accounts.listKeys(account.value.id)).map(info))
      })

    const forget = (keyId: string) =>
      Effect.sync(() => {
        for (const [digest, entry] of verified) if (entry.keyId === keyId) verified.delete(digest)
      })

    const revoke = (keyId: string) =>
      Effect.map(
        accounts.revokeKey(keyId),
        Option.map(({ alreadyRevoked, key }): RevokedKey => ({ ...info(key), alreadyRevoked }))
      ).pipe(Effect.ensuring(forget(keyId)))

    /** The account of a valid, unrevoked key. */
    const authenticate = (key: string) =>
      Effect.suspend(() => {
        if (!KEY_BODY.test(key)) return Effect.succeed(Option.none<Account>())
        const digest = hash(key)
        const known = verified.get(digest)
        if (known !== undefined && known.until > Date.now() && known.changes === changesOf(known.account.id)) {
          return Effect.succeed(Option.some(known.account))
        }
        return lookUp(key, digest)
      })

    /** A key not trusted from memory: its row, checked and remembered. */
    const lookUp = (key: string, digest: string) =>
      Effect.gen(function*() {
        const row = yield* accounts.findKeyByLookup(lookupOf(key))
        if (Option.isNone(row)) return Option.none<Account>()
        const expected = Buffer.from(row.value.hash, "hex")
        const actual = Buffer.from(digest, "hex")
        if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return Option.none<Account>()
        if (row.value.revokedAt !== null) {
          verified.delete(digest)
          return Option.none<Account>()
        }
        // `last_used_at` moves at most once a minute, so this write happens about once per key and minute.
        yield* accounts.touchKey(row.value.id)
        const account: Account = { id: row.value.accountId, name: row.value.accountName }
        remember(digest, row.value.id, account, changesOf(account.id))
        return Option.some(account)
      })

    return { create, list, revoke, authenticate } as const
  }),
  dependencies: [AccountsRepo.Default]
}) {}
