import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Backfills } from "@scaledger/db/chain/Backfills"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { MultiplierReads } from "@scaledger/db/reads/MultiplierReads"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { runBackfill } from "@scaledger/workers/ingest/Backfill"
import { Effect, Layer, Option } from "effect"
import { startFaultProxy } from "../chain/faultProxy.js"
import {
  addAndBackfill,
  ingestServices,
  issuerCall,
  recordToHead,
  type SeededChain,
  seededChain
} from "../support/ChainHarness.js"

const CAROL = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
const WAD = 10n ** 18n

const token = (chain: SeededChain, symbol: string) => chain.manifest.tokens.find((t) => t.symbol === symbol)!.address
const key = (address: string) => address.toLowerCase()

const withIngest = <A, E, R>(chain: SeededChain, body: Effect.Effect<A, E, R>) =>
  withIngestAt(chain, chain.node.httpUrl, body)

const withIngestAt = <A, E, R>(chain: SeededChain, rpcUrl: string, body: Effect.Effect<A, E, R>) =>
  body.pipe(
    Effect.provide(
      Layer.mergeAll(MultiplierReads.Default).pipe(
        Layer.provideMerge(ingestServices({
          rpcUrl,
          chainId: chain.node.chainId,
          tokenListPath: chain.tokenListPath
        })),
        Layer.provideMerge(TestDatabase.postgres)
      )
    )
  )

describe("multiplier announcements", () => {
  it.live(
    "a change announced again for the same effectiveAt with another value stands at the later value",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            const head = yield* Effect.promise(() => node.block("latest"))
            const effectiveAt = head.timestamp + 600
            yield* Effect.promise(() =>
              issuerCall(
                node,
                tsla,
                "updateMultiplier",
                [1005000000000000000n, BigInt(effectiveAt)],
                head.timestamp + 10
              )
            )
            yield* recordToHead
            const fork = yield* Effect.promise(() => node.snapshot())
            // The issuer corrects the figure: same effectiveAt, another value.
            yield* Effect.promise(() =>
              issuerCall(
                node,
                tsla,
                "updateMultiplier",
                [1000900000000000000n, BigInt(effectiveAt)],
                head.timestamp + 20
              )
            )
            yield* recordToHead
            const store = yield* ChainStore
            const pending = yield* store.pendingChanges(node.chainId)
            expect(pending.map((c) => [c.token, c.newMultiplier])).toEqual([[key(tsla), 1000900000000000000n]])
            const reads = yield* MultiplierReads
            const later = new Date((effectiveAt + 86_400 * 2) * 1000).toISOString().slice(0, 10)
            const history = yield* reads.history(node.chainId, { token: "TSLA", at: later })
            expect(history.pending.map((c) => c.to)).toEqual(["1.0009"])
            expect(history.at?.multiplier).toBe("1.0009")

            // A re-org drops the correction: the first figure is staged again, as on chain.
            yield* Effect.promise(() => node.reorg(fork, { blocks: 2 }))
            yield* recordToHead
            const staged = yield* store.pendingChanges(node.chainId)
            expect(staged.map((c) => [c.token, c.newMultiplier])).toEqual([[key(tsla), 1005000000000000000n]])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "records the announcements of an unlisted token from the span in which a wallet's transfer revealed it",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const unlisted = chain.manifest.unlistedToken.address
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            yield* addAndBackfill(CAROL, node.chainId)
            yield* recordToHead
            // In one span: the first transfer of the token to Carol, then an immediate dividend step of it.
            yield* Effect.promise(() => issuerCall(node, unlisted, "mint", [CAROL, 2n * WAD]))
            const step = yield* Effect.promise(() =>
              issuerCall(node, unlisted, "updateMultiplier", [1000700000000000000n])
            )
            yield* recordToHead
            const store = yield* ChainStore
            const changes = yield* store.changesOf(node.chainId, unlisted)
            expect(changes.map((c) => [c.status, c.newMultiplier, c.block])).toEqual([
              ["active", 1000700000000000000n, step.block]
            ])
            const reads = yield* MultiplierReads
            const today = new Date((yield* Effect.promise(() => node.block("latest"))).timestamp * 1000)
              .toISOString().slice(0, 10)
            const history = yield* reads.history(node.chainId, { token: unlisted, at: today })
            expect(history.changes.map((c) => c.to)).toEqual(["1.0007"])
            expect(history.at?.multiplier).toBe("1.0007")
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "an unlisted token a backfill finds: its announcements the recorder passed while the backfill ran are recorded",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const unlisted = chain.manifest.unlistedToken.address
        yield* Effect.promise(() => issuerCall(node, unlisted, "mint", [CAROL, 2n * WAD]))
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            const { account } = yield* (yield* AccountsRepo).findOrCreate("carol")
            const { wallet } = yield* (yield* WalletsRepo).insert({
              accountId: account.id,
              address: CAROL,
              label: "",
              self: true,
              watchingFromBlock: null,
              watchingFromAt: null,
              chainId: node.chainId
            })
            // The backfill fixes its range at the head it sees, then reads the wallet's history (a long one takes
            // minutes) while the recorder goes on: the token is not known yet, so the recorder passes its step.
            const backfills = yield* Backfills
            const [claimed] = yield* backfills.claim(node.chainId, "test-worker", 1, 60)
            const head = yield* Effect.promise(() => node.block("latest"))
            yield* backfills.start(wallet.id, 0, head.number)
            const step = yield* Effect.promise(() =>
              issuerCall(node, unlisted, "updateMultiplier", [1000700000000000000n])
            )
            yield* recordToHead
            const job = Option.getOrThrow(yield* backfills.find(claimed!.walletId))
            yield* runBackfill(job, "test-worker")
            yield* recordToHead
            const store = yield* ChainStore
            const changes = yield* store.changesOf(node.chainId, unlisted)
            expect(changes.map((c) => [c.status, c.newMultiplier, c.block])).toEqual([
              ["active", 1000700000000000000n, step.block]
            ])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "watches an unlisted token a backfill in another worker process found, from the recorder's next span",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const unlisted = chain.manifest.unlistedToken.address
        yield* Effect.promise(() => issuerCall(node, unlisted, "mint", [CAROL, 2n * WAD]))
        const db = yield* Layer.build(TestDatabase.postgres)
        // Two worker processes on one database: one runs the recorder, the other the backfill.
        const process = () =>
          Layer.build(
            ingestServices({
              rpcUrl: node.httpUrl,
              chainId: node.chainId,
              tokenListPath: chain.tokenListPath
            }).pipe(
              Layer.provideMerge(
                Layer.mergeAll(MultiplierReads.Default).pipe(Layer.provideMerge(Layer.succeedContext(db)))
              )
            )
          )
        const recorderProcess = yield* process()
        const backfillProcess = yield* process()
        yield* Effect.provide(recordToHead, recorderProcess)
        yield* Effect.provide(addAndBackfill(CAROL, node.chainId), backfillProcess)
        const step = yield* Effect.promise(() => issuerCall(node, unlisted, "updateMultiplier", [1000700000000000000n]))
        yield* Effect.provide(recordToHead, recorderProcess)
        const changes = yield* Effect.provide(
          Effect.flatMap(ChainStore, (store) => store.changesOf(node.chainId, unlisted)),
          recorderProcess
        )
        expect(changes.map((c) => [c.status, c.newMultiplier, c.block])).toEqual([
          ["active", 1000700000000000000n, step.block]
        ])
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "reads no blocks for a staged change while the head is still before its effectiveAt",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => startFaultProxy({ target: node.httpUrl })),
          (p) => Effect.promise(() => p.close())
        )
        yield* withIngestAt(
          chain,
          proxy.url,
          Effect.gen(function*() {
            yield* recordToHead
            const head = yield* Effect.promise(() => node.block("latest"))
            // A split announced 12.5 hours ahead, as CRWD's was.
            yield* Effect.promise(() =>
              issuerCall(
                node,
                tsla,
                "updateMultiplier",
                [4n * WAD, BigInt(head.timestamp + 45_000)],
                head.timestamp + 5
              )
            )
            yield* recordToHead
            const before = proxy.counts().eth_getBlockByNumber ?? 0
            for (let i = 0; i < 5; i++) {
              yield* Effect.promise(() => node.mine(1))
              yield* recordToHead
            }
            // Per step the head and the cursor's block (the re-org check) only: none to search for the change's block.
            expect((proxy.counts().eth_getBlockByNumber ?? 0) - before).toBeLessThanOrEqual(10)
            expect((yield* (yield* ChainStore).pendingChanges(node.chainId)).length).toBe(1)
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "on its first run, waits out failing state reads rather than losing a change already staged",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        const head = yield* Effect.promise(() => node.block("latest"))
        // Staged before the service ever ran: only the state at its first block shows it.
        yield* Effect.promise(() =>
          issuerCall(node, tsla, "updateMultiplier", [1000500000000000000n, BigInt(head.timestamp + 3_600)])
        )
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startFaultProxy({
              target: node.httpUrl,
              faults: { serverErrorRate: 1, randomFaultMethods: ["eth_call"] }
            })
          ),
          (p) => Effect.promise(() => p.close())
        )
        yield* withIngestAt(
          chain,
          proxy.url,
          Effect.gen(function*() {
            const store = yield* ChainStore
            // The node cannot be read: the first step fails (and is retried by the recorder), recording nothing.
            yield* Effect.either(recordToHead)
            proxy.setFaults({})
            yield* recordToHead
            const pending = yield* store.pendingChanges(node.chainId)
            expect(pending.map((c) => [c.token, c.newMultiplier])).toEqual([[key(tsla), 1000500000000000000n]])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a change staged before the first run (seen only in state) is replaced by a later announcement",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        const head = yield* Effect.promise(() => node.block("latest"))
        yield* Effect.promise(() =>
          issuerCall(node, tsla, "updateMultiplier", [1000500000000000000n, BigInt(head.timestamp + 3_600)])
        )
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            const store = yield* ChainStore
            expect((yield* store.pendingChanges(node.chainId)).map((c) => c.newMultiplier)).toEqual([
              1000500000000000000n
            ])
            // The issuer stages another change before the first took effect: on chain it replaces the first.
            yield* Effect.promise(() =>
              issuerCall(node, tsla, "updateMultiplier", [1000900000000000000n, BigInt(head.timestamp + 7_200)])
            )
            yield* recordToHead
            const pending = yield* store.pendingChanges(node.chainId)
            expect(pending.map((c) => [c.newMultiplier, c.effectiveAt.getTime() / 1000])).toEqual([
              [1000900000000000000n, head.timestamp + 7_200]
            ])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a re-org of blocks a backfill recorded ahead of the recorder drops what they held",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            const fork = yield* Effect.promise(() => node.snapshot())
            const dropped = yield* Effect.promise(() => issuerCall(node, tsla, "mint", [CAROL, 3n * WAD]))
            // Carol is added and backfilled to the head before the recorder's next step.
            yield* addAndBackfill(CAROL, node.chainId)
            let replacement = ""
            yield* Effect.promise(() =>
              node.reorg(fork, {
                blocks: 2,
                replay: async (n) => {
                  replacement = (await issuerCall(n, tsla, "mint", [CAROL, 7n * WAD])).hash
                }
              })
            )
            yield* recordToHead
            const sql = yield* SqlClient.SqlClient
            const rows = yield* sql<{ tx_hash: string }>`
            SELECT tx_hash FROM token_transfers WHERE to_key = ${key(CAROL)} AND block > ${fork.blockNumber}`
            expect(rows.map((r) => r.tx_hash)).toEqual([replacement])
            expect(dropped.hash).not.toBe(replacement)
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
