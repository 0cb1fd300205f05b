import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { type AlertCause, AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { DeliveryWorkerLive } from "@scaledger/workers/webhooks/DeliveryWorker"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { WebhookSender } from "@scaledger/workers/webhooks/Sender"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { ConfigProvider, Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"
import { cause } from "./AlertCauses.js"
import { type Receiver, startReceiver, TEST_CA, verifyWithStripe } from "./Receiver.js"
import { conflictNext } from "./SqlConflicts.js"

class Receivers extends Context.Tag("Receivers")<Receivers, { readonly main: Receiver; readonly other: Receiver }>() {}

/**
 * The REST server and the delivery worker (as a fiber) on one PostgreSQL database, delivering to local HTTPS
 * receivers: retry delays shortened to 100 ms and 200 ms, the test CA given to the sender.
 */
const Service = Layer.unwrapScoped(Effect.gen(function*() {
  const Db = TestDatabase.postgres
  const main = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(r.close))
  const other = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(r.close))
  const box = WebhookSecretBox.fromKey(Redacted.make("test-webhook-secret-key"))
  const worker = DeliveryWorkerLive.pipe(
    Layer.provide(Layer.mergeAll(
      WebhooksRepo.Default,
      WebhookSender.layer({ ca: TEST_CA }),
      WebhookConfig.layer({
        allowPrivateTargets: true,
        retryDelaysMs: [100, 200],
        retryAfterCapMs: 5_000,
        pollMs: 20,
        leaseSeconds: 5,
        totalTimeoutMs: 1_000
      }),
      box
    )),
    Layer.provide(Db)
  )
  return Layer.mergeAll(
    restServer(Db).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" })))
    ),
    worker,
    Layer.mergeAll(AlertsStore.Default, WebhooksRepo.Default, AccountsRepo.Default).pipe(Layer.provideMerge(Db)),
    Layer.succeed(Receivers, { main, other })
  )
}))

/** A new account with a key and one endpoint at the receiver; the endpoint's secret. */
const setup = (name: string, url: string, kinds: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const { key } = yield* newKey(name)
    const created = yield* call("POST", "/v1/webhooks", { key, body: { url, kinds, description: name } })
    expect(created.status, created.text).toBe(201)
    const accountId = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(name))).id
    return { key, accountId, endpoint: created.body as { id: string; secret: string } }
  })

const raise = (accountId: string, overrides: Partial<AlertCause> = {}) =>
  Effect.flatMap(AlertsStore, (store) => store.raise(accountId, cause(overrides))).pipe(Effect.orDie)

const until = <A, R>(what: string, probe: Effect.Effect<A | undefined, never, R>, seconds = 20) =>
  probe.pipe(
    Effect.filterOrFail((value): value is A => value !== undefined, () => `not yet: ${what}`),
    Effect.retry(Schedule.spaced(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(seconds)))),
    Effect.orDie
  )

/** The event id of the delivery an alert made (the account has one endpoint). */
const eventOf = (alertId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ event_id: string }>`SELECT event_id FROM webhook_deliveries WHERE alert_id = ${alertId}`
  ).pipe(
    Effect.map((rows) => rows[0]!.event_id),
    Effect.orDie
  )

const deliveryState = (eventId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<
        { status: string; attempts: number }
      >`SELECT status, attempts FROM webhook_deliveries WHERE event_id = ${eventId}`
  )
    .pipe(Effect.map((rows) => rows[0]), Effect.orDie)

const forEvent = (receiver: Receiver, eventId: string) =>
  receiver.received.filter((r) => r.headers["scaledger-event-id"] === eventId)

describe("webhook delivery policy", () => {
  it.live("500, 500, 200: three attempts under one event id, each signed afresh and verified by Stripe", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId, endpoint, key } = yield* setup("policy-retry", main.url("/retry"))
      main.answer = (request) =>
        forEvent(main, request.headers["scaledger-event-id"] as string).length < 3
          ? { status: 500, body: "busy" }
          : { status: 200 }
      const raisedAt = Date.now()
      const { alert } = yield* raise(accountId)
      const eventId = yield* eventOf(alert!.id)
      yield* until("succeeded", Effect.map(deliveryState(eventId), (s) => s?.status === "succeeded" ? s : undefined))
      const requests = forEvent(main, eventId)
      expect(requests).toHaveLength(3)
      for (const request of requests) {
        expect(request.path).toBe("/retry")
        expect(request.headers["content-type"]).toBe("application/json")
        expect(request.headers["scaledger-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
        const body = verifyWithStripe(request, endpoint.secret)
        expect(body.createdAt).toBeGreaterThanOrEqual(raisedAt)
        expect(body.createdAt).toBeLessThanOrEqual(requests[0]!.at)
        expect(body).toEqual({
          id: eventId,
          type: "alert",
          createdAt: body.createdAt,
          data: {
            kind: "token-paused",
            severity: "critical",
            title: "AAPL: token paused",
            detail: "The issuer paused AAPL.",
            symbol: "AAPL",
            at: Date.UTC(2026, 10, 20, 15, 0, 0)
          }
        })
      }
      // The same bytes each time; a signature under another secret does not verify.
      expect(new Set(requests.map((r) => r.body)).size).toBe(1)
      expect(() => verifyWithStripe(requests[0]!, "whsec_00000000000000000000000000000000")).toThrow()
      // Retries waited the configured delays (100 ms, 200 ms, ±20 %).
      expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(75)
      expect(requests[2]!.at - requests[1]!.at).toBeGreaterThanOrEqual(155)

      const log = yield* call("GET", "/v1/webhooks/deliveries", { key })
      expect(log.status).toBe(200)
      expect(log.body.deliveries.map((d: any) => [d.attempt, d.outcome, d.status])).toEqual([
        [3, "success", 200],
        [2, "failure", 500],
        [1, "failure", 500]
      ])
      expect(log.body.deliveries[0]).toMatchObject({
        endpointId: endpoint.id,
        eventId,
        kind: "token-paused",
        error: null
      })
      expect(log.body.deliveries[1].error).toBe("HTTP 500")
      expect(Number.isInteger(log.body.deliveries[0].durationMs)).toBe(true)
      const listed = yield* call("GET", "/v1/webhooks", { key })
      expect(listed.body.webhooks[0]).toMatchObject({ id: endpoint.id, enabled: true, consecutiveFailures: 0 })
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("400 is final after one attempt; 429 waits its Retry-After; 302 is a failure and is not followed", () =>
    Effect.gen(function*() {
      const { main, other } = yield* Receivers
      const { accountId, key } = yield* setup("policy-final", main.url("/final"))

      // 400: one attempt, the delivery failed, the endpoint's failure count is 1.
      main.answer = { status: 400, body: "bad" }
      const first = yield* raise(accountId)
      const badRequest = yield* eventOf(first.alert!.id)
      yield* until("failed", Effect.map(deliveryState(badRequest), (s) => s?.status === "failed" ? s : undefined))
      yield* Effect.sleep(Duration.millis(400))
      expect(forEvent(main, badRequest)).toHaveLength(1)
      expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks[0].consecutiveFailures).toBe(1)

      // 429 with Retry-After: 1 → the second attempt comes at least a second later, not after 100 ms.
      main.answer = (request) =>
        forEvent(main, request.headers["scaledger-event-id"] as string).length === 1
          ? { status: 429, headers: { "retry-after": "1" } }
          : { status: 204 }
      const limited = yield* eventOf((yield* raise(accountId)).alert!.id)
      yield* until("succeeded", Effect.map(deliveryState(limited), (s) => s?.status === "succeeded" ? s : undefined))
      const [r1, r2] = forEvent(main, limited)
      expect(r2!.at - r1!.at).toBeGreaterThanOrEqual(950)
      expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks[0].consecutiveFailures).toBe(0)

      // 302 to another receiver: a failure, never followed, not retried.
      main.answer = { status: 302, headers: { location: other.url("/elsewhere") } }
      const redirected = yield* eventOf((yield* raise(accountId)).alert!.id)
      yield* until("failed", Effect.map(deliveryState(redirected), (s) => s?.status === "failed" ? s : undefined))
      yield* Effect.sleep(Duration.millis(400))
      expect(forEvent(main, redirected)).toHaveLength(1)
      expect(other.received).toHaveLength(0)
      const log = yield* call("GET", "/v1/webhooks/deliveries", { key })
      expect(log.body.deliveries[0]).toMatchObject({ eventId: redirected, attempt: 1, outcome: "failure", status: 302 })
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("time-outs and refused connections are retried, then the delivery fails with the reason logged", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId, key } = yield* setup("policy-network", main.url("/slow"))
      main.answer = { status: 200, delayMs: 3_000 }
      yield* raise(accountId)
      const slow = yield* until(
        "three timed-out attempts",
        Effect.map(
          call("GET", "/v1/webhooks/deliveries", { key }),
          (r) => r.body.deliveries.length === 3 ? r : undefined
        )
      )
      expect(slow.body.deliveries.map((d: any) => [d.attempt, d.outcome, d.status, d.error])).toEqual([
        [3, "failure", null, "timed out after 1000 ms"],
        [2, "failure", null, "timed out after 1000 ms"],
        [1, "failure", null, "timed out after 1000 ms"]
      ])
      expect(slow.body.deliveries.every((d: any) => d.durationMs >= 900)).toBe(true)

      // Nothing listens on the port of a closed receiver: connection refused, retried, then failed.
      const closed = yield* Effect.promise(() => startReceiver())
      yield* Effect.promise(closed.close)
      const refused = yield* setup("policy-refused", closed.url("/gone"))
      yield* raise(refused.accountId)
      const log = yield* until(
        "three refused attempts",
        Effect.map(
          call("GET", "/v1/webhooks/deliveries", { key: refused.key }),
          (r) => r.body.deliveries.length === 3 ? r : undefined
        )
      )
      expect(log.body.deliveries.map((d: any) => d.attempt)).toEqual([3, 2, 1])
      expect(log.body.deliveries.every((d: any) => d.status === null && /ECONNREFUSED/.test(d.error))).toBe(true)
      expect((yield* call("GET", "/v1/webhooks", { key: refused.key })).body.webhooks[0].consecutiveFailures).toBe(1)
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("an attempt's record broken off by a deadlock is written again: one request, delivered", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId } = yield* setup("policy-record-conflict", main.url("/conflict"))
      main.answer = { status: 200 }
      yield* conflictNext("webhook_attempts")
      const { alert } = yield* raise(accountId)
      const eventId = yield* eventOf(alert!.id)
      yield* until("succeeded", Effect.map(deliveryState(eventId), (s) => s?.status === "succeeded" ? s : undefined))
      // Not sent again when the lease (5 s) ran out, as an attempt whose record was lost would be.
      expect(forEvent(main, eventId)).toHaveLength(1)
      expect(yield* deliveryState(eventId)).toEqual({ status: "succeeded", attempts: 1 })
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("a 200 whose body never ends is a success, not retried", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId, key } = yield* setup("policy-body-hangs", main.url("/hang"))
      main.answer = { status: 200, body: "received", neverEnds: true }
      const { alert } = yield* raise(accountId)
      const eventId = yield* eventOf(alert!.id)
      yield* until("settled", Effect.map(deliveryState(eventId), (s) => s?.status !== "pending" ? s : undefined))
      expect(yield* deliveryState(eventId)).toEqual({ status: "succeeded", attempts: 1 })
      yield* Effect.sleep(Duration.millis(400))
      expect(forEvent(main, eventId)).toHaveLength(1)
      const log = yield* call("GET", "/v1/webhooks/deliveries", { key })
      expect(log.body.deliveries.map((d: any) => [d.attempt, d.outcome, d.status, d.error])).toEqual([
        [1, "success", 200, null]
      ])
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("an answer holding NUL bytes is logged, not lost: the delivery is done once, not sent again", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId, key } = yield* setup("policy-nul-answer", main.url("/binary"))
      // A binary answer (a text column cannot hold NUL): still recorded, so the lease does not send it again.
      main.answer = { status: 200, body: "ok\u0000\u0001binary" }
      const { alert } = yield* raise(accountId)
      const eventId = yield* eventOf(alert!.id)
      yield* until("succeeded", Effect.map(deliveryState(eventId), (s) => s?.status === "succeeded" ? s : undefined))
      expect(yield* deliveryState(eventId)).toEqual({ status: "succeeded", attempts: 1 })
      expect(forEvent(main, eventId)).toHaveLength(1)
      const log = yield* call("GET", "/v1/webhooks/deliveries", { key })
      expect(log.body.deliveries.map((d: any) => [d.attempt, d.outcome, d.status])).toEqual([[1, "success", 200]])
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("a slow receiver does not hold up deliveries to others", () =>
    Effect.gen(function*() {
      const { main, other } = yield* Receivers
      main.answer = { status: 200, delayMs: 5_000 }
      other.answer = { status: 200 }
      const slow = yield* setup("slow-account", main.url("/slow"))
      const fast = yield* setup("fast-account", other.url("/fast"))
      yield* raise(slow.accountId)
      yield* until("the slow attempt in flight", Effect.sync(() => main.received.length > 0 ? true : undefined))
      const raisedAt = Date.now()
      yield* raise(fast.accountId)
      const delivered = yield* until("the fast delivery", Effect.sync(() => other.received[0]))
      // The slow attempt times out after 1 s; the fast one is not queued behind it.
      expect(delivered.at - raisedAt).toBeLessThan(900)
    }).pipe(Effect.provide(Service), Effect.scoped))

  it.live("a secret sealed under another WEBHOOK_SECRET_KEY: nothing sent nor counted, delivered once a key opens it", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId, endpoint, key } = yield* setup("policy-other-key", main.url("/sealed"))
      const sql = yield* SqlClient.SqlClient
      // As if the API process that stored the endpoint had another key than this worker.
      const otherBox = yield* Effect.provide(WebhookSecretBox, WebhookSecretBox.fromKey(Redacted.make("another key")))
      yield* sql`UPDATE webhook_endpoints SET secret_enc = ${otherBox.seal(endpoint.secret)} WHERE id = ${endpoint.id}`
      const { alert } = yield* raise(accountId)
      const eventId = yield* eventOf(alert!.id)
      // Claimed and given back (the lease is 5 s): no attempt recorded, nothing sent, the endpoint untouched.
      yield* Effect.sleep("1500 millis")
      expect(yield* deliveryState(eventId)).toEqual({ status: "pending", attempts: 0 })
      expect(forEvent(main, eventId)).toEqual([])
      expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks[0]).toMatchObject({
        enabled: true,
        consecutiveFailures: 0
      })
      // Sealed under the worker's key (a process with the right key, or the key made the same): delivered.
      const box = yield* Effect.provide(
        WebhookSecretBox,
        WebhookSecretBox.fromKey(Redacted.make("test-webhook-secret-key"))
      )
      yield* sql`UPDATE webhook_endpoints SET secret_enc = ${box.seal(endpoint.secret)} WHERE id = ${endpoint.id}`
      yield* until("delivered", Effect.map(deliveryState(eventId), (s) => s?.status === "succeeded" ? s : undefined))
      expect(forEvent(main, eventId).map((request) => verifyWithStripe(request, endpoint.secret).id)).toEqual([eventId])
    }).pipe(Effect.orDie, Effect.provide(Service), Effect.scoped))

  it.live("10 failed deliveries disable the endpoint, keeping its row and log; re-enabling resets the count", () =>
    Effect.gen(function*() {
      const { main } = yield* Receivers
      const { accountId, endpoint, key } = yield* setup("policy-disable", main.url("/down"))
      main.answer = { status: 410 }
      for (let i = 0; i < 10; i++) yield* raise(accountId)
      const disabled = yield* until(
        "disabled",
        Effect.map(call("GET", "/v1/webhooks", { key }), (r) => r.body.webhooks[0].enabled === false ? r : undefined)
      )
      expect(disabled.body.webhooks[0]).toMatchObject({ id: endpoint.id, enabled: false, consecutiveFailures: 10 })
      const log = yield* call("GET", "/v1/webhooks/deliveries", { key })
      expect(log.body.deliveries).toHaveLength(10)
      expect(log.body.deliveries.every((d: any) => d.outcome === "failure" && d.status === 410)).toBe(true)

      // A disabled endpoint gets nothing raised while it is disabled.
      const during = yield* raise(accountId)
      expect(during.deliveries).toBe(0)

      const enabled = yield* call("PATCH", `/v1/webhooks/${endpoint.id}`, { key, body: { enabled: true } })
      expect(enabled.status).toBe(200)
      expect(enabled.body).toMatchObject({ enabled: true, consecutiveFailures: 0 })
      main.answer = { status: 200 }
      const after = yield* raise(accountId)
      expect(after.deliveries).toBe(1)
      const delivered = yield* until(
        "delivered after re-enabling",
        Effect.sync(() => main.received.length === 11 ? main.received[10] : undefined)
      )
      expect(verifyWithStripe(delivered, endpoint.secret).data.kind).toBe("token-paused")
      expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks[0].consecutiveFailures).toBe(0)
    }).pipe(Effect.provide(Service), Effect.scoped))
})
