import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { DeliveryWorkerLive } from "@scaledger/workers/webhooks/DeliveryWorker"
import { newWebhookSecret, WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { WebhookSender } from "@scaledger/workers/webhooks/Sender"
import { WebhookConfig, type WebhookConfigShape } from "@scaledger/workers/webhooks/WebhookConfig"
import { Duration, Effect, Exit, Layer, Redacted, Schedule, Scope } from "effect"
import { cause } from "./AlertCauses.js"
import { type Receiver, startReceiver, TEST_CA } from "./Receiver.js"

/**
 * The delivery worker stopped as a shutdown stops it (its layer's scope closed) while an attempt waits for a slow
 * receiver. The lease (30 s) is far longer than the test waits: only a lease given back lets it send again.
 */
const box = WebhookSecretBox.fromKey(Redacted.make("shutdown-test-key"))
const Db = Layer.mergeAll(WebhooksRepo.Default, AlertsStore.Default, AccountsRepo.Default).pipe(
  Layer.provideMerge(TestDatabase.postgres),
  Layer.merge(box)
)

const worker = (config: Partial<WebhookConfigShape>) =>
  DeliveryWorkerLive.pipe(Layer.provide(Layer.mergeAll(
    WebhooksRepo.Default,
    WebhookSender.layer({ ca: TEST_CA }),
    WebhookConfig.layer({
      allowPrivateTargets: true,
      pollMs: 20,
      leaseSeconds: 30,
      totalTimeoutMs: 20_000,
      ...config
    }),
    box
  )))

/** Starts a worker; closing the returned scope stops it as a shutdown would. */
const startWorker = (config: Partial<WebhookConfigShape>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(worker(config), scope)
    return scope
  })

const until = <A, R>(what: string, probe: Effect.Effect<A | undefined, never, R>, seconds = 10) =>
  probe.pipe(
    Effect.filterOrFail((value): value is A => value !== undefined, () => `not yet: ${what}`),
    Effect.retry(Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(Duration.seconds(seconds)))),
    Effect.orDie
  )

/** An endpoint at the receiver and one alert raised for it; its delivery's event id. */
const raiseOne = (name: string, receiver: Receiver) =>
  Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const { account } = yield* (yield* AccountsRepo).findOrCreate(name)
    yield* repo.create({
      id: `we_${name}`,
      accountId: account.id,
      url: receiver.url(`/${name}`),
      description: "",
      kinds: [],
      secretEnc: (yield* WebhookSecretBox).seal(newWebhookSecret())
    })
    const { alert } = yield* (yield* AlertsStore).raise(account.id, cause({ key: `shutdown:${name}` }))
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ event_id: string }>`SELECT event_id FROM webhook_deliveries WHERE alert_id = ${
      alert!.id
    }`
    return row!.event_id
  }).pipe(Effect.orDie)

const delivery = (eventId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string; attempts: number; lease_owner: string | null; lease_until: Date | null }>`
      SELECT status, attempts, lease_owner, lease_until FROM webhook_deliveries WHERE event_id = ${eventId}`
  ).pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  )

const requestsFor = (receiver: Receiver, eventId: string) =>
  receiver.received.filter((request) => request.headers["scaledger-event-id"] === eventId)

describe("webhook delivery worker at shutdown", () => {
  it.live("an attempt still waiting when the grace ends gives back its lease; the next worker sends it at once", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startReceiver()),
        (r) => Effect.promise(r.close)
      )
      receiver.answer = (request) =>
        requestsFor(receiver, request.headers["scaledger-event-id"] as string).length === 1
          ? { status: 200, delayMs: 15_000 }
          : { status: 200 }
      const eventId = yield* raiseOne("slow", receiver)
      const first = yield* startWorker({ shutdownGraceMs: 300 })
      yield* until("the attempt in flight", Effect.sync(() => requestsFor(receiver, eventId)[0]))
      const stopping = Date.now()
      yield* Scope.close(first, Exit.void)
      expect(Date.now() - stopping).toBeLessThan(3_000)
      expect(yield* delivery(eventId)).toEqual({ status: "pending", attempts: 0, lease_owner: null, lease_until: null })

      const second = yield* startWorker({ shutdownGraceMs: 300 })
      yield* until(
        "delivered by the next worker",
        Effect.map(delivery(eventId), (row) => row.status === "succeeded" ? row : undefined)
      )
      yield* Scope.close(second, Exit.void)
      expect(requestsFor(receiver, eventId)).toHaveLength(2)
      expect(yield* delivery(eventId)).toMatchObject({ status: "succeeded", attempts: 1, lease_owner: null })
    }).pipe(Effect.provide(Db), Effect.scoped))

  it.live("an attempt that ends within the grace is recorded: not sent again", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startReceiver()),
        (r) => Effect.promise(r.close)
      )
      receiver.answer = { status: 200, delayMs: 500 }
      const eventId = yield* raiseOne("graceful", receiver)
      const scope = yield* startWorker({ shutdownGraceMs: 5_000 })
      yield* until("the attempt in flight", Effect.sync(() => requestsFor(receiver, eventId)[0]))
      yield* Scope.close(scope, Exit.void)
      expect(yield* delivery(eventId)).toEqual({
        status: "succeeded",
        attempts: 1,
        lease_owner: null,
        lease_until: null
      })
      expect(requestsFor(receiver, eventId)).toHaveLength(1)
    }).pipe(Effect.provide(Db), Effect.scoped))
})
