import { describe, expect, layer } from "@effect/vitest"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { memoryRateLimiter } from "@scaledger/server/http/RateLimit"
import { ensureBundledHistory } from "@scaledger/workers/fx/FxWorker"
import { Effect, Layer, TestClock } from "effect"
import { mcpServer, McpUrl, post } from "../support/McpHarness.js"
import { newKey } from "../support/RestHarness.js"

const Database = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.pglite),
  Layer.orDie
)

const LIMIT = 3

layer(mcpServer(Database, { allowedOrigins: undefined, chainId: 4663 }, memoryRateLimiter(LIMIT)), {
  timeout: 60_000
})("the MCP server under a rate limit", (it) => {
  describe("tool calls count against the key's requests a minute", () => {
    it.effect("past the limit a tool call is the tool error rate_limited with retryAfter; other keys go on", () =>
      Effect.gen(function*() {
        // A Monday after the bundled rates' last day (the server's clock in this test).
        yield* TestClock.setTime(Date.parse("2025-05-12T10:00:00Z"))
        const url = yield* McpUrl
        const { key } = yield* newKey("mcp-limited")
        const call = (id: number, as: string) =>
          post(url, {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "get_exchange_rate_on", arguments: { currency: "GBP", date: "2025-05-09" } }
          }, { authorization: `Bearer ${as}` })
        for (let i = 1; i <= LIMIT; i++) {
          const allowed = yield* call(i, key)
          expect(allowed.body.result.isError, allowed.text).toBeUndefined()
        }
        const refused = yield* call(LIMIT + 1, key)
        expect(refused.status).toBe(200)
        expect(refused.body).toMatchObject({ id: LIMIT + 1, result: { isError: true } })
        const structured = refused.body.result.structuredContent
        expect(structured).toMatchObject({ code: "rate_limited", details: { limitPerMinute: LIMIT } })
        expect(structured.retryAfter).toBeGreaterThanOrEqual(1)
        expect(structured.retryAfter).toBeLessThanOrEqual(60)
        expect(JSON.parse(refused.body.result.content[0].text)).toEqual(structured)
        // The open methods are not counted, and another key has a budget of its own.
        expect((yield* post(url, { jsonrpc: "2.0", id: 9, method: "tools/list" })).status).toBe(200)
        const other = yield* newKey("mcp-unlimited")
        expect((yield* call(10, other.key)).body.result.isError).toBeUndefined()
      }))
  })
})
