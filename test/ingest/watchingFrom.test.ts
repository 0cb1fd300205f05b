import { describe, expect, it } from "@effect/vitest"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ConfigProvider, Effect, Layer } from "effect"
import { ingestServices, recordToHead, seededChain } from "../support/ChainHarness.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
const DAY = 86_400

const utcDate = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().slice(0, 10)

/** The REST server and the ingestion services (no background fibers: the test steps the recorder) on one database. */
const withService = <A, E, R>(body: (chain: Effect.Effect.Success<typeof seededChain>) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const chain = yield* seededChain
    const Db = TestDatabase.postgres
    const chainConfig = Layer.setConfigProvider(ConfigProvider.fromJson({ CHAIN_ID: chain.node.chainId }))
    return yield* body(chain).pipe(
      Effect.provide(Layer.mergeAll(
        restServer(Db).pipe(Layer.provide(chainConfig)),
        ingestServices({ rpcUrl: chain.node.httpUrl, chainId: chain.node.chainId, tokenListPath: chain.tokenListPath })
          .pipe(Layer.provideMerge(Db))
      ))
    )
  }).pipe(Effect.scoped)

describe("watchingFrom", () => {
  it.live(
    "gives the date of the block it names, null until that block exists, and follows a re-org",
    () =>
      withService((chain) =>
        Effect.gen(function*() {
          const { node } = chain
          const { key } = yield* newKey("watching-from")

          // Before the recorder has run: no block, no date.
          const early = yield* call("POST", "/v1/wallets", { key, body: { address: BOB } })
          expect(early.status).toBe(201)
          expect(early.body.watchingFrom).toEqual({ block: null, date: null })

          yield* recordToHead
          const cursor = yield* Effect.promise(() => node.block("latest"))

          // Added now: from the next block, which does not exist yet, so no date (not the cursor block's date).
          const created = yield* call("POST", "/v1/wallets", { key, body: { address: ALICE } })
          expect(created.status).toBe(201)
          expect(created.body.watchingFrom).toEqual({ block: cursor.number + 1, date: null })

          // The named block is mined on the next UTC day; the cursor block's date would be the day before.
          const nextDay = (Math.floor(cursor.timestamp / DAY) + 1) * DAY + 3_600
          yield* Effect.promise(async () => {
            await node.setNextBlockTimestamp(nextDay)
            await node.mine(1)
          })
          const fork = yield* Effect.promise(() => node.snapshot())
          yield* Effect.promise(() => node.mine(2, DAY))
          yield* recordToHead

          const alice = yield* call("GET", `/v1/wallets/${ALICE}`, { key })
          expect(alice.body.watchingFrom).toEqual({ block: cursor.number + 1, date: utcDate(nextDay) })
          expect(utcDate(nextDay)).not.toBe(utcDate(cursor.timestamp))
          // Bob, added before the first step, is watched from the first block the recorder recorded after it.
          const bob = yield* call("GET", `/v1/wallets/${BOB}`, { key })
          expect(bob.body.watchingFrom).toEqual({ block: cursor.number + 1, date: utcDate(nextDay) })

          // A wallet named a block that a re-org replaces: the date becomes the new block's.
          const carol = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
          const head = yield* Effect.promise(() => node.block("latest"))
          const added = yield* call("POST", "/v1/wallets", { key, body: { address: carol } })
          expect(added.body.watchingFrom).toEqual({ block: head.number + 1, date: null })
          yield* Effect.promise(() => node.mine(1, DAY))
          yield* recordToHead
          const oldDate = utcDate((yield* Effect.promise(() => node.block(head.number + 1))).timestamp)
          expect((yield* call("GET", `/v1/wallets/${carol}`, { key })).body.watchingFrom.date).toBe(oldDate)
          const newTime = (yield* Effect.promise(() => node.block(head.number + 1))).timestamp + 3 * DAY
          yield* Effect.promise(() =>
            node.reorg(fork, {
              replay: async (n) => {
                await n.mine(1, 1)
                await n.setNextBlockTimestamp(newTime - DAY)
                await n.mine(1)
                await n.setNextBlockTimestamp(newTime)
                await n.mine(1)
              }
            })
          )
          yield* recordToHead
          const after = yield* call("GET", `/v1/wallets/${carol}`, { key })
          expect(after.body.watchingFrom).toEqual({ block: head.number + 1, date: utcDate(newTime) })
          expect(utcDate(newTime)).not.toBe(oldDate)
        })
      ),
    60_000
  )
})
