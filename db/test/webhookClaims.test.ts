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
    })
  })
}
