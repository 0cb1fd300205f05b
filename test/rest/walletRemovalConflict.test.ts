/**
 * DELETE /v1/wallets/{address} while the wallet's backfill writes: the backfill holds the wallet's row (progress) and
 * then asks for the wallet-set lock, the removal holds that lock and asks for the row. PostgreSQL breaks the deadlock
 * by failing one of them; the removal runs again instead of answering 503.
 */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ConfigProvider, Deferred, Effect, Fiber, Layer } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

const ADDRESS = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"

const Services = restServer(TestDatabase.postgres).pipe(
  Layer.provideMerge(ChainStore.Default.pipe(Layer.provideMerge(TestDatabase.postgres))),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CHAIN_ID: 31337 })))
)

it.live(
  "a removal that deadlocks with a backfill's progress write is run again: 204, not 503",
  () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("removal-conflict")
      expect((yield* call("POST", "/v1/wallets", { key, body: { address: ADDRESS } })).status).toBe(201)
      const sql = yield* SqlClient.SqlClient
      const store = yield* ChainStore
      const rowHeld = yield* Deferred.make<void>()
      const removing = yield* Deferred.make<void>()
      // As the backfill runner does: progress on the wallet's row, then (recording transfers) the wallet-set lock.
      const backfill = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE wallets SET backfill_blocks_done = 1 WHERE address_key = ${ADDRESS.toLowerCase()}`
        yield* Deferred.succeed(rowHeld, undefined)
        yield* Deferred.await(removing)
        yield* store.stillWatched([])
      })))
      yield* Deferred.await(rowHeld)
      const removal = yield* Effect.fork(call("DELETE", `/v1/wallets/${ADDRESS}`, { key }))
      // The removal takes the wallet-set lock and waits for the row; then the backfill asks for the lock.
      yield* Effect.sleep("300 millis")
      yield* Deferred.succeed(removing, undefined)
      yield* Fiber.join(backfill)
      const reply = yield* Fiber.join(removal)
      expect(reply.status, reply.text).toBe(204)
      expect((yield* call("GET", `/v1/wallets/${ADDRESS}`, { key })).status).toBe(404)
    }).pipe(Effect.provide(Services)),
  { timeout: 60_000 }
)
