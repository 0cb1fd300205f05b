import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { PER_ENDPOINT_IN_FLIGHT, WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

/**
 * An account with `endpoints` endpoints and `perEndpoint` due deliveries to each, due `ageSeconds` ago (older
 * first: they would be claimed first in plain due order).
 */
const seed = (account: string, endpoints: number, perEndpoint: number, ageSeconds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO accounts (id, name) VALUES (${account}, ${account})`
    yield* sql`INSERT INTO alerts (id, account_id, cause_key, kind, severity, title, detail, raised_at)
               VALUES (${`${account}_alert`}, ${account}, 'test', 'token-paused', 'critical', 't', 'd', now())`
    for (let e = 0; e < endpoints; e++) {
      const endpoint = `${account}_ep${e}`
      yield* sql`INSERT INTO webhook_endpoints (id, account_id, url, secret_enc)
                 VALUES (${endpoint}, ${account}, 'https://example.com/hook', 'v1.x')`
      for (let k = 0; k < perEndpoint; k++) {
        // One alert per endpoint and delivery (deliveries are unique per endpoint and alert).
        const alert = `${endpoint}_a${k}`
        yield* sql`INSERT INTO alerts (id, account_id, cause_key, kind, severity, title, detail, raised_at, resolved_at)
                   VALUES (${alert}, ${account}, ${alert}, 'token-paused', 'critical', 't', 'd', now(), now())`
        yield* sql`INSERT INTO webhook_deliveries (event_id, account_id, endpoint_id, alert_id, kind, body, next_attempt_at)
                   VALUES (${`evt_${alert}`}, ${account}, ${endpoint}, ${alert}, 'token-paused', '{}',
                           now() - make_interval(secs => ${ageSeconds - k}))`
      }
    }
  }).pipe(Effect.orDie)

const claim = (owner: string, limit: number, perAccount: number) =>
  Effect.flatMap(WebhooksRepo, (repo) => repo.claimDue(owner, limit, 60, perAccount)).pipe(Effect.orDie)

const countBy = (
  rows: ReadonlyArray<{ readonly accountId: string; readonly endpointId: string }>,
  key: "accountId" | "endpointId"
) => {
  const counts = new Map<string, number>()
  for (const row of rows) counts.set(row[key], (counts.get(row[key]) ?? 0) + 1)
  return counts
}

for (
  const [name, database] of [["PostgreSQL", TestDatabase.postgres], ["PGlite", TestDatabase.pglite]] as const
) {
  describe(name, () => {
    layer(Layer.provideMerge(WebhooksRepo.Default, database), { timeout: 120_000 })((it) => {
      it.effect("a claim takes a few attempts per endpoint and per account, so another account's are not held up", () =>
        Effect.gen(function*() {
          // Twenty endpoints of one account with the oldest deliveries (say, receivers that hang), then one of another.
          yield* seed("acct_flood", 20, 5, 600)
          yield* seed("acct_quiet", 1, 1, 10)
          const first = yield* claim("worker-1", 16, 4)
          const byAccount = countBy(first, "accountId")
          expect(byAccount.get("acct_flood")).toBe(4)
          expect(byAccount.get("acct_quiet")).toBe(1)
          for (const n of countBy(first, "endpointId").values()) expect(n).toBeLessThanOrEqual(PER_ENDPOINT_IN_FLIGHT)
          // While those are in flight (leased), the flooding account gets nothing more, and the quiet one has none due.
          expect(yield* claim("worker-2", 16, 4)).toEqual([])
          // Its attempts ended (leases released): the next four of its deliveries, oldest first.
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE webhook_deliveries SET status = 'succeeded', lease_owner = NULL, lease_until = NULL
                     WHERE lease_owner = 'worker-1'`.pipe(Effect.orDie)
          const next = yield* claim("worker-1", 16, 4)
          expect(next.map((row) => row.accountId)).toEqual(["acct_flood", "acct_flood", "acct_flood", "acct_flood"])
        }))

      it.effect("one endpoint with many due deliveries gets at most its share in flight", () =>
        Effect.gen(function*() {
          yield* seed("acct_burst", 1, 10, 100)
          // (The first test's accounts share the database: only this account's rows are looked at.)
          const ofBurst = (rows: ReadonlyArray<{ readonly accountId: string }>) =>
            rows.filter((row) => row.accountId === "acct_burst")
          expect(ofBurst(yield* claim("worker-1", 16, 16))).toHaveLength(PER_ENDPOINT_IN_FLIGHT)
          expect(ofBurst(yield* claim("worker-1", 16, 16))).toEqual([])
        }))

      it.effect("an attempt in flight when its endpoint is disabled is still logged, and ends the delivery", () =>
        Effect.gen(function*() {
          yield* seed("acct_off", 1, 2, 50)
          const repo = yield* WebhooksRepo
          const sql = yield* SqlClient.SqlClient
          const claimed = (yield* claim("worker-9", 16, 16)).filter((row) => row.accountId === "acct_off")
          expect(claimed).toHaveLength(2)
          // The user disables the endpoint while both attempts are in flight.
          yield* repo.update("acct_off", "acct_off_ep0", { enabled: false }).pipe(Effect.orDie)
          const ended = (delivery: (typeof claimed)[number], delivered: boolean) =>
            repo.recordAttempt("worker-9", {
              delivery,
              attempt: 1,
              outcome: delivered ? "success" : "failure",
              status: delivered ? 200 : 503,
              error: delivered ? null : "HTTP 503",
              response: null,
              durationMs: 5,
              at: new Date(),
              result: delivered ? { _tag: "Delivered" } : { _tag: "Retry", at: new Date(Date.now() + 60_000) }
            }).pipe(Effect.orDie)
          expect(yield* ended(claimed[0]!, true)).toEqual({ disabled: false, recorded: true })
          expect(yield* ended(claimed[1]!, false)).toEqual({ disabled: false, recorded: true })
          // A second report of the same attempt (a lost lease) writes nothing.
          expect(yield* ended(claimed[1]!, false)).toEqual({ disabled: false, recorded: false })
          const log = yield* repo.attempts("acct_off").pipe(Effect.orDie)
          expect(log.map((a) => a.outcome).sort()).toEqual(["failure", "success"])
          const rows = yield* sql<{ id: string; status: string; attempts: number; lease_owner: string | null }>`
            SELECT id::text AS id, status, attempts, lease_owner FROM webhook_deliveries
            WHERE account_id = 'acct_off' ORDER BY id`.pipe(Effect.orDie)
          expect(rows.map((r) => [r.id, r.status, Number(r.attempts), r.lease_owner])).toEqual([
            [claimed[0]!.id, "succeeded", 1, null],
            [claimed[1]!.id, "cancelled", 1, null]
          ])
          // Nothing of it is claimed again.
          expect((yield* claim("worker-9", 16, 16)).filter((row) => row.accountId === "acct_off")).toEqual([])
        }))
    })
  })
}
