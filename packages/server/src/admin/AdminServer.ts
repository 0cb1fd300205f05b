import { HttpLayerRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Ids } from "@scaledger/db"
import { Effect, Layer, Option, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import * as Path from "node:path"
import { ApiKeys } from "../auth/ApiKeys.js"
import { DataDir } from "../Config.js"
import { adminFilePath } from "./AdminFile.js"

const CreateKeyBody = Schema.Struct({ account: Schema.String.pipe(Schema.minLength(1)) })

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status })

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
            return json({ error: "unauthorized" }, 401)
          }
          return yield* handler
        }).pipe(Effect.catchAll((error) => Effect.succeed(json({ error: String(error) }, 500))))

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
          const { account } = yield* HttpServerRequest.schemaSearchParams(Schema.Struct({ account: Schema.String }))
          return Option.match(yield* keys.list(account), {
            onNone: () => json({ error: "unknown_account" }, 404),
            onSome: (list) => json(list)
          })
        }))
      )
      yield* router.add(
        "POST",
        "/admin/keys/:id/revoke",
        authorized(Effect.gen(function*() {
          const { id } = yield* HttpLayerRouter.schemaParams(Schema.Struct({ id: Schema.String }))
          return Option.match(yield* keys.revoke(id), {
            onNone: () => json({ error: "unknown_key" }, 404),
            onSome: (key) => json(key)
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

export const AdminServerLive = Layer.unwrapEffect(Effect.sync(() => {
  const token = Ids.randomBase62(40)
  return Layer.mergeAll(
    HttpLayerRouter.serve(adminRoutes(token), { disableLogger: true, disableListenLog: true }),
    advertise(token)
  ).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
}))
