import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { adminServer } from "@scaledger/server/admin/AdminServer"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { makeNodeServer } from "@scaledger/server/http/NodeServer"
import { memoryRateLimiter } from "@scaledger/server/http/RateLimit"
import { RestServer } from "@scaledger/server/http/RestServer"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { ConfigProvider, Context, Effect, Layer, Redacted } from "effect"

const TOKEN = "admin-token-for-tests-0123456789abcdefghij"

class Ports extends Context.Tag("test/Ports")<Ports, { rest: number; admin: number }>() {}
class RestPort extends Context.Tag("test/RestPort")<RestPort, number>() {}
class AdminPort extends Context.Tag("test/AdminPort")<AdminPort, number>() {}

const portOf = Effect.map(
  HttpServer.HttpServer,
  (server) => server.address._tag === "TcpAddress" ? server.address.port : 0
)

const node = () => NodeHttpServer.layer(makeNodeServer(), { port: 0, host: "127.0.0.1" })

const Rest = Layer.merge(RestServer, Layer.effect(RestPort, portOf)).pipe(Layer.provide(node()))
// The admin listener reads `PORT` (the REST listener's) for its docUrls, as main.ts's configuration gives it.
const Admin = Layer.unwrapEffect(
  Effect.map(RestPort, (rest) =>
    Layer.merge(adminServer(TOKEN), Layer.effect(AdminPort, portOf)).pipe(
      Layer.provide(node()),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["PORT", String(rest)]]))))
    ))
)

// Both listeners in one layer graph, as main.ts builds them: the graph in which the memoized default router was shared.
const BothListeners = Layer.mergeAll(Rest, Admin.pipe(Layer.provide(Rest))).pipe(
  Layer.provide(memoryRateLimiter(100_000)),
  Layer.provideMerge(Layer.mergeAll(ApiKeys.Default, AccountsRepo.Default)),
  Layer.provide(Layer.succeed(KeyHashSecret, Redacted.make("test-key-hash-secret"))),
  Layer.provide(WebhookSecretBox.fromKey(Redacted.make("test-webhook-secret-key"))),
  Layer.provideMerge(TestDatabase.pglite)
)

const TestLayer = Layer.effect(
  Ports,
  Effect.all({ rest: RestPort, admin: AdminPort })
).pipe(Layer.provideMerge(BothListeners))

const send = (port: number, method: string, path: string, options: { token?: string; body?: unknown } = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    const text = await response.text()
    let body: any = undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: Object.fromEntries(response.headers), body }
  })

const expectEnvelope = (
  reply: { status: number; headers: Record<string, string>; body: any },
  status: number,
  code: string
) => {
  expect(reply.status).toBe(status)
  expect(reply.body.error.code).toBe(code)
  expect(reply.body.error.requestId).toMatch(/^req_/)
  expect(reply.headers["request-id"]).toBe(reply.body.error.requestId)
}

layer(TestLayer, { timeout: 60_000 })("admin endpoint off the public port", (it) => {
  describe("two servers, two routers", () => {
    it.effect("POST :PORT/admin/keys with the admin token is 404 on the REST port", () =>
      Effect.gen(function*() {
        const ports = yield* Ports
        const reply = yield* send(ports.rest, "POST", "/admin/keys", { token: TOKEN, body: { account: "mallory" } })
        expectEnvelope(reply, 404, "not_found")
        // The same request on the admin listener works.
        const created = yield* send(ports.admin, "POST", "/admin/keys", { token: TOKEN, body: { account: "alice" } })
        expect(created.status).toBe(201)
        expect(created.body.key).toMatch(/^sk_live_/)
        // ... and that key works on the REST port, not on the admin port.
        expect((yield* send(ports.rest, "GET", "/v1/settings", { token: created.body.key })).status).toBe(200)
        expectEnvelope(yield* send(ports.admin, "GET", "/v1/settings", { token: created.body.key }), 404, "not_found")
      }))

    it.effect("the REST API and its docs are not served on the admin port", () =>
      Effect.gen(function*() {
        const ports = yield* Ports
        for (const path of ["/v1/wallets", "/v1/openapi.json", "/healthz", "/docs"]) {
          expectEnvelope(yield* send(ports.admin, "GET", path), 404, "not_found")
        }
      }))

    it.effect("unknown routes and a missing token answer the error envelope on the admin port", () =>
      Effect.gen(function*() {
        const ports = yield* Ports
        expectEnvelope(yield* send(ports.admin, "GET", "/nothing"), 404, "not_found")
        expectEnvelope(yield* send(ports.admin, "GET", "/admin/keys?account=alice"), 401, "unauthorized")
        expectEnvelope(yield* send(ports.admin, "POST", "/admin/keys", { token: "wrong" }), 401, "unauthorized")
        const wrongMethod = yield* send(ports.admin, "DELETE", "/admin/keys", { token: TOKEN })
        expectEnvelope(wrongMethod, 405, "method_not_allowed")
        expect(wrongMethod.headers["allow"]).toBe("GET, HEAD, POST")
        expectEnvelope(
          yield* send(ports.admin, "GET", "/admin/keys?account=nobody", { token: TOKEN }),
          404,
          "not_found"
        )
        expectEnvelope(
          yield* send(ports.admin, "POST", "/admin/keys", { token: TOKEN, body: { account: "" } }),
          400,
          "invalid_request"
        )
      }))

    it.effect("the admin listener's docUrls point at the REST listener, where /docs/errors is served", () =>
      Effect.gen(function*() {
        const ports = yield* Ports
        const refused = yield* send(ports.admin, "GET", "/admin/keys?account=alice")
        expectEnvelope(refused, 401, "unauthorized")
        // It pointed at the admin listener's own origin, where /docs/errors is 404.
        expect(refused.body.error.docUrl).toBe(`http://127.0.0.1:${ports.rest}/docs/errors#unauthorized`)
        const page = yield* Effect.promise(() => fetch(refused.body.error.docUrl.split("#")[0]))
        expect(page.status).toBe(200)
        expect(yield* Effect.promise(() => page.text())).toContain("unauthorized")
        expect((yield* send(ports.admin, "GET", "/docs/errors")).status).toBe(404)
      }))

    it.effect("the admin listener binds 127.0.0.1 only", () =>
      Effect.gen(function*() {
        const ports = yield* Ports
        const listed = yield* send(ports.admin, "GET", "/admin/keys?account=alice", { token: TOKEN })
        expect(listed.status).toBe(200)
        expect(Array.isArray(listed.body)).toBe(true)
      }))
  })
})
