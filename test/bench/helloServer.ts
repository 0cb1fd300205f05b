/**
 * The reference server of `npm run bench:api`: one `GET /hello` endpoint on the same stack as the service
 * (`HttpApi` served by `HttpLayerRouter` on `@effect/platform-node`), no database, no auth, no request log.
 * `PORT` picks the port; it prints `listening` once it accepts connections.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpLayerRouter } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import * as Http from "node:http"

const Api = HttpApi.make("hello").add(
  HttpApiGroup.make("hello").add(
    HttpApiEndpoint.get("hello", "/hello").addSuccess(Schema.Struct({ message: Schema.String }))
  )
)

const HelloLive = HttpApiBuilder.group(
  Api,
  "hello",
  (handlers) => handlers.handle("hello", () => Effect.succeed({ message: "hello, world" }))
)

const Routes = HttpLayerRouter.addHttpApi(Api).pipe(Layer.provide(HelloLive))

const port = Number(process.env.PORT ?? 8090)

HttpLayerRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(NodeHttpServer.layer(Http.createServer, { port, host: "127.0.0.1" })),
  Layer.tap(() => Effect.sync(() => console.log("listening"))),
  Layer.launch,
  NodeRuntime.runMain
)
