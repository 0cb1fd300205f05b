/**
 * `npm run bench:webhooks`: 1,000 alerts delivered to a local HTTPS receiver (answering 200 at once) through the
 * outbox, on PostgreSQL (`DATABASE_URL`, default the local server) and on the embedded PGlite. Prints
 * (a) deliveries per second draining 1,000 deliveries already due, and (b) the outbox lag (from the transaction that
 * raised an alert to the receiver holding its delivery) while 1,000 alerts are raised one by one with the delivery
 * worker running. `BENCH_ALERTS` changes the count.
 */
import type { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { type AlertCause, AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { DeliveryWorkerLive } from "@scaledger/workers/webhooks/DeliveryWorker"
import { newWebhookSecret, WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { WebhookSender } from "@scaledger/workers/webhooks/Sender"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { performance } from "node:perf_hooks"
import { type Receiver, startReceiver, TEST_CA } from "../webhooks/Receiver.js"

const ALERTS = Number(process.env.BENCH_ALERTS ?? 1_000)

const cause = (i: number, run: string): AlertCause => ({
  key: `bench:${run}:${i}`,
  kind: "accrued-income",
  severity: "info",
  title: `AAPL: dividend step, income accrued (${i})`,
  detail: "AAPL's multiplier went from 1 to 1.000566080061092436: 16 tokens held gained 0.009057281 shares.",
  symbol: "AAPL",
  at: new Date(),
  oneShot: true
})

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const waitUntil = (predicate: () => boolean) =>
  Effect.promise(async () => {
    while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5))
  })

const bench = (name: string, database: Layer.Layer<SqlClient.SqlClient>, receiver: Receiver) =>
  Effect.gen(function*() {
    receiver.received.length = 0
    const accounts = yield* AccountsRepo
    const store = yield* AlertsStore
    const repo = yield* WebhooksRepo
    const box = yield* WebhookSecretBox
    const { account } = yield* accounts.findOrCreate(`bench-${name}`)
    yield* repo.create({
      id: `we_bench_${name.toLowerCase()}`,
      accountId: account.id,
      url: receiver.url("/bench"),
      description: "",
      kinds: [],
      secretEnc: box.seal(newWebhookSecret())
    })
    const worker = DeliveryWorkerLive.pipe(
      Layer.provide(Layer.mergeAll(
        WebhooksRepo.Default,
        WebhookSender.layer({ ca: TEST_CA }),
        WebhookConfig.layer({ allowPrivateTargets: true, pollMs: 20 }),
        WebhookSecretBox.fromKey(Redacted.make("bench"))
      )),
      Layer.provide(database)
    )

    // (a) Drain: 1,000 deliveries due at once, then the worker starts.
    for (let i = 0; i < ALERTS; i++) yield* store.raise(account.id, cause(i, "drain"))
    const drainStart = performance.now()
    yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.buildWithScope(worker, yield* Effect.scope)
      yield* waitUntil(() => receiver.received.length >= ALERTS)
    }))
    const drainMs = performance.now() - drainStart
    console.log(
      `${name}: drained ${ALERTS} due deliveries in ${(drainMs / 1000).toFixed(2)} s: ${
        Math.round(ALERTS / (drainMs / 1000))
      } deliveries/s`
    )

    // (b) Lag: the worker runs while alerts are raised one by one (each with its delivery, in one transaction).
    receiver.received.length = 0
    const raisedAt = new Map<string, number>()
    const raiseStart = performance.now()
    yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.buildWithScope(worker, yield* Effect.scope)
      for (let i = 0; i < ALERTS; i++) {
        const { alert } = yield* store.raise(account.id, cause(i, "lag"))
        raisedAt.set(alert!.title, Date.now())
      }
      const raiseMs = performance.now() - raiseStart
      yield* waitUntil(() => receiver.received.length >= ALERTS)
      const lags = receiver.received
        .map((r) => r.at - raisedAt.get(JSON.parse(r.body).data.title)!)
        .sort((a, b) => a - b)
      console.log(
        `${name}: raised ${ALERTS} alerts in ${(raiseMs / 1000).toFixed(2)} s (${
          Math.round(ALERTS / (raiseMs / 1000))
        }/s); outbox lag p50 ${percentile(lags, 50)} ms, p95 ${percentile(lags, 95)} ms, max ${
          lags[lags.length - 1]
        } ms`
      )
    }))
  }).pipe(
    Effect.provide(
      Layer.mergeAll(AccountsRepo.Default, AlertsStore.Default, WebhooksRepo.Default).pipe(
        Layer.provideMerge(database),
        Layer.merge(WebhookSecretBox.fromKey(Redacted.make("bench")))
      )
    )
  )

const main = Effect.gen(function*() {
  const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(r.close))
  const url = yield* TestDatabase.postgresUrl
  const postgres = Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie, Layer.memoize)
  yield* bench("PostgreSQL", yield* postgres, receiver)
  const pglite = Database.layerWith({ _tag: "Pglite", dataDir: undefined }).pipe(Layer.orDie, Layer.memoize)
  yield* bench("PGlite", yield* pglite, receiver)
})

Effect.runPromise(
  Effect.scoped(main).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
