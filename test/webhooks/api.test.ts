import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { type AlertCause, AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer, Option } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

const backends = [["PGlite", TestDatabase.pglite], ["PostgreSQL", TestDatabase.postgres]] as const

const cause = (key: string, overrides: Partial<AlertCause> = {}): AlertCause => ({
  key,
  kind: "pending-multiplier",
  severity: "info",
  title: "AAPL: multiplier change announced",
  detail: "goes from 1 to 1.0005",
  symbol: "AAPL",
  at: new Date("2026-11-20T15:00:00Z"),
  oneShot: true,
  ...overrides
})

const accountOf = (name: string) =>
  Effect.map(Effect.orDie(Effect.flatMap(AccountsRepo, (a) => a.findByName(name))), (o) => Option.getOrThrow(o).id)

for (const [name, database] of backends) {
  describe(`alerts and webhooks through the API (${name}, egress guard on)`, () => {
    layer(Layer.mergeAll(restServer(database), AlertsStore.Default.pipe(Layer.provide(database))), {
      timeout: 60_000
    })((it) => {
      it.effect("creates an endpoint with its secret once, lists it without, changes and removes it", () =>
        Effect.gen(function*() {
          const { key } = yield* newKey("hooks-a")
          const created = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/scaledger", description: "ops", kinds: ["token-paused"] }
          })
          expect(created.status, created.text).toBe(201)
          expect(Object.keys(created.body).sort()).toEqual(
            ["consecutiveFailures", "createdAt", "description", "enabled", "id", "kinds", "secret", "url"]
          )
          expect(created.body).toMatchObject({
            url: "https://hooks.example.com/scaledger",
            kinds: ["token-paused"],
            enabled: true,
            consecutiveFailures: 0
          })
          expect(created.body.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/)

          // Encrypted at rest: the stored column does not hold the secret.
          const sql = yield* SqlClient.SqlClient
          const [stored] = yield* sql<{ secret_enc: string }>`SELECT secret_enc FROM webhook_endpoints`.pipe(
            Effect.orDie
          )
          expect(stored!.secret_enc).not.toContain(created.body.secret)
          expect(stored!.secret_enc.startsWith("v1.")).toBe(true)

          const listed = yield* call("GET", "/v1/webhooks", { key })
          expect(listed.status).toBe(200)
          expect(listed.body.nextCursor).toBeNull()
          expect(listed.body.webhooks).toHaveLength(1)
          expect(listed.body.webhooks[0]).not.toHaveProperty("secret")
          expect(listed.text).not.toContain(created.body.secret)

          const patched = yield* call("PATCH", `/v1/webhooks/${created.body.id}`, {
            key,
            body: { kinds: [], enabled: false, description: "all kinds" }
          })
          expect(patched.status).toBe(200)
          expect(patched.body).toMatchObject({ kinds: [], enabled: false, description: "all kinds" })
          expect(patched.body).not.toHaveProperty("secret")

          // Another account sees none of it.
          const other = (yield* newKey("hooks-b")).key
          expect((yield* call("GET", "/v1/webhooks", { key: other })).body.webhooks).toEqual([])
          expect(
            (yield* call("PATCH", `/v1/webhooks/${created.body.id}`, { key: other, body: { enabled: true } }))
              .status
          ).toBe(404)
          expect((yield* call("DELETE", `/v1/webhooks/${created.body.id}`, { key: other })).status).toBe(404)
          // Not found comes first, whatever the change asks: another account learns nothing from a 400.
          for (const body of [{ url: "http://example.com/" }, { kinds: ["no-such-kind"] }]) {
            const foreign = yield* call("PATCH", `/v1/webhooks/${created.body.id}`, { key: other, body })
            expect([foreign.status, foreign.body.error.code]).toEqual([404, "not_found"])
          }

          expect((yield* call("DELETE", `/v1/webhooks/${created.body.id}`, { key })).status).toBe(204)
          const gone = yield* call("DELETE", `/v1/webhooks/${created.body.id}`, { key })
          expect(gone.status).toBe(404)
          expect(gone.body.error.code).toBe("not_found")
        }))

      it.effect("refuses unknown kinds (nothing subscribed), bad URLs and unknown fields", () =>
        Effect.gen(function*() {
          const { key } = yield* newKey("hooks-c")
          const unknown = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/x", kinds: ["token-paused", "price-moon"] }
          })
          expect(unknown.status).toBe(400)
          expect(unknown.body.error).toMatchObject({ code: "unknown_alert_kind" })
          expect(unknown.body.error.docUrl).toMatch(/\/docs\/errors#unknown_alert_kind$/)
          expect(unknown.body.error.details.supported).toHaveLength(7)
          // Many unknown kinds, repeated: each named once, the first ten, and how many more.
          const many = yield* call("POST", "/v1/webhooks", {
            key,
            body: {
              url: "https://hooks.example.com/x",
              kinds: [...Array.from({ length: 5_000 }, () => "nope"), ...Array.from({ length: 30 }, (_, i) => `k${i}`)]
            }
          })
          expect(many.body.error.code).toBe("unknown_alert_kind")
          expect(many.body.error.details.unknown).toEqual([
            "nope",
            "k0",
            "k1",
            "k2",
            "k3",
            "k4",
            "k5",
            "k6",
            "k7",
            "k8"
          ])
          expect(many.body.error.message).toBe(
            "Unknown alert kinds: nope, k0, k1, k2, k3, k4, k5, k6, k7, k8 and 21 more. Nothing was subscribed."
          )
          const events = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/x", events: ["token-paused"] }
          })
          expect(events.status).toBe(400)
          expect(events.body.error.code).toBe("invalid_request")
          expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks).toEqual([])

          for (
            const [url, reason] of [
              ["http://hooks.example.com/x", "not_https"],
              ["https://user:secret@hooks.example.com/x", "credentials"],
              ["https://127.0.0.1/x", "forbidden_address"],
              ["https://[::ffff:127.0.0.1]/x", "forbidden_address"],
              ["https://0x7f000001/x", "forbidden_address"],
              ["https://10.1.2.3/x", "forbidden_address"],
              ["https://169.254.169.254/latest", "forbidden_address"],
              ["https://localhost:8443/x", "forbidden_address"],
              // A URL parser drops tabs and line breaks; stored as given, they are refused as written.
              ["https://hooks.example.com/x\t\n", "malformed"],
              ["https://hooks.example.com/x y", "malformed"],
              ["https://hooks.example.com/\u007f", "malformed"],
              // A lone UTF-16 surrogate (JSON can spell one) would be stored as U+FFFD: another URL than the one sent.
              ["https://hooks.example.com/\ud800", "malformed"],
              ["https://hooks.example.com/?q=\udc00", "malformed"],
              ["https://.../x", "malformed"],
              ["https://hooks..example.com/x", "malformed"]
            ] as const
          ) {
            const refused = yield* call("POST", "/v1/webhooks", { key, body: { url } })
            expect(refused.status, url).toBe(400)
            expect(refused.body.error.code, url).toBe("invalid_webhook_url")
            expect(refused.body.error.details.reason, url).toBe(reason)
          }
          // Past the URL's length limit: refused by field, the value quoted only by its start.
          const long = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: `https://hooks.example.com/${"a".repeat(100_000)}` }
          })
          expect(long.body.error.code).toBe("invalid_request")
          expect(long.body.error.details.issues[0].path).toEqual(["url"])
          expect(long.body.error.details.issues[0].message.length).toBeLessThanOrEqual(210)
          // A description is text a person writes: line breaks and tabs kept, other control characters refused.
          const bell = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/x", description: "ops\u0007" }
          })
          expect(bell.status).toBe(400)
          expect(bell.body.error.details.issues[0].path).toEqual(["description"])
          const created = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/x", description: "ops\n\tpager" }
          })
          expect(created.status).toBe(201)
          expect(created.body.description).toBe("ops\n\tpager")
          expect(created.body.kinds).toEqual([])
          const badPatch = yield* call("PATCH", `/v1/webhooks/${created.body.id}`, {
            key,
            body: { url: "https://192.168.0.10/x" }
          })
          expect(badPatch.body.error.code).toBe("invalid_webhook_url")
          const badKinds = yield* call("PATCH", `/v1/webhooks/${created.body.id}`, { key, body: { kinds: ["nope"] } })
          expect(badKinds.body.error.code).toBe("unknown_alert_kind")
          expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks[0]).toMatchObject({
            url: "https://hooks.example.com/x",
            kinds: []
          })
          expect((yield* call("GET", "/v1/webhooks/deliveries", { key })).body).toEqual({ deliveries: [] })
        }))

      it.effect("refuses a URL not written https://host… (the document's pattern), which a URL parser would mend", () =>
        Effect.gen(function*() {
          const { key } = yield* newKey("hooks-form")
          // WHATWG URL parsing reads each of these as https://hooks.example.com/…; stored as given, they are not
          // the `https://<host>` URLs the OpenAPI document's pattern admits.
          for (
            const url of [
              "https:hooks.example.com/x",
              "https:/hooks.example.com/x",
              "https:///hooks.example.com/x",
              "https:////hooks.example.com/x",
              "https:\\\\hooks.example.com/x"
            ]
          ) {
            const refused = yield* call("POST", "/v1/webhooks", { key, body: { url } })
            expect(refused.status, url).toBe(400)
            expect(refused.body.error.code, url).toBe("invalid_webhook_url")
            expect(refused.body.error.details.reason, url).toBe("malformed")
          }
          const created = yield* call("POST", "/v1/webhooks", { key, body: { url: "HTTPS://hooks.example.com/x" } })
          expect(created.status).toBe(201)
          const patched = yield* call("PATCH", `/v1/webhooks/${created.body.id}`, {
            key,
            body: { url: "https:/hooks.example.com/y" }
          })
          expect(patched.status).toBe(400)
          expect(patched.body.error.code).toBe("invalid_webhook_url")
          expect((yield* call("GET", "/v1/webhooks", { key })).body.webhooks.map((w: any) => w.url)).toEqual([
            "HTTPS://hooks.example.com/x"
          ])
        }))

      it.effect("the alert store raises once per cause, resolves when it ends, and GET /v1/alerts filters it", () =>
        Effect.gen(function*() {
          const { key } = yield* newKey("alerts-a")
          const accountId = yield* accountOf("alerts-a")
          const store = yield* AlertsStore
          const hook = yield* call("POST", "/v1/webhooks", {
            key,
            body: { url: "https://hooks.example.com/a", kinds: ["pending-multiplier"] }
          })
          expect(hook.status).toBe(201)
          const pending = cause("pending-multiplier:1:aapl:1787000000000")
          const backlog = cause("unlabeled-transfers", {
            kind: "unlabeled-transfers",
            severity: "warning",
            title: "Transfers await review",
            detail: "3 movement(s) need review",
            symbol: "",
            oneShot: false
          })
          const first = yield* store.sync(accountId, [pending, backlog], new Date()).pipe(Effect.orDie)
          expect(first.raised).toHaveLength(2)
          // One delivery: only the pending-multiplier alert matches the endpoint's kinds.
          expect(first.deliveries).toBe(1)
          const again = yield* store.sync(
            accountId,
            [pending, { ...backlog, detail: "5 movement(s) need review" }],
            new Date()
          )
            .pipe(Effect.orDie)
          expect(again).toMatchObject({ raised: [], resolved: 0, deliveries: 0 })

          const all = yield* call("GET", "/v1/alerts", { key })
          expect(all.status).toBe(200)
          expect(all.body.alerts).toHaveLength(2)
          const byKind = Object.fromEntries(all.body.alerts.map((a: any) => [a.kind, a]))
          expect(byKind["unlabeled-transfers"]).toMatchObject({
            severity: "warning",
            detail: "5 movement(s) need review",
            symbol: "",
            resolvedAt: null
          })
          expect(byKind["pending-multiplier"]).toMatchObject({
            severity: "info",
            symbol: "AAPL",
            at: Date.parse("2026-11-20T15:00:00Z")
          })
          expect(Object.keys(byKind["pending-multiplier"]).sort()).toEqual(
            ["at", "detail", "id", "kind", "resolvedAt", "severity", "symbol", "title"]
          )

          // The change took effect: its alert is resolved, and a one-time cause is never raised again.
          const resolved = yield* store.sync(accountId, [backlog], new Date()).pipe(Effect.orDie)
          expect(resolved.resolved).toBe(1)
          expect((yield* store.sync(accountId, [pending, backlog], new Date()).pipe(Effect.orDie)).raised).toEqual([])
          // A condition that ended and comes back is a new episode.
          yield* store.sync(accountId, [], new Date()).pipe(Effect.orDie)
          expect((yield* store.sync(accountId, [backlog], new Date()).pipe(Effect.orDie)).raised).toHaveLength(1)

          const open = yield* call("GET", "/v1/alerts?open=true", { key })
          expect(open.body.alerts.map((a: any) => a.kind)).toEqual(["unlabeled-transfers"])
          const closed = yield* call("GET", "/v1/alerts?open=false", { key })
          expect(closed.body.alerts.map((a: any) => a.kind).sort()).toEqual([
            "pending-multiplier",
            "unlabeled-transfers"
          ])
          expect(closed.body.alerts.every((a: any) => typeof a.resolvedAt === "number")).toBe(true)
          const info = yield* call("GET", "/v1/alerts?severity=info", { key })
          expect(info.body.alerts.map((a: any) => a.kind)).toEqual(["pending-multiplier"])
          const byKindQuery = yield* call("GET", "/v1/alerts?kind=unlabeled-transfers&limit=1", { key })
          expect(byKindQuery.body.alerts).toHaveLength(1)
          expect(byKindQuery.body.nextCursor).not.toBeNull()
          const page2 = yield* call(
            "GET",
            `/v1/alerts?kind=unlabeled-transfers&limit=1&cursor=${byKindQuery.body.nextCursor}`,
            { key }
          )
          expect(page2.body.alerts).toHaveLength(1)
          expect(page2.body.alerts[0].id).not.toBe(byKindQuery.body.alerts[0].id)
          expect(page2.body.nextCursor).toBeNull()

          expect((yield* call("GET", "/v1/alerts?severity=loud", { key })).body.error.code).toBe("invalid_request")
          expect((yield* call("GET", "/v1/alerts?kind=moon", { key })).body.error.code).toBe("unknown_alert_kind")
          // Another account sees none of them.
          expect((yield* call("GET", "/v1/alerts", { key: (yield* newKey("alerts-b")).key })).body.alerts).toEqual([])
        }))
    })
  })
}
