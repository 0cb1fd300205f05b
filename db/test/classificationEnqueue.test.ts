import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ClassificationStore } from "@scaledger/db/classification/ClassificationStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const X = "0x00000000000000000000000000000000000000a1"
const Y = "0x00000000000000000000000000000000000000a2"
const OTHER = "0x00000000000000000000000000000000000000b1"

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, ClassificationStore.Default), database), {
      timeout: 120_000
    })((it) => {
      it.effect("after a complete pass, queues what was recorded since: new transfers, wallets added later", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* ClassificationStore
          const accounts = yield* AccountsRepo
          let n = 0
          /** One transfer between `from` and `to` in its own transaction, as the recorder stores them. */
          const transfer = (from: string, to: string) => {
            const i = ++n
            return sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                         token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN}, ${`0x${i.toString(16).padStart(64, "0")}`}, 0, ${i},
                         ${`0x${
              i.toString(16).padStart(64, "0")
            }`}, now(), ${OTHER}, ${from}, ${to}, ${from}, ${to}, 1)`
          }
          const watch = (label: string, address: string) =>
            Effect.gen(function*() {
              const { account } = yield* accounts.findOrCreate(label)
              yield* sql`INSERT INTO wallets (account_id, address, address_key) VALUES (${account.id}, ${address}, ${address})`
              return account.id
            })
          const queuedFor = (accountId: string) =>
            Effect.map(
              sql<{ n: string }>`SELECT count(*) AS n FROM transfer_classifications WHERE account_id = ${accountId}`,
              (rows) => Number(rows[0]!.n)
            )

          const a = yield* watch("enqueue-a", X)
          yield* transfer(OTHER, X)
          yield* transfer(X, OTHER)
          yield* transfer(OTHER, Y)
          const first = yield* store.enqueue(CHAIN)
          expect(first.queued).toBe(2)
          expect(first.since).toBeDefined()

          // A new transfer of a watched address; one of an address nobody watches.
          yield* transfer(OTHER, X)
          yield* transfer(Y, OTHER)
          const second = yield* store.enqueue(CHAIN, first.since)
          expect(second.queued).toBe(1)
          expect(yield* queuedFor(a)).toBe(3)

          // Wallets added since: an address whose transfers were recorded before (its two), and one watched already
          // by another account (its three, for this account too).
          const b = yield* watch("enqueue-b", Y)
          const c = yield* watch("enqueue-c", X)
          const third = yield* store.enqueue(CHAIN, second.since)
          expect(third.queued).toBe(5)
          expect(yield* queuedFor(b)).toBe(2)
          expect(yield* queuedFor(c)).toBe(3)

          // A transfer of an address two accounts watch: queued for both.
          yield* transfer(OTHER, X)
          const rest = yield* store.enqueue(CHAIN, third.since)
          expect(rest.queued).toBe(2)
          expect((yield* queuedFor(a)) + (yield* queuedFor(c))).toBe(8)
          // Nothing new: nothing queued, and nothing queued twice.
          expect((yield* store.enqueue(CHAIN, rest.since)).queued).toBe(0)
          expect((yield* store.enqueue(CHAIN)).queued).toBe(0)
          // A pass since a snapshot looks only at what was recorded after it: an old transfer's missing row is found
          // by a full pass (as after a restart), not by that one.
          yield* sql`DELETE FROM transfer_classifications WHERE account_id = ${a} AND tx_hash = ${`0x${
            "1".padStart(64, "0")
          }`}`
          expect((yield* store.enqueue(CHAIN, rest.since)).queued).toBe(0)
          expect((yield* store.enqueue(CHAIN)).queued).toBe(1)
        }))
    })
  })
}
