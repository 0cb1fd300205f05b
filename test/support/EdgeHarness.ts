import { HttpLayerRouter, HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { makeNodeServer } from "@scaledger/server/http/NodeServer"
import { ROUTER_OPTIONS } from "@scaledger/server/http/OwnRouter"
import { memoryRateLimiter, type RateLimiter } from "@scaledger/server/http/RateLimit"
import { RestRoutes } from "@scaledger/server/http/RestApi"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { Effect, Layer, Redacted } from "effect"
import * as Net from "node:net"

/**
 * The REST server as `main.ts` runs it (its own router, the Node server with the parser-error and shutdown edge, a
 * rate limiter) on a random loopback port, over the given database.
 */
export const edgeServer = (
  database: Layer.Layer<SqlClient.SqlClient>,
  limiter: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = memoryRateLimiter(100_000)
) =>
  HttpLayerRouter.serve(RestRoutes, {
    disableLogger: true,
    disableListenLog: true,
    routerConfig: ROUTER_OPTIONS
  }).pipe(
    Layer.provide(limiter),
    Layer.provideMerge(
      HttpServer.layerTestClient.pipe(
        Layer.provide(NodeHttpClient.layerWithoutAgent),
        Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false }))
      )
    ),
    Layer.provideMerge(NodeHttpServer.layer(makeNodeServer(), { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Layer.mergeAll(ApiKeys.Default, AccountsRepo.Default)),
    Layer.provide(Layer.succeed(KeyHashSecret, Redacted.make("test-key-hash-secret"))),
    Layer.provide(WebhookSecretBox.fromKey(Redacted.make("test-webhook-secret-key"))),
    Layer.provide(WebhookSecretBox.fromKey(Redacted.make("test-webhook-secret-key"))),
    Layer.provideMerge(database)
  )

export const serverPort = Effect.map(
  HttpServer.HttpServer,
  (server) => server.address._tag === "TcpAddress" ? server.address.port : 0
)

export interface RawReply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: any
  readonly text: string
  /** The connection was closed or reset before a full answer arrived. */
  readonly closedEarly: boolean
}

const parseRaw = (raw: string, closedEarly: boolean): RawReply => {
  const split = raw.indexOf("\r\n\r\n")
  const head = split < 0 ? raw : raw.slice(0, split)
  let text = split < 0 ? "" : raw.slice(split + 4)
  const [statusLine, ...lines] = head.split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const i = line.indexOf(":")
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  if (headers["transfer-encoding"] === "chunked") {
    let out = ""
    let rest = text
    for (;;) {
      const nl = rest.indexOf("\r\n")
      if (nl < 0) break
      const size = parseInt(rest.slice(0, nl), 16)
      if (!(size > 0)) break
      out += rest.slice(nl + 2, nl + 2 + size)
      rest = rest.slice(nl + 2 + size + 2)
    }
    text = out
  }
  let body: unknown = undefined
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0), headers, body, text, closedEarly }
}

/**
 * Writes bytes exactly as given on a fresh connection (parts are written one after the other) and reads until the
 * server closes the connection or `timeoutMs` passes: for what an HTTP client library would refuse to send.
 */
export const rawRequest = (port: number, parts: ReadonlyArray<string | Uint8Array>, timeoutMs = 10_000) =>
  Effect.async<RawReply>((resume) => {
    const socket = Net.connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    let done = false
    let errored = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(parseRaw(Buffer.concat(chunks).toString("utf8"), errored)))
    }
    const timer = setTimeout(() => {
      errored = true
      finish()
    }, timeoutMs)
    socket.on("data", (chunk) => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString("utf8")
      const split = text.indexOf("\r\n\r\n")
      if (split >= 0) {
        const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))
        if (length !== null && Buffer.byteLength(text.slice(split + 4)) >= Number(length[1])) finish()
        if (/\r\ntransfer-encoding: *chunked/i.test(text.slice(0, split)) && text.endsWith("\r\n0\r\n\r\n")) finish()
      }
    })
    socket.on("error", () => {
      errored = true
      finish()
    })
    socket.on("close", finish)
    socket.on("connect", async () => {
      for (const part of parts) {
        if (done) return
        await new Promise<void>((resolve) => socket.write(part, () => resolve()))
      }
    })
    return Effect.sync(() => socket.destroy())
  })
