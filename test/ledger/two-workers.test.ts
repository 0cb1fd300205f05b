import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Backfills } from "@scaledger/db/chain/Backfills"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Effect, Layer } from "effect"

const CHAIN = 31337
const JOBS = 24
const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`

const Stores = Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default, LedgerStore.Default, Backfills.Default).pipe(
  Layer.provideMerge(TestDatabase.postgres)
)

/**
 * Two workers claiming from one PostgreSQL at the same time, a few jobs per round as a worker with a concurrency
 * limit does (a worker is given its own leased jobs again, as a renewal), until neither gets a new one: the job ids
 * each worker was given.
 */
const claimAll = (
  claim: (owner: string) => Effect.Effect<ReadonlyArray<string>, unknown, never>,
  finish: (ids: ReadonlyArray<string>) => Effect.Effect<unknown, unknown, never> = () => Effect.void
) =>
  Effect.gen(function*() {
    const got = { a: new Set<string>(), b: new Set<string>() }
    while (true) {
      const [a, b] = yield* Effect.all([claim("worker-a"), claim("worker-b")], { concurrency: 2 })
      const before = got.a.size + got.b.size
      for (const id of a) got.a.add(id)
      for (const id of b) got.b.add(id)
      if (got.a.size + got.b.size === before) return got
      // Each worker finishes what it was given before it asks again.
      yield* finish([...a, ...b])
    }
  }).pipe(Effect.orDie)

/** Every job given to exactly one worker, both of them busy. */
const expectShared = (got: { readonly a: Set<string>; readonly b: Set<string> }, ids: ReadonlyArray<string>) => {
  expect([...got.a].filter((id) => got.b.has(id))).toEqual([])
  expect([...got.a, ...got.b].sort()).toEqual([...ids].sort())
  expect(got.a.size).toBeGreaterThan(0)
  expect(got.b.size).toBeGreaterThan(0)
}

layer(Stores, { timeout: 120_000 })("two worker processes on one PostgreSQL", (it) => {
  it.effect("share the ledger builds: each due build leased to one worker, none twice", () =>
    Effect.gen(function*() {
      const accounts = yield* AccountsRepo
      const store = yield* LedgerStore
      const ids: Array<string> = []
      for (let i = 0; i < JOBS; i++) {
        const { account } = yield* Effect.orDie(accounts.findOrCreate(`two-workers-ledger-${i}`))
        yield* Effect.orDie(requestReplay(account.id))
        ids.push(account.id)
      }
      const got = yield* claimAll((owner) =>
        Effect.map(store.claim(owner, 3, 300, 0), (builds) => builds.map((b) => b.accountId))
      )
      expectShared(got, ids)
      // While the lease runs, the other worker is not given the build again.
      expect(yield* Effect.orDie(store.claim("worker-c", JOBS, 300, 0))).toEqual([])
    }))

  it.effect("share the backfills: each wallet's backfill leased to one worker, none twice", () =>
    Effect.gen(function*() {
      const { account } = yield* Effect.orDie((yield* AccountsRepo).findOrCreate("two-workers-backfills"))
      const wallets = yield* WalletsRepo
      const ids: Array<string> = []
      for (let i = 0; i < JOBS; i++) {
        const { wallet } = yield* Effect.orDie(wallets.insert({
          accountId: account.id,
          address: hex40(0x5000 + i),
          label: "",
          self: true,
          watchingFromBlock: null,
          watchingFromAt: null,
          chainId: CHAIN
        }))
        ids.push(wallet.id)
      }
      const backfills = yield* Backfills
      const sql = yield* SqlClient.SqlClient
      const got = yield* claimAll(
        (owner) => Effect.map(backfills.claim(CHAIN, owner, 3, 300), (jobs) => jobs.map((job) => job.walletId)),
        (done) =>
          done.length === 0 ? Effect.void : sql`UPDATE wallet_backfills SET phase = 'done', lease_owner = NULL
                                                WHERE wallet_id IN ${sql.in(done)}`
      )
      expectShared(got, ids)
      // A job still running (leased, not done) is not given to another worker.
      yield* sql`UPDATE wallet_backfills SET phase = 'transfers', lease_owner = 'worker-a',
                   lease_until = now() + interval '5 minutes' WHERE wallet_id = ${ids[0]!}`.pipe(Effect.orDie)
      expect(yield* Effect.orDie(backfills.claim(CHAIN, "worker-c", JOBS, 300))).toEqual([])
    }))
})
