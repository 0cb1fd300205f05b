import { HttpLayerRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import type { McpSettings } from "@scaledger/mcp/McpConfig"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { ROUTER_OPTIONS } from "@scaledger/server/http/OwnRouter"
import type { RateLimiter } from "@scaledger/server/http/RateLimit"
import { makeMcpNodeServer, McpApp } from "@scaledger/server/mcp/McpServerLive"
import { Context, Effect, Layer, Redacted } from "effect"

/** Where the test's MCP server listens: `http://127.0.0.1:<port>/mcp`. */
export class McpUrl extends Context.Tag("test/McpUrl")<McpUrl, string>() {}

/** The MCP server on a random loopback port over the given database, with the same API keys as REST. */
export const mcpServer = (
  database: Layer.Layer<SqlClient.SqlClient>,
  settings: McpSettings = { allowedOrigins: undefined, chainId: 4663 },
  /** A rate limiter for the keys' tool calls; none by default. */
  limiter: Layer.Layer<never> | Layer.Layer<RateLimiter> = Layer.empty
) =>
  Layer.effect(
    McpUrl,
    Effect.map(HttpServer.HttpServer, (server) => {
      const address = server.address as HttpServer.TcpAddress
      return `http://127.0.0.1:${address.port}/mcp`
    })
  ).pipe(
    Layer.provide(
      HttpLayerRouter.serve(McpApp(settings).pipe(Layer.provide(limiter)), {
        disableLogger: true,
        disableListenLog: true,
        routerConfig: ROUTER_OPTIONS
      }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(makeMcpNodeServer(settings), { port: 0, host: "127.0.0.1" }))
      )
    ),
    Layer.provideMerge(Layer.mergeAll(ApiKeys.Default, AccountsRepo.Default)),
    Layer.provide(Layer.succeed(KeyHashSecret, Redacted.make("test-key-hash-secret"))),
    Layer.provideMerge(database)
  )

export interface RpcReply {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

/** One raw HTTP request to the MCP endpoint, answered with status, headers and parsed JSON (or text). */
export const post = (url: string, body: unknown, headers: Record<string, string> = {}, method = "POST") =>
  Effect.promise(async (): Promise<RpcReply> => {
    const response = await fetch(url, {
      method,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      ...(method === "GET" || method === "HEAD" ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: response.status, headers: response.headers, body: parsed, text }
  })
