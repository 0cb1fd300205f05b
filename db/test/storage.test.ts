import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { SettingsRepo } from "@scaledger/db/Settings"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Option, TestClock } from "effect"

const repos = Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default, SettingsRepo.Default)

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const ADDRESS = "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(repos, database), { timeout: 60_000 })((it) => {
      it.effect("answers numeric, int8 and date as strings, timestamps as Date", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ n: string; big: string; day: string; at: Date }>`
            SELECT 1.000566080061092436::numeric AS n, 9007199254740993::int8 AS big,
                   '2024-02-29'::date AS day, '2026-08-14T15:12:46Z'::timestamptz AS at`
          expect(row).toEqual({
            n: "1.000566080061092436",
            big: "9007199254740993",
            day: "2024-02-29",
            at: new Date("2026-08-14T15:12:46Z")
          })
        }))

      it.effect("creates an account once, with default settings", () =>
        Effect.gen(function*() {
          const accounts = yield* AccountsRepo
          const first = yield* accounts.findOrCreate("alice")
          const again = yield* accounts.findOrCreate("alice")
          expect(first.created).toBe(true)
          expect(again).toEqual({ account: first.account, created: false })
          const settings = yield* (yield* SettingsRepo).get(first.account.id)
          expect(settings).toEqual({ country: "US", reportingCurrency: "USD" })
        }))

      it.effect("decodes settings rows against the domain: a stored currency it does not know is a defect", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { account } = yield* (yield* AccountsRepo).findOrCreate("settings-decoding")
          const settings = yield* SettingsRepo
          yield* settings.put(account.id, { country: "DE", reportingCurrency: "SGD" })
          expect(yield* settings.get(account.id)).toEqual({ country: "DE", reportingCurrency: "SGD" })
          yield* sql`UPDATE account_settings SET reporting_currency = 'XYZ' WHERE account_id = ${account.id}`
          const exit = yield* Effect.exit(settings.get(account.id))
          expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        }))

      it.effect("stores keys by lookup and hash, and revokes them", () =>
        Effect.gen(function*() {
          const accounts = yield* AccountsRepo
          const { account } = yield* accounts.findOrCreate("keys-owner")
          yield* accounts.insertKey({ id: "key_1", accountId: account.id, lookup: "sk_live_abcd1234", hash: "h1" })
          const found = Option.getOrThrow(yield* accounts.findKeyByLookup("sk_live_abcd1234"))
          expect(found).toMatchObject({
            id: "key_1",
            accountId: account.id,
            accountName: "keys-owner",
            hash: "h1",
            revokedAt: null
          })
          yield* accounts.touchKey("key_1")
          const { alreadyRevoked, key: revoked } = Option.getOrThrow(yield* accounts.revokeKey("key_1"))
          expect(revoked.revokedAt).toBeInstanceOf(Date)
          expect(revoked.lastUsedAt).toBeInstanceOf(Date)
          expect(alreadyRevoked).toBe(false)
          // Revoking again changes nothing, and says so: the first revocation's time stays.
          const again = Option.getOrThrow(yield* accounts.revokeKey("key_1"))
          expect(again).toEqual({ key: revoked, alreadyRevoked: true })
          expect(Option.isNone(yield* accounts.revokeKey("key_missing"))).toBe(true)
          // A second key with the same lookup prefix is refused by the unique index, not silently shadowed.
          const duplicate = yield* Effect.exit(
            accounts.insertKey({ id: "key_2", accountId: account.id, lookup: "sk_live_abcd1234", hash: "h2" })
          )
          expect(Exit.isFailure(duplicate)).toBe(true)
        }))

      it.effect("keeps one wallet per address per account, matched case-insensitively", () =>
        Effect.gen(function*() {
          const accounts = yield* AccountsRepo
          const wallets = yield* WalletsRepo
          const a = (yield* accounts.findOrCreate("wallet-a")).account
          const b = (yield* accounts.findOrCreate("wallet-b")).account
          const base = {
            label: "main",
            self: true,
            watchingFromBlock: 12,
            watchingFromAt: new Date("2026-08-14T00:00:00Z"),
            chainId: 31337
          }
          const first = yield* wallets.insert({ accountId: a.id, address: ADDRESS, ...base })
          const again = yield* wallets.insert({ accountId: a.id, address: ADDRESS, ...base, label: "other" })
          expect(first.created).toBe(true)
          expect(again.created).toBe(false)
          expect(again.wallet.label).toBe("main")
          expect(Option.isSome(yield* wallets.find(a.id, ADDRESS.toUpperCase().replace("0X", "0x")))).toBe(true)
          // Another account may watch the same address; neither sees the other's row.
          const other = yield* wallets.insert({ accountId: b.id, address: ADDRESS, ...base })
          expect(other.created).toBe(true)
          expect(other.wallet.id).not.toBe(first.wallet.id)
          expect(
            Option.isNone(yield* wallets.update(b.id, "0x0000000000000000000000000000000000000001", { label: "x" }))
          ).toBe(true)
          const updated = Option.getOrThrow(yield* wallets.update(a.id, ADDRESS, { self: false }))
          expect(updated).toMatchObject({ label: "main", self: false, watchingFromBlock: "12" })
          expect(yield* wallets.remove(a.id, ADDRESS)).toBe(true)
          expect(yield* wallets.remove(a.id, ADDRESS)).toBe(false)
          expect(Option.isSome(yield* wallets.find(b.id, ADDRESS))).toBe(true)
        }))

      it.effect("pages wallets in order of creation", () =>
        Effect.gen(function*() {
          const wallets = yield* WalletsRepo
          const { account } = yield* (yield* AccountsRepo).findOrCreate("pager")
          const addresses = Array.from({ length: 5 }, (_, i) => `0x${String(i + 1).padStart(40, "0")}`)
          for (const address of addresses) {
            yield* wallets.insert({
              accountId: account.id,
              address,
              label: "",
              self: true,
              watchingFromBlock: null,
              watchingFromAt: null,
              chainId: 31337
            })
          }
          const first = yield* wallets.list(account.id, { afterId: undefined, limit: 2 })
          const second = yield* wallets.list(account.id, { afterId: first.wallets[1]!.id, limit: 2 })
          const third = yield* wallets.list(account.id, { afterId: second.wallets[1]!.id, limit: 2 })
          expect([...first.wallets, ...second.wallets, ...third.wallets].map((w) => w.address)).toEqual(addresses)
          expect([first.hasMore, second.hasMore, third.hasMore]).toEqual([true, true, false])
        }))

      it.effect("rolls a failed transaction back whole", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const accounts = yield* AccountsRepo
          const result = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
            yield* accounts.findOrCreate("half-written")
            return yield* Effect.fail("boom")
          })))
          expect(Exit.isFailure(result)).toBe(true)
          expect(Option.isNone(yield* accounts.findByName("half-written"))).toBe(true)
        }))

      it.effect("does not let another fiber's statement into an open transaction", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const accounts = yield* AccountsRepo
          // The transaction inserts, then waits; meanwhile another fiber inserts outside it. The transaction then
          // fails: only the outside insert may survive.
          const insertedInside = yield* Deferred.make<void>()
          const inside = yield* sql.withTransaction(Effect.gen(function*() {
            yield* accounts.findOrCreate("inside")
            yield* Deferred.succeed(insertedInside, undefined)
            yield* Effect.sleep("1 second")
            return yield* Effect.fail("rollback")
          })).pipe(Effect.exit, Effect.fork)
          yield* Deferred.await(insertedInside)
          const outside = yield* Effect.fork(accounts.findOrCreate("outside"))
          yield* TestClock.adjust("2 seconds")
          yield* Fiber.join(inside)
          yield* Fiber.join(outside)
          expect(Option.isNone(yield* accounts.findByName("inside"))).toBe(true)
          expect(Option.isSome(yield* accounts.findByName("outside"))).toBe(true)
        }))
    })
  })
}

it("names the missing PostgreSQL instead of skipping", async () => {
  const { postgres } = TestDatabase
  const exit = await Effect.runPromiseExit(
    Layer.build(postgres).pipe(
      Effect.scoped,
      Effect.withConfigProvider(
        (await import("effect")).ConfigProvider.fromJson({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/postgres" })
      )
    )
  )
  expect(Exit.isFailure(exit)).toBe(true)
  expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("PostgreSQL is not reachable")
})
