import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ChainStore, type TransferRow } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { accountWatching } from "@scaledger/db/testing/Watching"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Deferred, Effect, Fiber, Layer } from "effect"

const CHAIN = 31337
const TOKEN = `0x${"aa".repeat(20)}`
const OTHER = `0x${"cc".repeat(20)}`

const transfer = (n: number, to: string): TransferRow => ({
  txHash: `0x${n.toString(16).padStart(64, "0")}`,
  logIndex: 0,
  block: n,
  blockHash: `0x${n.toString(16).padStart(64, "f")}`,
  time: new Date(1_700_000_000_000 + n * 1000),
  token: TOKEN,
  from: OTHER,
  to,
  raw: 10n ** 18n
})

const watch = (name: string, address: string) => accountWatching(name, address, CHAIN)

const transfersTo = (address: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ block: string }>`SELECT block FROM token_transfers WHERE to_key = ${address.toLowerCase()} ORDER BY block`
  )

const services = Layer.mergeAll(ChainStore.Default, AccountsRepo.Default, WalletsRepo.Default)

for (
  const [name, database] of [["PostgreSQL", TestDatabase.postgres], ["PGlite", TestDatabase.pglite]] as const
) {
  describe(name, () => {
    layer(Layer.provideMerge(services, database), { timeout: 120_000 })((it) => {
      it.effect("a recording keeps only the transfers of addresses still watched when it writes", () =>
        Effect.gen(function*() {
          const kept = `0x${"b1".repeat(20)}`
          const removed = `0x${"b2".repeat(20)}`
          const accountId = yield* watch("kept-and-removed", kept)
          yield* (yield* WalletsRepo).insert({
            accountId,
            address: removed,
            label: "",
            self: true,
            watchingFromBlock: null,
            watchingFromAt: null,
            chainId: CHAIN
          })
          // The recorder read both addresses and scanned the chain; the second wallet was removed meanwhile.
          yield* (yield* WalletsRepo).remove(accountId, removed)
          const sql = yield* SqlClient.SqlClient
          const store = yield* ChainStore
          yield* sql.withTransaction(Effect.gen(function*() {
            const transfers = yield* store.stillWatched([transfer(1, kept), transfer(2, removed), transfer(3, OTHER)])
            expect(transfers.map((t) => t.block)).toEqual([1])
            yield* store.writeBatch(CHAIN, { transfers })
          }))
          expect(yield* transfersTo(kept)).toEqual([{ block: "1" }])
          expect(yield* transfersTo(removed)).toEqual([])
        }))
    })
  })
}

// Live: the removal is given real time to run ahead of the recording it must wait for.
it.live(
  "PostgreSQL, two connections: a removal waits for a recording that kept the wallet's transfers, then deletes them",
  () =>
    Effect.gen(function*() {
      const address = `0x${"d1".repeat(20)}`
      const accountId = yield* watch("removed-while-recording", address)
      const sql = yield* SqlClient.SqlClient
      const store = yield* ChainStore
      const locked = yield* Deferred.make<void>()
      const write = yield* Deferred.make<void>()
      const recording = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        const transfers = yield* store.stillWatched([transfer(7, address)])
        expect(transfers).toHaveLength(1)
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(write)
        yield* store.writeBatch(CHAIN, { transfers })
      })))
      yield* Deferred.await(locked)
      const removal = yield* Effect.fork((yield* WalletsRepo).remove(accountId, address))
      yield* Effect.sleep("300 millis")
      // Without the lock the removal would commit now, and the recording's rows would outlive their wallet.
      expect(removal.unsafePoll()).toBeNull()
      yield* Deferred.succeed(write, undefined)
      yield* Fiber.join(recording)
      expect(yield* Fiber.join(removal)).toBe(true)
      expect(yield* transfersTo(address)).toEqual([])
    }).pipe(Effect.provide(Layer.provideMerge(services, TestDatabase.postgres))),
  { timeout: 120_000 }
)
