import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import * as Database from "@scaledger/db/Database"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { pgTypes } from "@scaledger/db/PgTypes"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { Context, Effect, Layer, Redacted } from "effect"
import { BENCH_CHAIN, BENCH_WALLET, seedApiAccount } from "../bench/apiAccount.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

/** The database's URL, for a second connection standing for another process. */
class DbUrl extends Context.Tag("test/DbUrl")<DbUrl, string>() {}

const Base = Layer.unwrapScoped(Effect.map(TestDatabase.postgresUrl, (url) =>
  Layer.merge(
    Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie),
    Layer.succeed(DbUrl, url)
  )))

const seeding = Layer.mergeAll(LedgerInputs.Default, LedgerStore.Default, FxRates.Default, WalletsRepo.Default).pipe(
  Layer.provideMerge(ChainConfig.layer({ rpcUrls: ["http://127.0.0.1:1"], chainId: BENCH_CHAIN }))
)

/** One statement through a connection of its own (another process's writer). */
const elsewhere = (statement: string) =>
  Effect.gen(function*() {
    const url = yield* DbUrl
    yield* Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), types: pgTypes, maxConnections: 1 })))
  }).pipe(Effect.orDie)

const TOKEN = "0x000000000000000000000000000000000000a000"

/** One account per database (the seeded transfers are the chain's), a key of its own for each test. */
const setup = (_test: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [seeded] = yield* sql<{ account_id: string }>`
      SELECT account_id FROM ledger_builds b JOIN accounts a ON a.id = b.account_id WHERE a.name = 'cached'`.pipe(
      Effect.orDie
    )
    const accountId = seeded?.account_id ??
      (yield* seedApiAccount("cached", 200).pipe(Effect.provide(seeding), Effect.orDie)).accountId
    const { key } = yield* newKey("cached")
    return { accountId, key }
  })

const positions = (key: string) => call("GET", "/v1/positions", { key })
const pausedOf = (body: any) => body.positions.find((p: any) => p.token === "AAPL").paused

layer(restServer(Base).pipe(Layer.provideMerge(Base)), { timeout: 60_000, excludeTestServices: true })(
  "answers kept in memory (PostgreSQL)",
  (it) => {
    it.effect("a cached answer is byte-identical to the one HttpApi encodes itself", () =>
      Effect.gen(function*() {
        const { key } = yield* setup("identical")
        const first = yield* positions(key)
        const again = yield* positions(key)
        // `?wallet=` (every position is the one wallet's) is computed and encoded by HttpApi on each request.
        const direct = yield* call("GET", `/v1/positions?wallet=${BENCH_WALLET}`, { key })
        expect(first.status).toBe(200)
        expect(again.text).toBe(first.text)
        expect(direct.text).toBe(first.text)
        expect(again.headers["content-type"]).toBe(direct.headers["content-type"])
        expect(again.headers["content-length"]).toBe(direct.headers["content-length"])
        expect(again.headers["request-id"]).not.toBe(first.headers["request-id"])
        const portfolio = yield* call("GET", "/v1/portfolio", { key })
        expect((yield* call("GET", "/v1/portfolio", { key })).text).toBe(portfolio.text)
      }))

    it.effect("a pause written by another process shows on the next request", () =>
      Effect.gen(function*() {
        const { key } = yield* setup("pause-elsewhere")
        expect(pausedOf((yield* positions(key)).body)).toBeNull()
        expect(pausedOf((yield* positions(key)).body)).toBeNull()
        yield* elsewhere(`
          INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
          VALUES (${BENCH_CHAIN}, '0xpause', 0, 150, now(), '${TOKEN}', 'Paused')`)
        const after = yield* positions(key)
        expect(pausedOf(after.body)).toMatchObject({ block: 150, txHash: "0xpause" })
        const portfolio = (yield* call("GET", "/v1/portfolio", { key })).body
        expect(pausedOf(portfolio)).toMatchObject({ block: 150 })
        yield* elsewhere(`DELETE FROM token_pause_events WHERE tx_hash = '0xpause'`)
        expect(pausedOf((yield* positions(key)).body)).toBeNull()
      }))

    it.effect("a replay or a new build stored by another process shows on the next request", () =>
      Effect.gen(function*() {
        const { accountId, key } = yield* setup("build-elsewhere")
        const before = yield* positions(key)
        yield* elsewhere(
          `UPDATE ledger_builds SET replay_version = built_version + 1 WHERE account_id = '${accountId}'`
        )
        const replaying = yield* positions(key)
        expect(replaying.status).toBe(409)
        expect(replaying.body.error.code).toBe("replay_in_progress")
        expect(replaying.headers["retry-after"]).toBe("1")
        expect((yield* call("GET", "/v1/portfolio", { key })).status).toBe(409)
        // The replay's build: a new version with other figures.
        yield* elsewhere(`
          UPDATE ledger_positions SET row = json_build_object('token', 'NEWBUILD') :: jsonb || (row :: jsonb - 'token')
          WHERE account_id = '${accountId}' AND token = 'TSLA'`)
        yield* elsewhere(`
          UPDATE ledger_builds SET built_version = replay_version, requested_version = replay_version,
            built_at = now() WHERE account_id = '${accountId}'`)
        const rebuilt = yield* positions(key)
        expect(rebuilt.status).toBe(200)
        expect(rebuilt.body.positions.map((p: any) => p.token)).toContain("NEWBUILD")
        expect(before.body.positions.map((p: any) => p.token)).not.toContain("NEWBUILD")
      }))

    it.effect("while the change listener is down, answers are read from the database", () =>
      Effect.gen(function*() {
        const { key } = yield* setup("listener-down")
        yield* positions(key)
        yield* positions(key)
        const sql = yield* SqlClient.SqlClient
        yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                   WHERE application_name = 'scaledger-listen' AND datname = current_database()`.pipe(Effect.orDie)
        // Written while nobody listens: no notification ever reaches this process.
        yield* elsewhere(`
          INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
          VALUES (${BENCH_CHAIN}, '0xdown', 0, 160, now(), '${TOKEN}', 'Paused')`)
        expect(pausedOf((yield* positions(key)).body)).toMatchObject({ block: 160 })
        // Once it is back (within about a second), answers are kept again, still right.
        yield* Effect.sleep("1500 millis")
        expect(pausedOf((yield* positions(key)).body)).toMatchObject({ block: 160 })
        expect(pausedOf((yield* positions(key)).body)).toMatchObject({ block: 160 })
      }))

    it.effect("a settings change through this process answers 409 replay_in_progress on the next request", () =>
      Effect.gen(function*() {
        const { key } = yield* setup("settings-here")
        expect((yield* positions(key)).status).toBe(200)
        expect((yield* positions(key)).status).toBe(200)
        expect((yield* call("PUT", "/v1/settings", { key, body: { reportingCurrency: "EUR" } })).status).toBe(200)
        const next = yield* positions(key)
        expect(next.status).toBe(409)
        expect(next.body.error.code).toBe("replay_in_progress")
      }))
  }
)

layer(restServer(TestDatabase.pglite).pipe(Layer.provideMerge(TestDatabase.pglite)), {
  timeout: 60_000,
  excludeTestServices: true
})("answers kept in memory (PGlite)", (it) => {
  it.effect("a pause and a new build written in this process show on the next request", () =>
    Effect.gen(function*() {
      const { accountId, key } = yield* setup("pglite")
      const sql = yield* SqlClient.SqlClient
      expect(pausedOf((yield* positions(key)).body)).toBeNull()
      expect(pausedOf((yield* positions(key)).body)).toBeNull()
      yield* sql`
        INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
        VALUES (${BENCH_CHAIN}, '0xpglite', 0, 150, now(), ${TOKEN}, 'Paused')`.pipe(Effect.orDie)
      expect(pausedOf((yield* positions(key)).body)).toMatchObject({ block: 150 })
      yield* sql`UPDATE ledger_builds SET replay_version = built_version + 1 WHERE account_id = ${accountId}`.pipe(
        Effect.orDie
      )
      expect((yield* positions(key)).status).toBe(409)
    }))
})
