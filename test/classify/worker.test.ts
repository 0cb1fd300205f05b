import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ClassificationStore } from "@scaledger/db/classification/ClassificationStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ChainClient, type ChainClientService } from "@scaledger/domain/chain/ChainClient"
import { AllEndpointsFailed, RpcTimeout } from "@scaledger/domain/chain/ChainErrors"
import {
  Classifier,
  ClassifierUnavailable,
  type MovementFeatures
} from "@scaledger/domain/classification/ClassifierPort"
import { mergeContractLists } from "@scaledger/domain/classification/ContractList"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { ClassificationSettings, makeClassificationWorker } from "@scaledger/workers/classify/ClassificationWorker"
import { NoClassifier as ClassifierNone } from "@scaledger/workers/classify/ClassifierProviders"
import { ContractList } from "@scaledger/workers/classify/ContractListLive"
import { Clock, ConfigProvider, Deferred, Effect, Fiber, Layer, Option } from "effect"

const CHAIN = 31337
const W = "0x00000000000000000000000000000000000000aa"
const PLAIN = "0x00000000000000000000000000000000000000e1"
const ROUTER = "0x00000000000000000000000000000000000000d1"
const UNLISTED = "0x00000000000000000000000000000000000000d5"
const TOKEN = "0x00000000000000000000000000000000000000f1"

/** How often the chain was asked whether an address has code. */
const codeReads: Array<string> = []
/** Each `transactions` call's hashes; while `txReadsFail`, the node is out of reach for them. */
const txReads: Array<ReadonlyArray<string>> = []
let txReadsFail = false

const FakeChain = Layer.succeed(ChainClient, {
  chainId: CHAIN,
  hasCode: (addresses: ReadonlyArray<string>) =>
    Effect.sync(() => {
      for (const address of addresses) codeReads.push(address)
      return new Map(addresses.map((a) => [a.toLowerCase(), a.toLowerCase() === UNLISTED]))
    }),
  transactions: (hashes: ReadonlyArray<string>) =>
    Effect.suspend(() => {
      txReads.push(hashes)
      if (txReadsFail) {
        const method = "eth_getTransactionByHash"
        const lastError = new RpcTimeout({ endpoint: "node", method, timeoutMs: 1, message: "no answer" })
        return Effect.fail(
          new AllEndpointsFailed({ endpoints: ["node"], method, attempts: 1, lastError, message: "down" })
        )
      }
      return Effect.succeed(
        new Map(
          hashes.map((h) => [h, { from: W.toUpperCase().replace("0X", "0x"), to: UNLISTED, selector: "0xa694fc3a" }])
        )
      )
    })
} as unknown as ChainClientService)

const Outage = Layer.succeed(Classifier, {
  name: "remote",
  classify: () => Effect.fail(new ClassifierUnavailable({ model: "remote", reason: "connection refused" })),
  learn: () => Effect.void
})

const Answers = Layer.succeed(Classifier, {
  name: "remote",
  classify: () =>
    Effect.succeed(Option.some({
      type: "transfer.out" as const,
      relationship: "contract" as const,
      confidence: 0.7,
      model: "remote/2",
      rationale: "back"
    })),
  learn: () => Effect.void
})

/** A model that decides nothing and notes the transaction of each example it is taught. */
const learning = (taught: Array<string>) =>
  Layer.succeed(Classifier, {
    name: "learning",
    classify: () => Effect.succeed(Option.none()),
    learn: (examples: ReadonlyArray<{ readonly features: MovementFeatures }>) =>
      Effect.sync(() => {
        for (const example of examples) taught.push(example.features.txHash)
      })
  })

const Common = Layer.mergeAll(
  FakeChain,
  ChainConfig.layer({ rpcUrls: [], chainId: CHAIN } as any),
  Layer.succeed(ContractList, {
    chainId: CHAIN,
    index: mergeContractLists(CHAIN, [{ chainId: CHAIN, address: ROUTER, kind: "dex", name: "Router" }])
  }),
  ClassificationSettings.Live.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CLASSIFY_LEASE_SECONDS: 1 })))
  )
)

/** An account of its own with one own wallet at `address`. */
const accountWith = (name: string, address: string) =>
  Effect.gen(function*() {
    const { account } = yield* Effect.orDie((yield* AccountsRepo).findOrCreate(name))
    yield* Effect.orDie((yield* WalletsRepo).insert({
      accountId: account.id,
      address,
      label: "",
      self: true,
      watchingFromBlock: null,
      watchingFromAt: null,
      chainId: CHAIN
    }))
    return account
  })

let tx = 0
const transfer = (from: string, to: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    tx++
    const hash = `0x${tx.toString(16).padStart(64, "0")}`
    yield* sql`INSERT INTO token_transfers ${
      sql.insert({
        chain_id: CHAIN,
        tx_hash: hash,
        log_index: 0,
        block: tx,
        block_hash: hash,
        block_time: new Date(Date.UTC(2026, 6, 1) + tx * 1000),
        token_key: TOKEN,
        from_key: from,
        to_key: to,
        from_address: from,
        to_address: to,
        raw: "1000000000000000000",
        provisional: false
      })
    }`
    return hash
  }).pipe(Effect.orDie)

const rowOf = (hash: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      status: string
      type: string | null
      relationship: string | null
      classified_by: string | null
      confirmed: boolean
      rule: string | null
      error: string | null
      rationale: string | null
      attempts: number
    }>`SELECT status, type, relationship, classified_by, confirmed, rule, error, rationale, attempts
       FROM transfer_classifications WHERE tx_hash = ${hash}`).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

for (const [name, database] of [["PostgreSQL", TestDatabase.postgres], ["PGlite", TestDatabase.pglite]] as const) {
  layer(
    Layer.mergeAll(ClassificationStore.Default, AccountsRepo.Default, WalletsRepo.Default).pipe(
      Layer.provideMerge(database)
    ),
    { timeout: 60_000 }
  )(`the classification worker (${name})`, (it) => {
    describe("rules, the model's outage, the queue", () => {
      it.effect("an outage leaves the unlisted contract's movement unknown, needing review; the rules still decide", () =>
        Effect.gen(function*() {
          const account = yield* accountWith("worker-a", W)
          codeReads.length = 0
          const toUnlisted = yield* transfer(W, UNLISTED)
          const fromPlain = yield* transfer(PLAIN, W)
          const toRouter = yield* transfer(W, ROUTER)
          const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Outage)))
          expect(yield* Effect.orDie(worker.poll)).toBe(3)
          expect(yield* rowOf(toUnlisted)).toMatchObject({
            status: "done",
            type: "unknown",
            classified_by: "rule",
            confirmed: false,
            rule: "unlisted_contract",
            error: "connection refused"
          })
          expect(yield* rowOf(fromPlain)).toMatchObject({
            type: "transfer.in",
            relationship: null,
            confirmed: false,
            rule: "plain_address"
          })
          expect(yield* rowOf(toRouter)).toMatchObject({
            type: "swap",
            relationship: "contract",
            confirmed: true,
            rule: "contract_list"
          })
          // Neither own nor listed: asked once each; the router is listed and never asked.
          expect([...codeReads].sort()).toEqual([UNLISTED, PLAIN])
          // Once the model is back, what it could not answer is asked again (and only that).
          const store = yield* ClassificationStore
          expect(yield* Effect.orDie(store.retryModelFailures(CHAIN, 0, 5))).toBe(1)
          const back = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Answers)))
          expect(yield* Effect.orDie(back.poll)).toBe(1)
          expect(yield* rowOf(toUnlisted)).toMatchObject({
            status: "done",
            type: "transfer.out",
            classified_by: "ai_labeled",
            confirmed: false,
            error: null
          })
          expect(yield* Effect.orDie(store.retryModelFailures(CHAIN, 0, 5))).toBe(0)
          // The account's ledger is asked to rebuild (not a replay).
          const sql = yield* SqlClient.SqlClient
          const [build] = yield* Effect.orDie(
            sql<{ replay_version: string }>`SELECT replay_version FROM ledger_builds WHERE account_id = ${account.id}`
          )
          expect(build).toBeDefined()

          // The code of an address is read once: a later transfer to it uses the cache. No model: `none`.
          const again = yield* transfer(W, UNLISTED)
          const none = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, ClassifierNone)))
          expect(yield* Effect.orDie(none.poll)).toBe(1)
          expect(codeReads).toHaveLength(2)
          expect(yield* rowOf(again)).toMatchObject({ type: "unknown", error: null })
          expect((yield* rowOf(again))!.rationale).toContain("none")

          // Deleting the wallet deletes the account's classifications derived from it.
          expect(yield* Effect.orDie((yield* WalletsRepo).remove(account.id, W))).toBe(true)
          const [left] = yield* Effect.orDie(
            sql<{ n: string }>`SELECT count(*) AS n FROM transfer_classifications WHERE account_id = ${account.id}`
          )
          expect(Number(left!.n)).toBe(0)
        }))

      it.effect("an own address deleted or marked not own: its self-transfers are classified again (a plain address: an outflow)", () =>
        Effect.gen(function*() {
          const first = "0x00000000000000000000000000000000000000b1"
          const second = "0x00000000000000000000000000000000000000b2"
          const account = yield* accountWith("worker-two-own", first)
          yield* Effect.orDie((yield* WalletsRepo).insert({
            accountId: account.id,
            address: second,
            label: "",
            self: true,
            watchingFromBlock: null,
            watchingFromAt: null,
            chainId: CHAIN
          }))
          const between = yield* transfer(first, second)
          const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, ClassifierNone)))
          expect(yield* Effect.orDie(worker.poll)).toBe(1)
          expect(yield* rowOf(between)).toMatchObject({ status: "done", type: "transfer.self", rule: "both_own" })
          const wallets = yield* WalletsRepo
          const classifiedAgain = Effect.gen(function*() {
            // The stored self-transfer no longer holds: queued again, and decided by the rules as they stand now.
            expect(yield* rowOf(between)).toMatchObject({ status: "pending", attempts: 0 })
            expect(yield* Effect.orDie(worker.poll)).toBe(1)
            expect(yield* rowOf(between)).toMatchObject({
              status: "done",
              type: "transfer.out",
              relationship: null,
              confirmed: false,
              rule: "plain_address"
            })
          })
          // Marked not own: classified again; own again: a self-transfer again.
          yield* Effect.orDie(wallets.update(account.id, second, { self: false }))
          yield* classifiedAgain
          yield* Effect.orDie(wallets.update(account.id, second, { label: "renamed" }))
          expect(yield* rowOf(between)).toMatchObject({ status: "done", rule: "plain_address" })
          yield* Effect.orDie(wallets.update(account.id, second, { self: true }))
          const sql = yield* SqlClient.SqlClient
          yield* Effect.orDie(sql`UPDATE transfer_classifications SET status = 'pending' WHERE tx_hash = ${between}`)
          expect(yield* Effect.orDie(worker.poll)).toBe(1)
          expect(yield* rowOf(between)).toMatchObject({ status: "done", rule: "both_own" })
          // Deleted: the same.
          expect(yield* Effect.orDie(wallets.remove(account.id, second))).toBe(true)
          yield* classifiedAgain
        }))

      it.effect(
        "reads the transactions' facts in one batch, only for what goes to the model; a failed read waits",
        () =>
          Effect.gen(function*() {
            const address = "0x00000000000000000000000000000000000000cc"
            yield* accountWith("worker-c", address)
            const first = yield* transfer(address, UNLISTED)
            const second = yield* transfer(address, UNLISTED)
            const plain = yield* transfer(PLAIN, address)
            const asked: Array<MovementFeatures> = []
            const Recording = Layer.succeed(Classifier, {
              name: "recording",
              classify: (features: MovementFeatures) => Effect.sync(() => (asked.push(features), Option.none())),
              learn: () => Effect.void
            })
            const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Recording)))
            txReads.length = 0
            txReadsFail = true
            // The node is out of reach: what goes to the model is not decided, its leases are given back at once;
            // the rules' decision is stored (it needs no transaction read).
            yield* Effect.flip(worker.poll)
            expect(txReads).toEqual([[first, second]])
            for (const hash of [first, second]) {
              expect(yield* rowOf(hash)).toMatchObject({ status: "pending", attempts: 1 })
            }
            expect(yield* rowOf(plain)).toMatchObject({ status: "done", type: "transfer.in", attempts: 1 })
            txReadsFail = false
            expect(yield* Effect.orDie(worker.poll)).toBe(2)
            expect(txReads).toEqual([[first, second], [first, second]])
            expect(asked.map((f) => [f.txHash, f.txFrom, f.txTo, f.methodSelector])).toEqual([
              [first, W, UNLISTED, "0xa694fc3a"],
              [second, W, UNLISTED, "0xa694fc3a"]
            ])
            // Stored: learning from a confirmation of these movements reads no transaction again.
            const store = yield* ClassificationStore
            expect(yield* Effect.orDie(store.txFacts(CHAIN, [first]))).toEqual(
              new Map([[first, { from: W, to: UNLISTED, selector: "0xa694fc3a" }]])
            )
          }),
        { timeout: 20_000 }
      )

      it.effect("the model is asked about at most CLASSIFY_MODEL_BATCH movements a round; the rest wait untried", () =>
        Effect.gen(function*() {
          const address = "0x00000000000000000000000000000000000000ce"
          yield* accountWith("worker-model-batch", address)
          const leftovers = yield* Effect.forEach([1, 2, 3], () => transfer(address, UNLISTED))
          const plain = yield* transfer(PLAIN, address)
          const asked: Array<string> = []
          const Recording = Layer.succeed(Classifier, {
            name: "recording",
            classify: (features: MovementFeatures) => Effect.sync(() => (asked.push(features.txHash), Option.none())),
            learn: () => Effect.void
          })
          const settings = ClassificationSettings.Live.pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CLASSIFY_MODEL_BATCH: 2 })))
          )
          const worker = yield* makeClassificationWorker.pipe(
            Effect.provide(Layer.mergeAll(Common, Recording, settings))
          )
          // Two leftovers go to the model and the plain transfer to the rules; the third leftover waits, its claim
          // not counted as an attempt (the model's retries are counted in attempts).
          expect(yield* Effect.orDie(worker.poll)).toBe(3)
          // (Asked concurrently: in any order.)
          expect([...asked].sort()).toEqual(leftovers.slice(0, 2).sort())
          expect(yield* rowOf(plain)).toMatchObject({ status: "done", type: "transfer.in" })
          expect(yield* rowOf(leftovers[2]!)).toMatchObject({ status: "pending", attempts: 0 })
          // The next round takes it at once (its lease was given back).
          expect(yield* Effect.orDie(worker.poll)).toBe(1)
          expect([...asked].sort()).toEqual([...leftovers].sort())
          expect(yield* rowOf(leftovers[2]!)).toMatchObject({ status: "done", type: "unknown", attempts: 1 })
        }))

      it.effect("a full batch is followed at once by the next round, not after the poll interval", () =>
        Effect.gen(function*() {
          const address = "0x00000000000000000000000000000000000000bc"
          yield* accountWith("worker-drain", address)
          const hashes = yield* Effect.forEach([1, 2, 3, 4, 5], () => transfer(PLAIN, address))
          // Batches of two, a round every ten minutes when idle.
          const settings = ClassificationSettings.Live.pipe(
            Layer.provide(
              Layer.setConfigProvider(ConfigProvider.fromJson({ CLASSIFY_BATCH: 2, CLASSIFY_POLL_MS: 600_000 }))
            )
          )
          const worker = yield* makeClassificationWorker.pipe(
            Effect.provide(Layer.mergeAll(Common, ClassifierNone, settings))
          )
          const running = yield* Effect.fork(worker.run)
          let statuses: Array<string | undefined> = []
          for (let tries = 0; tries < 50; tries++) {
            statuses = yield* Effect.forEach(hashes, (hash) => Effect.map(rowOf(hash), (row) => row?.status))
            if (statuses.every((status) => status === "done")) break
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
          }
          yield* Fiber.interrupt(running)
          // Three rounds (2 + 2 + 1) within seconds: the two full ones did not wait ten minutes.
          expect(statuses).toEqual(["done", "done", "done", "done", "done"])
        }))

      it.effect(
        "learns every confirmation of one review, also past a round's 500 (they share one timestamp)",
        () =>
          Effect.gen(function*() {
            const address = "0x00000000000000000000000000000000000000cd"
            const account = yield* accountWith("worker-learn", address)
            const hashes = yield* Effect.forEach(
              Array.from({ length: 600 }, (_, i) => i),
              () => transfer(PLAIN, address)
            )
            const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, ClassifierNone)))
            expect(yield* Effect.orDie(worker.poll)).toBe(600)
            // One PATCH /v1/events settles them all in one statement: one `updated_at` for the 600 rows.
            const sql = yield* SqlClient.SqlClient
            yield* Effect.orDie(sql`
            UPDATE transfer_classifications SET classified_by = 'user', confirmed = true, relationship = 'exchange',
              updated_at = now()
            WHERE account_id = ${account.id}`)
            const taught: Array<string> = []
            const Learning = learning(taught)
            const learner = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Learning)))
            for (let round = 0; round < 3; round++) yield* Effect.orDie(learner.poll)
            // Each once (other tests' confirmations may be taught too).
            const ours = taught.filter((hash) => hashes.includes(hash))
            expect(ours).toHaveLength(600)
            expect(new Set(ours)).toEqual(new Set(hashes))
            // Gone again, so that later workers in this file have nothing of it to learn.
            expect(yield* Effect.orDie((yield* WalletsRepo).remove(account.id, address))).toBe(true)
          }),
        { timeout: 30_000 }
      )

      it.effect("learning that cannot read the chain holds up no classification; it is tried again next round", () =>
        Effect.gen(function*() {
          const address = "0x00000000000000000000000000000000000000ca"
          const account = yield* accountWith("worker-learn-offline", address)
          const first = yield* transfer(PLAIN, address)
          const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, ClassifierNone)))
          expect(yield* Effect.orDie(worker.poll)).toBe(1)
          // The person confirms it; the facts of its transaction were never read (the rules needed none).
          const sql = yield* SqlClient.SqlClient
          yield* Effect.orDie(sql`
            UPDATE transfer_classifications SET classified_by = 'user', confirmed = true, relationship = 'exchange',
              updated_at = now()
            WHERE account_id = ${account.id} AND tx_hash = ${first}`)
          const taught: Array<string> = []
          const Learning = learning(taught)
          const learner = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Learning)))
          // A new movement the rules decide alone (the counterparty's code is known), while the node is out of reach.
          const second = yield* transfer(PLAIN, address)
          txReadsFail = true
          const offline = yield* Effect.exit(learner.poll)
          txReadsFail = false
          expect(offline._tag).toBe("Success")
          expect(yield* rowOf(second)).toMatchObject({ status: "done", type: "transfer.in" })
          expect(taught).not.toContain(first)
          // Back online: the confirmation is learned then.
          yield* Effect.orDie(learner.poll)
          expect(taught).toContain(first)
          expect(yield* Effect.orDie((yield* WalletsRepo).remove(account.id, address))).toBe(true)
        }))

      it.effect(
        "a crashed worker's lease expires: the transfer is classified once, by the next worker",
        () =>
          Effect.gen(function*() {
            const address = "0x00000000000000000000000000000000000000bb"
            const account = yield* accountWith("worker-b", address)
            const hash = yield* transfer(PLAIN, address)
            const store = yield* ClassificationStore
            yield* Effect.orDie(store.enqueue(CHAIN))
            const crashed = yield* Effect.orDie(store.claim(CHAIN, "crashed", 10, 1))
            expect(crashed.map((c) => c.txHash)).toEqual([hash])
            const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, ClassifierNone)))
            // Leased: nobody else takes it.
            expect(yield* Effect.orDie(worker.poll)).toBe(0)
            expect((yield* rowOf(hash))!.status).toBe("pending")
            // Real time (not the test clock): the lease is the database's `now()`.
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_200)))
            expect(yield* Effect.orDie(worker.poll)).toBe(1)
            expect(yield* rowOf(hash)).toMatchObject({ status: "done", type: "transfer.in", attempts: 2 })
            // The crashed worker coming back cannot write over it.
            const late = yield* Effect.orDie(store.complete("crashed", [{
              accountId: account.id,
              chainId: CHAIN,
              txHash: hash,
              logIndex: 0,
              type: "burn",
              relationship: null,
              classifiedBy: "rule",
              confirmed: true,
              rule: "zero_address",
              counterpartyKey: null,
              model: null,
              confidence: null,
              rationale: null,
              error: null
            }]))
            expect(late).toBe(0)
            expect((yield* rowOf(hash))!.type).toBe("transfer.in")
            // Nothing left to do.
            expect(yield* Effect.orDie(worker.poll)).toBe(0)
          }),
        { timeout: 20_000 }
      )

      it.effect("a model answer with a NUL or a lone surrogate is stored with U+FFFD in their place; the round is not stuck", () =>
        Effect.gen(function*() {
          const address = "0x00000000000000000000000000000000000000c0"
          yield* accountWith("worker-nul", address)
          const toUnlisted = yield* transfer(address, UNLISTED)
          const plain = yield* transfer(PLAIN, address)
          // A remote model's free text may hold any character; PostgreSQL text holds no NUL.
          const Garbled = Layer.succeed(Classifier, {
            name: "garbled",
            classify: () =>
              Effect.succeed(Option.some({
                type: "swap" as const,
                relationship: "contract" as const,
                confidence: 0.9,
                model: "remote\u0000/3",
                rationale: "a swap\u0000 router\ud800"
              })),
            learn: () => Effect.void
          })
          const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Garbled)))
          expect(yield* Effect.orDie(worker.poll)).toBe(2)
          expect(yield* rowOf(toUnlisted)).toMatchObject({
            status: "done",
            type: "swap",
            classified_by: "ai_labeled",
            rationale: "a swap\ufffd router\ufffd"
          })
          expect(yield* rowOf(plain)).toMatchObject({ status: "done", type: "transfer.in" })
        }))

      it.effect(
        "the rules' decisions of a round are stored while the model is still thinking",
        () =>
          Effect.gen(function*() {
            const address = "0x00000000000000000000000000000000000000c1"
            yield* accountWith("worker-slow-model", address)
            const toUnlisted = yield* transfer(address, UNLISTED)
            const plain = yield* transfer(PLAIN, address)
            const answer = yield* Deferred.make<void>()
            const asked = yield* Deferred.make<void>()
            // A slow remote model (seconds per answer, up to CLASSIFY_MODEL_TIMEOUT_MS when it hangs).
            const Slow = Layer.succeed(Classifier, {
              name: "slow",
              classify: () =>
                Deferred.succeed(asked, undefined).pipe(
                  Effect.zipRight(Deferred.await(answer)),
                  Effect.as(Option.none())
                ),
              learn: () => Effect.void
            })
            const worker = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Slow)))
            const polling = yield* Effect.fork(worker.poll)
            yield* Deferred.await(asked)
            let plainRow = yield* rowOf(plain)
            for (let tries = 0; tries < 50 && plainRow?.status !== "done"; tries++) {
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
              plainRow = yield* rowOf(plain)
            }
            expect(plainRow).toMatchObject({ status: "done", type: "transfer.in" })
            expect(yield* rowOf(toUnlisted)).toMatchObject({ status: "pending" })
            yield* Deferred.succeed(answer, undefined)
            expect(yield* Effect.orDie(Fiber.join(polling))).toBe(2)
            expect(yield* rowOf(toUnlisted)).toMatchObject({ status: "done", type: "unknown" })
          }),
        { timeout: 30_000 }
      )

      it.effect(
        "a round waiting on the model keeps its leases: another worker does not take the movements over",
        () =>
          Effect.gen(function*() {
            const address = "0x00000000000000000000000000000000000000c2"
            yield* accountWith("worker-lease-kept", address)
            const toUnlisted = yield* transfer(address, UNLISTED)
            const asked = yield* Deferred.make<void>()
            // Each answer takes longer than the lease (CLASSIFY_LEASE_SECONDS is 1 here).
            const Slow = Layer.succeed(Classifier, {
              name: "slow",
              classify: () =>
                Deferred.succeed(asked, undefined).pipe(
                  Effect.zipRight(Effect.sleep("2500 millis")),
                  Effect.as(Option.none())
                ),
              learn: () => Effect.void
            })
            const first = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Slow)))
            const second = yield* makeClassificationWorker.pipe(Effect.provide(Layer.merge(Common, Slow)))
            const polling = yield* Effect.fork(first.poll)
            yield* Deferred.await(asked)
            yield* Effect.sleep("1500 millis")
            // The first worker's lease would have lapsed by now without renewal.
            expect(yield* Effect.orDie(second.poll)).toBe(0)
            expect(yield* Effect.orDie(Fiber.join(polling))).toBe(1)
            expect(yield* rowOf(toUnlisted)).toMatchObject({ status: "done", type: "unknown", attempts: 1 })
            // Real time (not the test clock): the lease is the database's `now()`.
          }).pipe(Effect.withClock(Clock.make())),
        { timeout: 30_000 }
      )

      it.effect(
        "a model taking one movement at a time (MODEL_CONCURRENCY=1) is handed one at a time: no time-out from waiting",
        () =>
          Effect.gen(function*() {
            const address = "0x00000000000000000000000000000000000000c3"
            yield* accountWith("worker-model-concurrency", address)
            const hashes = yield* Effect.forEach([1, 2, 3], () => transfer(address, UNLISTED))
            // One answer at a time, 800 ms each: three handed over at once would have the third wait 1.6 s.
            const permit = yield* Effect.makeSemaphore(1)
            const OneAtATime = Layer.succeed(Classifier, {
              name: "one-at-a-time",
              concurrency: 1,
              classify: () =>
                Effect.sleep("800 millis").pipe(
                  Effect.as(Option.some({
                    type: "swap" as const,
                    relationship: "contract" as const,
                    confidence: 0.9,
                    model: "local/1",
                    rationale: "slow"
                  })),
                  permit.withPermits(1)
                ),
              learn: () => Effect.void
            })
            const settings = ClassificationSettings.Live.pipe(
              Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CLASSIFY_MODEL_TIMEOUT_MS: 1_200 })))
            )
            const worker = yield* makeClassificationWorker.pipe(
              Effect.provide(Layer.mergeAll(Common, OneAtATime, settings))
            )
            expect(yield* Effect.orDie(worker.poll)).toBe(3)
            for (const hash of hashes) {
              expect(yield* rowOf(hash)).toMatchObject({ status: "done", type: "swap", classified_by: "ai_labeled" })
            }
          }).pipe(Effect.withClock(Clock.make())),
        { timeout: 30_000 }
      )
    })
  })
}
