import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { CounterpartyReads } from "@scaledger/db/reads/CounterpartyReads"
import { FxReads } from "@scaledger/db/reads/FxReads"
import { LedgerQueries } from "@scaledger/db/reads/LedgerQueries"
import { MultiplierReads } from "@scaledger/db/reads/MultiplierReads"
import * as JsonRpc from "@scaledger/mcp/JsonRpc"
import type { McpSettings } from "@scaledger/mcp/McpConfig"
import { mcpDocOrigin, McpRoutesLive } from "@scaledger/mcp/McpRoutes"
import { McpKeys } from "@scaledger/mcp/McpServer"
import { McpToolkitLive } from "@scaledger/mcp/McpToolkitLive"
import { Effect, Layer } from "effect"
import { ApiKeys } from "../auth/ApiKeys.js"
import { makeNodeServer } from "../http/NodeServer.js"
import { serveWithOwnRouter } from "../http/OwnRouter.js"
import { PageCursorSeal, SealedCursorsLive } from "../http/PageCursorSeal.js"
import { limiterKey, optionalRateLimiter } from "../http/RateLimit.js"
import { MarketReadsLive } from "../MarketReadsLive.js"

/**
 * The MCP server checks the same API keys as the REST API, and a tool call counts against the key's requests a minute
 * like a REST request (one budget per key) when a rate limiter is provided.
 */
export const McpKeysLive = Layer.effect(
  McpKeys,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const limiter = yield* optionalRateLimiter
    return {
      authenticate: keys.authenticate,
      ...(limiter === undefined ? {} : {
        admit: (key: string) =>
          Effect.map(
            limiter.consume(limiterKey(key)),
            (decision) =>
              decision.allowed
                ? undefined
                : { retryAfterSeconds: decision.retryAfterSeconds, limitPerMinute: limiter.limitPerMinute }
          )
      })
    }
  })
)

/** The MCP routes with their tools and key check, needing the database, the key secret and an HTTP server. */
export const McpApp = (settings: McpSettings) =>
  McpRoutesLive(settings).pipe(
    Layer.provide(McpToolkitLive(settings)),
    Layer.provide(SealedCursorsLive.pipe(Layer.provide(PageCursorSeal.Default))),
    Layer.provide(McpKeysLive),
    Layer.provide([
      FxReads.Default,
      AlertsStore.Default,
      MultiplierReads.Default,
      LedgerQueries.Default,
      MarketReadsLive,
      CounterpartyReads.Default.pipe(Layer.provide(SealedCursorsLive), Layer.provide(PageCursorSeal.Default))
    ])
  )

/**
 * The Node server of the MCP listener. The errors it answers before any route (headers too large, a request too slow
 * or malformed, shutdown's 503) are JSON-RPC errors like every other MCP answer, with the route's `error.data`
 * (`code`, `docUrl` on the origin serving `/docs/errors`, `requestId`), not the REST envelope linking this listener.
 */
export const makeMcpNodeServer = (settings: McpSettings) =>
  makeNodeServer({
    docOrigin: (socket) => mcpDocOrigin(settings, socket),
    errorBody: ({ code, docUrl, message, requestId }) =>
      JsonRpc.error(
        null,
        code === "service_unavailable" ? JsonRpc.ErrorCodes.InternalError : JsonRpc.ErrorCodes.InvalidRequest,
        message,
        { code, docUrl, requestId }
      )
  })

/**
 * The MCP server on its own listener and router (its own port; its own host in production), on the same Node server
 * as REST's: request and header timeouts, parser errors answered, and drained on shutdown.
 */
export const McpServerLive = (settings: McpSettings, options: { readonly port: number; readonly host: string }) =>
  serveWithOwnRouter(McpApp(settings)).pipe(
    Layer.provide(NodeHttpServer.layer(makeMcpNodeServer(settings), options))
  )
