import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { FxRates } from "@scaledger/db/FxRates"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { LedgerBuilderSettings, LedgerPrices, makeLedgerBuilder } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Effect, Fiber, Layer, Option } from "effect"

const CHAIN = 31337
/** Run when a build reads its prices: makes the build as long as the test needs. */
let duringBuild: Effect.Effect<unknown> = Effect.void

const Database = Layer.mergeAll(AccountsRepo.Default, LedgerInputs.Default, LedgerStore.Default, FxRates.Default).pipe(
  Layer.provideMerge(Layer.mergeAll(
    Layer.succeed(LedgerPrices, { pricesFor: () => Effect.as(Effect.suspend(() => duringBuild), {}) }),
    ChainConfig.layer({ rpcUrls: ["http://127.0.0.1:1"], chainId: CHAIN })
  )),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.provide(
    Layer.setConfigProvider(ConfigProvider.fromJson({ LEDGER_LEASE_SECONDS: 2, LEDGER_MIN_INTERVAL_MS: 0 }))
  )
)

const replayOf = (name: string) =>
  Effect.gen(function*() {
    const { account } = yield* (yield* AccountsRepo).findOrCreate(name)
    yield* requestReplay(account.id)
    return account.id
  })

layer(Database, { timeout: 60_000, excludeTestServices: true })("a ledger build's lease (2 s)", (it) => {
  it.effect("is extended while the build runs longer than it: no other worker is given the build, and it stores", () =>
    Effect.gen(function*() {
      const accountId = yield* replayOf("lease-renewed")
      const store = yield* LedgerStore
      const builder = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
      duringBuild = Effect.sleep("5 seconds")
      const building = yield* Effect.fork(builder.poll)
      // Past the lease's first 2 s and again later: the build is still leased to the first worker.
      yield* Effect.sleep("2500 millis")
      expect(yield* store.claim("worker-b", 10, 2, 0)).toEqual([])
      yield* Effect.sleep("1500 millis")
      expect(yield* store.claim("worker-b", 10, 2, 0)).toEqual([])
      yield* Fiber.join(building)
      const state = Option.getOrThrow(yield* store.state(accountId))
      expect(state.status).toBe("ready")
      expect(state.builtVersion).toBe(state.requestedVersion)
      expect(builder.stats.full).toBe(1)
    }))

  it.effect("stops the build when the lease was lost to another worker: nothing stored, no wait for the build", () =>
    Effect.gen(function*() {
      const accountId = yield* replayOf("lease-lost")
      const store = yield* LedgerStore
      const sql = yield* SqlClient.SqlClient
      const builder = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
      duringBuild = Effect.sleep("30 seconds")
      const started = Date.now()
      const building = yield* Effect.fork(builder.poll)
      yield* Effect.sleep("300 millis")
      yield* sql`UPDATE ledger_builds SET lease_owner = 'worker-b' WHERE account_id = ${accountId}`
      yield* Fiber.join(building)
      expect(Date.now() - started).toBeLessThan(10_000)
      const state = Option.getOrThrow(yield* store.state(accountId))
      expect(state.builtVersion).toBe(0)
      expect(builder.stats.full).toBe(0)
      const [owner] = yield* sql<{ lease_owner: string }>`SELECT lease_owner FROM ledger_builds
        WHERE account_id = ${accountId}`
      expect(owner!.lease_owner).toBe("worker-b")
    }))

  it.effect("renewal: false only while another worker holds the lease; a lease the build's own store released holds", () =>
    Effect.gen(function*() {
      // A renewal that waited on the store's row lock runs after the store committed (and released the lease): a
      // false there would stop the build after it was stored, and lose the checkpoint its next build starts from.
      const accountId = yield* replayOf("lease-store")
      const store = yield* LedgerStore
      const sql = yield* SqlClient.SqlClient
      const [claimed] = yield* store.claim("worker-a", 10, 2, 0)
      expect(claimed!.accountId).toBe(accountId)
      expect(yield* store.renew(accountId, "worker-a", 2)).toBe(true)
      const written = yield* store.store(accountId, "worker-a", claimed!.version, {
        report: {},
        positions: [],
        lots: [],
        disposals: [],
        events: []
      })
      expect(written).toBe(true)
      expect(yield* store.renew(accountId, "worker-a", 2)).toBe(true)
      yield* sql`UPDATE ledger_builds SET lease_owner = 'worker-b' WHERE account_id = ${accountId}`
      expect(yield* store.renew(accountId, "worker-a", 2)).toBe(false)
      const [row] = yield* sql<{ lease_owner: string }>`SELECT lease_owner FROM ledger_builds
        WHERE account_id = ${accountId}`
      expect(row!.lease_owner).toBe("worker-b")
    }))
})
