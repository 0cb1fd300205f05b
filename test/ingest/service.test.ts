import { describe, expect, it } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { BackfillRunnerLive } from "@scaledger/workers/ingest/BackfillRunner"
import { RecorderLive } from "@scaledger/workers/ingest/Recorder"
import { ConfigProvider, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { type FaultProxy, startFaultProxy } from "../chain/faultProxy.js"
import { ingestServices, issuerCall, type SeededChain, seededChain } from "../support/ChainHarness.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const WAD = 10n ** 18n

class TestChain
  extends Context.Tag("TestChain")<TestChain, { readonly chain: SeededChain; readonly proxy: FaultProxy }>()
{}

/**
 * The whole service on one database: the REST server, and the recorder and backfill runner as background fibers,
 * talking to the seeded chain through a (fault-free) proxy that counts requests.
 */
const Service = Layer.unwrapScoped(Effect.gen(function*() {
  const chain = yield* seededChain
  const proxy = yield* Effect.acquireRelease(
    Effect.promise(() => startFaultProxy({ target: chain.node.httpUrl })),
    (p) => Effect.promise(() => p.close())
  )
  const Db = TestDatabase.postgres
  const chainConfig = Layer.setConfigProvider(ConfigProvider.fromJson({ CHAIN_ID: chain.node.chainId }))
  const workers = Layer.mergeAll(RecorderLive, BackfillRunnerLive).pipe(
    Layer.provideMerge(
      ingestServices({ rpcUrl: proxy.url, chainId: chain.node.chainId, tokenListPath: chain.tokenListPath })
    ),
    Layer.provide(Db)
  )
  return Layer.mergeAll(
    restServer(Db).pipe(Layer.provide(chainConfig)),
    workers,
    Layer.succeed(TestChain, { chain, proxy })
  )
}))

const eventually = <A, E, R>(what: string, effect: Effect.Effect<Option.Option<A>, E, R>) =>
  effect.pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(`not yet: ${what}`), onSome: Effect.succeed })),
    Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(30)))),
    Effect.orDie
  )

// Built inside the test (not with `layer`), so the background fibers run on the live clock.
describe("the service against a local chain", () => {
  it.live(
    "watches a new wallet from the next block, backfills it, serves its multiplier history, and stops on delete",
    () =>
      Effect.gen(function*() {
        const { chain, proxy } = yield* TestChain
        const { node } = chain
        const store = yield* ChainStore
        const cursor = yield* eventually("the recorder's first step", store.cursor(node.chainId, "recorder"))
        const { key } = yield* newKey("service-alice")

        const created = yield* call("POST", "/v1/wallets", { key, body: { address: ALICE, label: "main" } })
        expect(created.status).toBe(201)
        expect(created.body.watchingFrom.block).toBeGreaterThan(cursor.block)
        // The block it names is not mined yet: no date until it is (not the date of the block before).
        expect(created.body.watchingFrom.date).toBeNull()
        expect(created.body.backfill.status).toBe("running")

        const done = yield* eventually(
          "backfill complete",
          Effect.map(
            call("GET", `/v1/wallets/${ALICE}`, { key }),
            (reply) => reply.body.backfill.status === "running" ? Option.none() : Option.some(reply.body)
          )
        )
        expect(done.backfill).toMatchObject({ status: "complete", coverageGaps: [], error: null })
        expect(done.backfill.progress.blocksDone).toBe(done.backfill.progress.blocksTotal)
        expect(done.backfill.progress.blocksTotal).toBeGreaterThanOrEqual(chain.manifest.headBlock)

        const crwd = yield* call("GET", "/v1/multiplier?token=crwd", { key })
        expect(crwd.status).toBe(200)
        const split = chain.manifest.multiplierChanges.find((c) => c.symbol === "CRWD")!
        expect(crwd.body).toMatchObject({
          token: "CRWD",
          changes: [{
            block: split.firstBlockAtOrAfter,
            date: "2026-07-02",
            from: "1",
            to: "4",
            source: "chain_storage",
            kind: "split",
            effectiveAt: "2026-07-02T13:30:00.000Z",
            announcedAt: new Date(
              chain.manifest.multiplierChanges.find((c) => c.symbol === "CRWD" && !c.reannouncement)!.announcedAt * 1000
            ).toISOString()
          }],
          pending: [],
          coverage: { gaps: [] }
        })
        expect(crwd.body.coverage.from <= "2026-07-01").toBe(true)
        const before = yield* call("GET", "/v1/multiplier?token=CRWD&at=2026-07-01", { key })
        expect(before.body.at).toEqual({ date: "2026-07-01", multiplier: "1" })
        const after = yield* call("GET", `/v1/multiplier?token=${split.token}&at=2026-07-02`, { key })
        expect(after.body.at).toEqual({ date: "2026-07-02", multiplier: "4" })
        const later = yield* call("GET", "/v1/multiplier?token=CRWD&from=2026-07-03", { key })
        expect(later.body.changes).toEqual([])
        expect((yield* call("GET", "/v1/multiplier?token=NOPE", { key })).body.error.code).toBe("not_found")
        expect((yield* call("GET", "/v1/multiplier?token=CRWD&at=2026-02-30", { key })).body.error.code).toBe(
          "invalid_date"
        )
        expect((yield* call("GET", "/v1/multiplier", { key })).body.error.code).toBe("invalid_request")

        // A change announced now and in force later is recorded live.
        const tsla = chain.manifest.tokens.find((t) => t.symbol === "TSLA")!.address
        const head = yield* Effect.promise(() => node.block("latest"))
        yield* Effect.promise(() =>
          issuerCall(node, tsla, "updateMultiplier", [2n * WAD, BigInt(head.timestamp + 60)], head.timestamp + 5)
        )
        const pending = yield* eventually(
          "the announcement",
          Effect.map(
            call("GET", "/v1/multiplier?token=TSLA", { key }),
            (reply) => reply.body.pending.length > 0 ? Option.some(reply.body) : Option.none()
          )
        )
        expect(pending.pending).toEqual([expect.objectContaining({ from: "1", to: "2", kind: "split" })])
        const named = yield* Effect.promise(() => node.block(created.body.watchingFrom.block))
        const watched = yield* call("GET", `/v1/wallets/${ALICE}`, { key })
        expect(watched.body.watchingFrom).toEqual({
          block: named.number,
          date: new Date(named.timestamp * 1000).toISOString().slice(0, 10)
        })
        yield* Effect.promise(async () => {
          await node.setNextBlockTimestamp(head.timestamp + 61)
          await node.mine(1)
        })
        const live = yield* eventually(
          "the activation",
          Effect.map(call("GET", "/v1/multiplier?token=TSLA", { key }), (reply) =>
            reply.body.changes.length > 0 ? Option.some(reply.body) : Option.none())
        )
        expect(live.changes).toEqual([
          expect.objectContaining({ from: "1", to: "2", source: "chain_storage", kind: "split" })
        ])
        expect(live.pending).toEqual([])

        // Deleting the wallet stops its watch: no request names its address any more.
        expect((yield* call("DELETE", `/v1/wallets/${ALICE}`, { key })).status).toBe(204)
        yield* Effect.sleep(Duration.millis(500))
        proxy.resetCounts()
        yield* Effect.promise(() =>
          issuerCall(node, tsla, "mint", [ALICE, WAD])
        )
        yield* Effect.promise(() => node.mine(3))
        yield* Effect.sleep(Duration.millis(800))
        const aliceTopic = `0x${ALICE.slice(2).toLowerCase().padStart(64, "0")}`
        const mentions = proxy.log().filter((entry) => JSON.stringify(entry.params).toLowerCase().includes(aliceTopic))
        expect(proxy.total()).toBeGreaterThan(0)
        expect(mentions).toEqual([])
      }).pipe(Effect.provide(Service), Effect.scoped),
    120_000
  )
})
