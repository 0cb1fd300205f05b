import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { SqlError } from "@effect/sql/SqlError"
import * as Ids from "@scaledger/db/Ids"
import { AccountName } from "@scaledger/domain/Auth"
import { Effect, Layer, Option, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ApiKeys } from "../auth/ApiKeys.js"
import { DataDir, HttpConfig } from "../Config.js"
import { mapDatabaseError } from "../http/DatabaseErrors.js"
import { makeNodeServer } from "../http/NodeServer.js"
import { serveWithOwnRouter } from "../http/OwnRouter.js"
import { edgeMiddleware, errorResponse, restOrigin } from "../http/RequestEnvelope.js"
import { adminFilePath } from "./AdminFile.js"

const CreateKeyBody = Schema.Struct({ account: AccountName })

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status })

/** A failed admin request in the error envelope; a database error is logged once, with its SQLSTATE. */
const answerFailure = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const tagged = error as { readonly _tag?: string; readonly message?: string }
  switch (tagged._tag) {
    case "SqlError":
      return mapDatabaseError("admin request failed")(error as SqlError).pipe(Effect.catchAll(answerFailure))
    case "ParseError":
    case "InvalidRequest":
      return errorResponse("invalid_request", "The request does not match the admin contract.", {
        reason: String(tagged.message ?? "").split("\n")[0]
      })
    case "ServiceUnavailable":
      return errorResponse("service_unavailable", tagged.message ?? "The database is not reachable; retry later.")
    default:
      return Effect.die(error)
  }
}

/** The admin listener's routes (used to answer 405 with `Allow`); nothing of the REST API is served there. */
const AdminRoutes = [
  { method: "POST", path: "/admin/keys" },
  { method: "GET", path: "/admin/keys" },
  { method: "POST", path: "/admin/keys/:id/revoke" }
] as const

/**
 * The embedded database belongs to one process. While the server holds it, `scaledger keys …` reaches the keys
 * through this endpoint: loopback only, authenticated by a random token kept in the data folder (mode 0600).
 */
const adminRoutes = (token: string) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const expected = Buffer.from(`Bearer ${token}`)
      const authorized = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const given = Buffer.from(request.headers["authorization"] ?? "")
          if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
            return yield* errorResponse("unauthorized", "The admin token is missing or wrong.")
          }
          return yield* handler
        }).pipe(Effect.catchAll(answerFailure))

      yield* router.add(
        "POST",
        "/admin/keys",
        authorized(Effect.gen(function*() {
          const body = yield* HttpServerRequest.schemaBodyJson(CreateKeyBody)
          return json(yield* keys.create(body.account), 201)
        }))
      )
      yield* router.add(
        "GET",
        "/admin/keys",
        authorized(Effect.gen(function*() {
          const { account } = yield* HttpServerRequest.schemaSearchParams(Schema.Struct({ account: AccountName }))
          return yield* Option.match(yield* keys.list(account), {
            onNone: () => errorResponse("not_found", `No account named ${account}.`, { reason: "unknown_account" }),
            onSome: (list) => Effect.succeed(json(list))
          })
        }))
      )
      yield* router.add(
        "POST",
        "/admin/keys/:id/revoke",
        authorized(Effect.gen(function*() {
          const { id } = yield* HttpLayerRouter.schemaParams(Schema.Struct({ id: Schema.String }))
          return yield* Option.match(yield* keys.revoke(id), {
            onNone: () => errorResponse("not_found", `No key ${id}.`, { reason: "unknown_key" }),
            onSome: (key) => Effect.succeed(json(key))
          })
        }))
      )
    })
  )

const advertise = (token: string) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const dataDir = Path.resolve(yield* DataDir)
    const address = server.address
    if (address._tag !== "TcpAddress") return
    const file = adminFilePath(dataDir)
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        Fs.writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${address.port}`, token, pid: process.pid }), {
          mode: 0o600
        })
      ),
      () => Effect.sync(() => Fs.rmSync(file, { force: true }))
    )
  }))

/**
 * The admin listener: its own Node server on 127.0.0.1 (a random port, advertised in the data folder) with its own
 * router (`serveWithOwnRouter`: with `HttpLayerRouter.serve`, two listeners in one layer graph share one memoized
 * router, and each answered the other's routes).
 */
export const adminServer = (token: string) =>
  serveWithOwnRouter(
    Layer.mergeAll(
      adminRoutes(token),
      // `/docs/errors` is served by the REST listener only: docUrls point there (PUBLIC_BASE_URL, else HOST:PORT).
      edgeMiddleware({ extraRoutes: AdminRoutes, logRequests: false, docsOnRestListener: true })
    )
  )

export const AdminServerLive = Layer.unwrapEffect(Effect.gen(function*() {
  const token = Ids.randomBase62(40)
  // Answers Node's parser gives (431, 400) link to the REST listener's docs as well.
  const publicOrigin = restOrigin(yield* HttpConfig)
  return Layer.mergeAll(adminServer(token), advertise(token)).pipe(
    Layer.provide(NodeHttpServer.layer(makeNodeServer({ publicOrigin }), { port: 0, host: "127.0.0.1" }))
  )
}))
