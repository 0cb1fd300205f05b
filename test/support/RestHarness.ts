import { HttpClient, HttpClientRequest, HttpLayerRouter } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { ROUTER_OPTIONS } from "@scaledger/server/http/OwnRouter"
import { RestRoutes } from "@scaledger/server/http/RestApi"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { Effect, Layer, Redacted, type Stream } from "effect"

/** The REST server on a random loopback port over the given database, with an HttpClient pointed at it. */
export const restServer = (database: Layer.Layer<SqlClient.SqlClient>) =>
  HttpLayerRouter.serve(RestRoutes, {
    disableLogger: true,
    disableListenLog: true,
    routerConfig: ROUTER_OPTIONS
  }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(Layer.mergeAll(ApiKeys.Default, AccountsRepo.Default)),
    Layer.provide(Layer.succeed(KeyHashSecret, Redacted.make("test-key-hash-secret"))),
    Layer.provide(WebhookSecretBox.fromKey(Redacted.make("test-webhook-secret-key"))),
    Layer.provideMerge(database)
  )

export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: any
  readonly text: string
}

export interface CallOptions {
  readonly key?: string | undefined
  readonly body?: unknown
  readonly rawBody?: string
  /** Sent chunked, without a Content-Length. */
  readonly stream?: Stream.Stream<Uint8Array>
  readonly headers?: Record<string, string>
}

/** One request, answered with status, headers and the parsed JSON body (or the text when it is not JSON). */
export const call = (
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: CallOptions = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path)
    if (options.key !== undefined) request = HttpClientRequest.bearerToken(request, options.key)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.body)
    if (options.rawBody !== undefined) {
      request = HttpClientRequest.bodyText(request, options.rawBody, "application/json")
    }
    if (options.stream !== undefined) {
      request = HttpClientRequest.bodyStream(request, options.stream, { contentType: "application/json" })
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    const reply: Reply = { status: response.status, headers: response.headers, body, text }
    return reply
  }).pipe(Effect.scoped, Effect.orDie)

export const newKey = (account: string) =>
  Effect.map(ApiKeys, (keys) => keys.create(account)).pipe(Effect.flatten, Effect.orDie)
