import { describe, expect, it } from "@effect/vitest"
import { makeMcpServer, McpKeys, McpToolkit } from "@scaledger/mcp/McpServer"
import { Effect } from "effect"

/** The server over keys whose lookup fails as a database that cannot be reached does. */
const withUnreachableKeys = makeMcpServer({ allowedOrigins: undefined, chainId: 4663 }).pipe(
  Effect.provideService(McpKeys, { authenticate: () => Effect.fail({ _tag: "SqlError" }) }),
  Effect.provideService(McpToolkit, [])
)

describe("the MCP server without its database", () => {
  it.effect("a call whose key cannot be checked answers 503 -32603 with the request's id", () =>
    Effect.gen(function*() {
      const server = yield* withUnreachableKeys
      for (const id of [7, "call-1"]) {
        const reply = yield* server.handle({
          body: { jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_alerts", arguments: {} } },
          authorization: ["Bearer sk_live_00000000000000000000000000000000"]
        })
        expect(reply.status).toBe(503)
        expect(reply.body).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32603 } })
      }
      // The open methods need no key, so no lookup.
      const ping = yield* server.handle({ body: { jsonrpc: "2.0", id: 8, method: "ping" }, authorization: [] })
      expect(ping).toEqual({ status: 200, body: { jsonrpc: "2.0", id: 8, result: {} } })
    }))
})
