import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { BackfillRunnerLive } from "@scaledger/workers/ingest/BackfillRunner"
import { PriceRecorderLive } from "@scaledger/workers/ingest/PriceRecorder"
import { PriceWake } from "@scaledger/workers/ingest/PriceWake"
import { RecorderLive } from "@scaledger/workers/ingest/Recorder"
import { LedgerBuilderLive, LedgerPricesLive } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { ingestServices, type SeededChain, seededChain } from "../support/ChainHarness.js"
import { call, newKey, type Reply, restServer } from "../support/RestHarness.js"

const CAROL = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
/** The price poll, far longer than the test waits: only the wake-up at the backfill's end can price in time. */
const POLL_MS = 300_000

class TestChain extends Context.Tag("TestChain")<TestChain, SeededChain>() {}

const Service = Layer.unwrapScoped(Effect.gen(function*() {
  const chain = yield* seededChain
  yield* Effect.promise(async () => {
    for (let i = 0; i < 12; i++) await chain.node.request("evm_mine", [])
  })
  const Db = TestDatabase.postgres
  const services = ingestServices({
    rpcUrl: chain.node.httpUrl,
    chainId: chain.node.chainId,
    tokenListPath: chain.tokenListPath,
    // No PRICE_HISTORY_FROM: each feed's history is walked back only to its token's first recorded transfer.
    ingest: { pricePollMs: POLL_MS, priceHistoryFrom: null }
  })
  const workers = Layer.mergeAll(RecorderLive, BackfillRunnerLive, PriceRecorderLive, LedgerBuilderLive).pipe(
    Layer.provide(LedgerPricesLive),
    Layer.provide(PriceWake.Default),
    Layer.provideMerge(services),
    Layer.provide(Db)
  )
  return Layer.mergeAll(restServer(Db), workers, Layer.succeed(TestChain, chain)).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({
      CHAIN_ID: chain.node.chainId,
      LEDGER_POLL_MS: 100,
      LEDGER_MIN_INTERVAL_MS: 2_000
    })))
  )
}))

const poll = <R>(
  what: string,
  read: Effect.Effect<Reply, never, R>,
  ready: (reply: Reply) => boolean,
  seconds: number
) =>
  read.pipe(
    Effect.filterOrFail(ready, (reply) => `${what}: ${reply.status} ${reply.text.slice(0, 400)}`),
    Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(seconds)))),
    Effect.orDie
  )

layer(Service, { timeout: 180_000, excludeTestServices: true })("from POST /v1/wallets to priced positions", (it) => {
  it.effect(
    "a backfill's end wakes the price recorder: the basis price is in the positions within 10 s",
    () =>
      Effect.gen(function*() {
        const chain = yield* TestChain
        // The recorder is running and the first price pass (latest rounds only: no transfer recorded yet) is done.
        yield* Effect.flatMap(ChainStore, (store) =>
          store.cursor(chain.node.chainId, "recorder").pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail("no cursor"), onSome: Effect.succeed })),
            Effect.retry(Schedule.spaced(Duration.millis(50))),
            Effect.timeout(Duration.seconds(30)),
            Effect.orDie
          ))
        const feeds = new Set(chain.manifest.prices.map((p) => p.symbol)).size
        const sql = yield* SqlClient.SqlClient
        yield* sql<{ n: string }>`SELECT count(DISTINCT feed_key) AS n FROM price_rounds`.pipe(
          Effect.orDie,
          Effect.filterOrFail(([row]) => Number(row!.n) >= feeds),
          Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(30)))),
          Effect.orDie
        )
        const [before] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM price_rounds`.pipe(Effect.orDie)
        // Only each feed's latest round so far: no transfer is recorded yet, so no history was asked for.
        expect(Number(before!.n)).toBe(feeds)
        const { key } = yield* newKey("priced")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: CAROL } })).status).toBe(201)
        yield* poll(
          "the backfill",
          call("GET", `/v1/wallets/${CAROL}`, { key }),
          (r) => r.status === 200 && r.body.backfill.status === "complete",
          60
        )
        const backfilled = Date.now()
        // MU: acquired before the newest round, so its basis needs the feed's history, which no pass had a reason
        // to walk before this backfill recorded MU's first transfer.
        const priced = yield* poll(
          "MU's basis",
          call("GET", "/v1/positions", { key }),
          (r) => r.status === 200 && r.body.positions.some((p: any) => p.token === "MU" && p.costBasisAmount !== null),
          20
        )
        const seconds = (Date.now() - backfilled) / 1000
        expect(priced.body.positions.find((p: any) => p.token === "MU")).toMatchObject({
          costBasisAmount: "118.428860565614240004",
          unknownBecause: []
        })
        console.log(`priced ${seconds.toFixed(1)} s after the backfill ended`)
        expect(seconds).toBeLessThan(10)
      }),
    120_000
  )
})
