import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { type AttemptResult, type ClaimedDelivery, WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Layer, Schedule, TestServices } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"
import { cause } from "./AlertCauses.js"
import { conflictNext } from "./SqlConflicts.js"

/**
 * The lock order of the transactions that touch an endpoint and its deliveries (PATCH, DELETE, an attempt's
 * record), on PostgreSQL. A transaction holding a share lock on the endpoint's row makes the others queue on it in
 * a chosen order; letting it go, they run in that order. With two lock orders the first cycles with the second
 * (40P01); with one, all complete.
 */
const Repos = Layer.mergeAll(WebhooksRepo.Default, AlertsStore.Default, AccountsRepo.Default).pipe(
  Layer.provideMerge(TestDatabase.postgres)
)

let seq = 0

/** An account with one endpoint and `n` deliveries to it, claimed (leased) by `owner`. */
const setup = (owner: string, n: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WebhooksRepo
    const store = yield* AlertsStore
    const { account } = yield* (yield* AccountsRepo).findOrCreate(`locks-${++seq}`)
    const endpoint = yield* repo.create({
      id: `we_locks${seq}`,
      accountId: account.id,
      url: "https://hooks.example.com/",
      description: "",
      kinds: [],
      secretEnc: "v1.unused"
    })
    for (let i = 0; i < n; i++) {
      yield* store.raise(account.id, cause({ key: `locks:${seq}:${i}` }))
    }
    const claimed = yield* repo.claimDue(owner, n, 60)
    expect(claimed).toHaveLength(n)
    const deliveries = [...claimed].sort((a, b) => Number(a.id) - Number(b.id))
    return { sql, repo, accountId: account.id, endpointId: endpoint.id, deliveries }
  })

const record = (delivery: ClaimedDelivery, result: AttemptResult) => ({
  delivery,
  attempt: 1,
  outcome: result._tag === "Delivered" ? "success" as const : "failure" as const,
  status: result._tag === "Delivered" ? 200 : 410,
  error: result._tag === "Delivered" ? null : "HTTP 410",
  response: null,
  durationMs: 1,
  at: new Date(),
  result
})

/** Backends of this test's database waiting for a lock. */
const waitingOnLocks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: string }>`
    SELECT count(*) AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`).pipe(Effect.map((rows) => Number(rows[0]!.n)))

const untilWaiting = (n: number) =>
  waitingOnLocks.pipe(
    Effect.filterOrFail((waiting) => waiting >= n, () => `fewer than ${n} waiting`),
    Effect.retry(Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(Duration.seconds(10)))),
    Effect.orDie,
    TestServices.provideLive
  )

/**
 * Holds `hold`'s lock in a transaction while `steps` start one after another, each queued on a lock before the next
 * starts; then lets go and returns every step's exit.
 */
const interleaved = (hold: string, steps: ReadonlyArray<Effect.Effect<any, unknown>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(hold)
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    })))
    yield* Deferred.await(locked)
    const fibers: Array<Fiber.RuntimeFiber<any, unknown>> = []
    for (const [i, step] of steps.entries()) {
      fibers.push(yield* Effect.fork(step))
      yield* untilWaiting(i + 1)
    }
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    return yield* Effect.forEach(fibers, Fiber.await)
  })

/** A share lock on the endpoint's row: whatever changes it queues, in the order it came. */
const endpointShared = (endpointId: string) => `SELECT 1 FROM webhook_endpoints WHERE id = '${endpointId}' FOR SHARE`
/** Attempts cannot be logged: a record queues there, holding what it locked before. */
const logLocked = "LOCK TABLE webhook_attempts IN SHARE MODE"

/** A step's result; a failure names its SQLSTATE (40P01: deadlock). */
const succeeded = <A>(exit: Exit.Exit<A, unknown>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  const error = Cause.squash(exit.cause) as { cause?: { code?: string } }
  throw new Error(`failed (SQLSTATE ${error.cause?.code}): ${Cause.pretty(exit.cause)}`)
}

describe("webhook lock order (PostgreSQL)", () => {
  layer(Repos, { timeout: 60_000 })((it) => {
    it.effect("PATCH {enabled:false} and an attempt's record do not deadlock", () =>
      Effect.gen(function*() {
        const { endpointId, deliveries, repo, accountId, sql } = yield* setup("whw_a", 2)
        const [recorded, patch] = yield* interleaved(logLocked, [
          repo.recordAttempt("whw_a", record(deliveries[0]!, { _tag: "Failed" })),
          repo.update(accountId, endpointId, { enabled: false })
        ])
        expect(succeeded(recorded!)).toEqual({ disabled: false, recorded: true })
        expect(succeeded(patch!)).toMatchObject({ _tag: "Some", value: { enabled: false, consecutiveFailures: 1 } })
        const rows = yield* sql<{ status: string; lease_owner: string | null }>`
          SELECT status, lease_owner FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY id`
        // The other claimed delivery is cancelled; its attempt, in flight, still holds its lease.
        expect(rows).toEqual([
          { status: "failed", lease_owner: null },
          { status: "cancelled", lease_owner: "whw_a" }
        ])
      }).pipe(Effect.orDie))

    it.effect("DELETE and an attempt's record do not deadlock", () =>
      Effect.gen(function*() {
        const { endpointId, deliveries, repo, accountId, sql } = yield* setup("whw_b", 1)
        const [recorded, removed] = yield* interleaved(logLocked, [
          repo.recordAttempt("whw_b", record(deliveries[0]!, { _tag: "Failed" })),
          repo.remove(accountId, endpointId)
        ])
        expect(succeeded(recorded!)).toEqual({ disabled: false, recorded: true })
        expect(succeeded(removed!)).toBe(true)
        expect(yield* sql`SELECT 1 FROM webhook_attempts WHERE endpoint_id = ${endpointId}`).toEqual([])
        expect(yield* sql`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`).toEqual([])
      }).pipe(Effect.orDie))

    it.effect("an attempt's record for an endpoint removed meanwhile is dropped", () =>
      Effect.gen(function*() {
        const { endpointId, deliveries, repo, accountId } = yield* setup("whw_d", 1)
        const [removed, recorded] = yield* interleaved(endpointShared(endpointId), [
          repo.remove(accountId, endpointId),
          repo.recordAttempt("whw_d", record(deliveries[0]!, { _tag: "Failed" }))
        ])
        expect(succeeded(removed!)).toBe(true)
        expect(succeeded(recorded!)).toEqual({ disabled: false, recorded: false })
      }).pipe(Effect.orDie))

    it.effect("two failed attempts' records on one endpoint, the second disabling it, do not deadlock", () =>
      Effect.gen(function*() {
        const { endpointId, deliveries, repo, sql } = yield* setup("whw_c", 2)
        yield* sql`UPDATE webhook_endpoints SET consecutive_failures = 9 WHERE id = ${endpointId}`
        // Whichever takes the endpoint first disables it and cancels the other's delivery.
        const exits = yield* interleaved(endpointShared(endpointId), [
          repo.recordAttempt("whw_c", record(deliveries[0]!, { _tag: "Failed" })),
          repo.recordAttempt("whw_c", record(deliveries[1]!, { _tag: "Failed" }))
        ])
        expect(exits.map(succeeded).map((r) => r.disabled).sort()).toEqual([false, true])
        expect(exits.map(succeeded).every((r) => r.recorded)).toBe(true)
        const rows = yield* sql<{ status: string; lease_owner: string | null }>`
          SELECT status, lease_owner FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY status`
        expect(rows).toEqual([{ status: "cancelled", lease_owner: null }, { status: "failed", lease_owner: null }])
        const [endpoint] = yield* sql<{ enabled: boolean; consecutive_failures: number }>`
          SELECT enabled, consecutive_failures FROM webhook_endpoints WHERE id = ${endpointId}`
        expect(endpoint).toEqual({ enabled: false, consecutive_failures: 10 })
      }).pipe(Effect.orDie))
  })
})

describe("PATCH and DELETE of a webhook endpoint broken off by a deadlock (PostgreSQL)", () => {
  layer(restServer(TestDatabase.postgres), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("are run again, not answered 503", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("locks-api")
        const created = yield* call("POST", "/v1/webhooks", { key, body: { url: "https://hooks.example.com/x" } })
        expect(created.status, created.text).toBe(201)
        yield* conflictNext("webhook_endpoints")
        const patched = yield* call("PATCH", `/v1/webhooks/${created.body.id}`, { key, body: { enabled: false } })
        expect(patched.status, patched.text).toBe(200)
        expect(patched.body).toMatchObject({ enabled: false })
        yield* conflictNext("webhook_endpoints")
        const removed = yield* call("DELETE", `/v1/webhooks/${created.body.id}`, { key })
        expect(removed.status, removed.text).toBe(204)
        // Past the retries, the answer says what happened.
        const again = yield* call("POST", "/v1/webhooks", { key, body: { url: "https://hooks.example.com/y" } })
        yield* conflictNext("webhook_endpoints", 10)
        const failed = yield* call("PATCH", `/v1/webhooks/${again.body.id}`, { key, body: { enabled: false } })
        expect([failed.status, failed.body.error.code]).toEqual([503, "service_unavailable"])
        expect(failed.body.error.message).not.toMatch(/not reachable/)
      }))
  })
})
