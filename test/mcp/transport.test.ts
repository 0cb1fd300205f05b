import { describe, expect, it, layer } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { hostAllowed } from "@scaledger/mcp/McpConfig"
import { mcpDocOrigin } from "@scaledger/mcp/McpRoutes"
import { makeMcpNodeServer } from "@scaledger/server/mcp/McpServerLive"
import { ensureBundledHistory } from "@scaledger/workers/fx/FxWorker"
import { Effect, Layer, TestClock } from "effect"
import type { AddressInfo } from "node:net"
import { rawRequest } from "../support/EdgeHarness.js"
import { mcpServer, McpUrl, post, type RpcReply } from "../support/McpHarness.js"
import { newKey } from "../support/RestHarness.js"

const Database = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.orDie
)

/** A JSON-RPC error answer with HTTP `status`, no id known, and `code`. */
const expectRpcError = (reply: RpcReply, status: number, code: number) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } })
}

const rpc = (id: string | number | null, method: string, params?: unknown) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params })
})

/** Monday 2025-05-12, 10:00 UTC: the server's clock in these tests (the bundled rates end on Friday 2025-05-09). */
const MONDAY = Date.parse("2025-05-12T10:00:00Z")

const TOOL_NAMES = [
  "estimate_sale",
  "get_activity",
  "get_alerts",
  "get_dividend_history",
  "get_exchange_rate_on",
  "get_multiplier_history",
  "get_portfolio_summary",
  "get_positions",
  "get_recent_filings",
  "get_unlabeled_counterparties",
  "get_weekend_exposure"
]

layer(ChainStore.Default.pipe(Layer.provideMerge(mcpServer(Database))), { timeout: 60_000 })(
  "the MCP transport, rule by rule",
  (it) => {
    describe("handshake", () => {
      it.effect("initialize answers the client's version when supported, else 2025-11-25, with instructions", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
            const reply = yield* post(url, rpc(1, "initialize", { protocolVersion: version, capabilities: {} }))
            expect(reply.status).toBe(200)
            expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
            expect(reply.headers.get("mcp-session-id")).toBeNull()
            expect(reply.body.result.protocolVersion).toBe(version)
          }
          const old = yield* post(url, rpc(2, "initialize", { protocolVersion: "2024-11-05", capabilities: {} }))
          expect(old.body).toMatchObject({ jsonrpc: "2.0", id: 2, result: { protocolVersion: "2025-11-25" } })
          expect(old.body.result.capabilities).toEqual({ tools: { listChanged: false } })
          expect(old.body.result.serverInfo.name).toBe("scaledger")
          expect(old.body.result.instructions).toMatch(/null, never zero/)
          expect(old.body.result.instructions).toMatch(/evidence/)
        }))

      it.effect("ping answers {} and echoes string and numeric ids exactly", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          expect((yield* post(url, rpc("abc-123", "ping"))).body).toEqual({ jsonrpc: "2.0", id: "abc-123", result: {} })
          expect((yield* post(url, rpc(42, "ping"))).body).toEqual({ jsonrpc: "2.0", id: 42, result: {} })
          expect((yield* post(url, rpc("7", "ping"))).body.id).toBe("7")
        }))

      it.effect("/ is an alias of /mcp; other paths answer 404 with a JSON-RPC error", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const root = url.replace(/\/mcp$/, "/")
          expect((yield* post(root, rpc(1, "ping"))).body).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
          const elsewhere = yield* post(url.replace(/\/mcp$/, "/elsewhere"), rpc(1, "ping"))
          expect(elsewhere.status).toBe(404)
          expect(elsewhere.body.error.code).toBe(-32600)
        }))
    })

    describe("HTTP rules", () => {
      it.effect("GET (with or without a key) answers 405 with Allow: POST: there is no event stream", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-get")
          for (const headers of [{}, { authorization: `Bearer ${key}` }]) {
            const reply = yield* post(url, undefined, headers, "GET")
            expect(reply.status).toBe(405)
            expect(reply.headers.get("allow")).toBe("POST")
          }
          expect((yield* post(url, rpc(1, "ping"), {}, "DELETE")).status).toBe(405)
        }))

      it.effect("any other method on the endpoint (TRACE, PROPFIND, HEAD, …) answers 405, not 404", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const port = Number(new URL(url).port)
          for (const method of ["TRACE", "PROPFIND", "HEAD", "PUT", "OPTIONS"]) {
            for (const path of ["/mcp", "/"]) {
              const reply = yield* rawRequest(port, [
                `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`
              ])
              expect(reply.status, `${method} ${path}`).toBe(405)
              expect(reply.headers["allow"], `${method} ${path}`).toBe("POST")
            }
          }
          // A path that is not the endpoint is still 404, whatever the method.
          const elsewhere = yield* rawRequest(port, [
            `TRACE /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`
          ])
          expect(elsewhere.status).toBe(404)
        }))

      it.effect("a notification answers 202 with no body, with or without a key", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-notify")
          for (const headers of [{}, { authorization: `Bearer ${key}` }, { authorization: "Bearer sk_live_nope" }]) {
            const reply = yield* post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)
            expect(reply.status).toBe(202)
            expect(reply.text).toBe("")
          }
        }))

      it.effect("a batch array answers 400 with -32600, whatever the protocol version (DECISIONS.md)", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          for (
            const headers of [{}, { "mcp-protocol-version": "2025-03-26" }, { "mcp-protocol-version": "2025-06-18" }]
          ) {
            expectRpcError(yield* post(url, [rpc(1, "ping"), rpc(2, "ping")], headers), 400, -32600)
          }
          expectRpcError(yield* post(url, []), 400, -32600)
        }))

      it.effect("unparsable JSON -32700; a malformed message or a null id -32600", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          expectRpcError(yield* post(url, rpc(null, "ping")), 400, -32600)
          const garbage = yield* post(url, "{not json")
          expect(garbage.status).toBe(400)
          expect(garbage.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
          const wrongVersion = yield* post(url, { jsonrpc: "1.0", id: 5, method: "ping" })
          expect(wrongVersion.status).toBe(400)
          expect(wrongVersion.body).toMatchObject({ id: 5, error: { code: -32600 } })
          const noMethod = yield* post(url, { jsonrpc: "2.0", id: 6, method: 12 })
          expect(noMethod.body).toMatchObject({ id: 6, error: { code: -32600 } })
          const scalar = yield* post(url, "17")
          expect(scalar.body).toMatchObject({ id: null, error: { code: -32600 } })
          // An id is a string or an integer the answer can carry back exactly.
          for (const id of ["1.5", "9007199254740993", "-9007199254740993", "1e400"]) {
            expectRpcError(yield* post(url, `{"jsonrpc":"2.0","id":${id},"method":"ping"}`), 400, -32600)
          }
          const largest = yield* post(url, `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`)
          expect(largest.text).toContain(`"id":9007199254740991`)
          expect((yield* post(url, rpc("9007199254740993", "ping"))).body).toMatchObject({ id: "9007199254740993" })
        }))

      it.effect("an Origin that is not allowed answers 403; loopback origins and no Origin are allowed", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const evil = yield* post(url, rpc(1, "initialize", { protocolVersion: "2025-11-25" }), {
            origin: "http://evil.example.com"
          })
          expect(evil.status).toBe(403)
          expect(evil.body.error.code).toBe(-32600)
          const local = yield* post(url, rpc(1, "ping"), { origin: "http://localhost:6274" })
          expect(local.status).toBe(200)
          // Whatever the method: the origin is checked first.
          for (const method of ["GET", "DELETE"] as const) {
            expect((yield* post(url, undefined, { origin: "http://evil.example.com" }, method)).status).toBe(403)
            expect((yield* post(url, undefined, { origin: "http://localhost:6274" }, method)).status).toBe(405)
          }
        }))

      it.effect("a Host that is not this server's answers 403 (DNS rebinding); loopback, IP and no Host pass", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const port = Number(new URL(url).port)
          const body = JSON.stringify(rpc(1, "initialize", { protocolVersion: "2024-11-05", capabilities: {} }))
          /** One request with `host` as its Host header (no Origin: what the conformance suite sends). */
          const withHost = (host: string | undefined, method = "POST") =>
            rawRequest(port, [
              `${method} /mcp HTTP/1.1\r\n${host === undefined ? "" : `Host: ${host}\r\n`}` +
              `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
              `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
            ])
          for (const host of ["evil.example.com", `evil.example.com:${port}`, "127.0.0.1.nip.io", "localhost.evil"]) {
            const refused = yield* withHost(host)
            expect(refused.status, host).toBe(403)
            expect(refused.body.error, host).toMatchObject({ code: -32600, data: { code: "invalid_request" } })
            expect(refused.body.error.message, host).toContain("MCP_ALLOWED_HOSTS")
          }
          expect((yield* withHost("evil.example.com", "GET")).status).toBe(403)
          for (
            const host of [
              `127.0.0.1:${port}`,
              `localhost:${port}`,
              "localhost",
              `[::1]:${port}`,
              "10.0.0.5",
              "scaledger:8081"
            ]
          ) {
            expect((yield* withHost(host)).status, host).toBe(200)
          }
        }))

      it.effect("MCP_ALLOWED_HOSTS and PUBLIC_BASE_URL name the other hosts this server answers for", () =>
        Effect.sync(() => {
          const settings = {
            allowedOrigins: undefined,
            chainId: 1,
            allowedHosts: ["mcp.example.com"],
            publicBaseUrl: "https://api.example.com"
          }
          expect(hostAllowed(settings, "mcp.example.com:443")).toBe(true)
          expect(hostAllowed(settings, "MCP.Example.COM")).toBe(true)
          expect(hostAllowed(settings, "api.example.com")).toBe(true)
          expect(hostAllowed(settings, "other.example.com")).toBe(false)
          expect(hostAllowed(settings, "mcp.example.com/path")).toBe(false)
          expect(hostAllowed(settings, undefined)).toBe(true)
          expect(hostAllowed({ allowedOrigins: undefined, chainId: 1 }, "mcp.example.com")).toBe(false)
        }))

      it.effect("an unsupported MCP-Protocol-Version header answers 400", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const reply = yield* post(url, rpc(1, "ping"), { "mcp-protocol-version": "1999-01-01" })
          expect(reply.status).toBe(400)
          expect((yield* post(url, rpc(1, "ping"), { "mcp-protocol-version": "2025-06-18" })).status).toBe(200)
          // The same version sent twice (proxies repeat headers) is that version; two different ones are not.
          const twice = yield* post(url, rpc(1, "ping"), { "mcp-protocol-version": "2025-06-18, 2025-06-18" })
          expect(twice.status).toBe(200)
          const mixed = yield* post(url, rpc(1, "ping"), { "mcp-protocol-version": "2025-06-18, 2025-11-25" })
          expect(mixed.status).toBe(400)
        }))

      it.effect("initialize negotiates whatever version header it carries: an unknown one is answered 2025-11-25", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          for (const version of ["2024-11-05", "1999-01-01"]) {
            const reply = yield* post(
              url,
              rpc(1, "initialize", { protocolVersion: version, capabilities: {} }),
              { "mcp-protocol-version": version }
            )
            expect(reply.status, reply.text).toBe(200)
            expect(reply.body.result.protocolVersion).toBe("2025-11-25")
          }
          // The requests after it are bound by the header.
          expect((yield* post(url, rpc(2, "tools/list"), { "mcp-protocol-version": "2024-11-05" })).status).toBe(400)
        }))

      it.effect("a body over 1 MiB answers 413", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const reply = yield* post(url, { ...rpc(1, "ping"), params: { pad: "x".repeat(1024 * 1024 + 10) } })
          expect(reply.status).toBe(413)
        }))
    })

    describe("hostile input (found by fuzzing)", () => {
      it.effect("a message nested deeper than 32 levels is -32600, not an empty 500", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-deep")
          const auth = { authorization: `Bearer ${key}` }
          const deep = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`
          for (const depth of [40, 10_000]) {
            const name = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":${deep(depth)}}}`
            expectRpcError(yield* post(url, name, auth), 400, -32600)
            const args = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_alerts","arguments":${
              deep(depth)
            }}}`
            expectRpcError(yield* post(url, args, auth), 400, -32600)
          }
          // Within the depth, a name that is not a string is an unknown tool, said briefly.
          const shallow = yield* post(url, rpc(9, "tools/call", { name: [[["x".repeat(10_000)]]] }), auth)
          expect(shallow.body).toMatchObject({ id: 9, error: { code: -32602 } })
          expect(shallow.body.error.message.length).toBeLessThan(2_100)
        }))

      it.effect("a chunked body over 1 MiB is read to its end and answered 413 (no reset)", () =>
        Effect.gen(function*() {
          const url = new URL(yield* McpUrl)
          const piece = "x".repeat(64 * 1024)
          const reply = yield* rawRequest(Number(url.port), [
            `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
            `Transfer-Encoding: chunked\r\n\r\n`,
            ...Array.from({ length: 24 }, () => `${piece.length.toString(16)}\r\n${piece}\r\n`),
            "0\r\n\r\n"
          ])
          expect(reply.closedEarly).toBe(false)
          expect(reply.status).toBe(413)
          expect(reply.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
        }))

      it.effect("an HTTP/1.1 request without Host is answered (Node's bare 400 before)", () =>
        Effect.gen(function*() {
          const url = new URL(yield* McpUrl)
          const body = JSON.stringify(rpc(1, "ping"))
          const reply = yield* rawRequest(Number(url.port), [
            `POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
          ])
          expect(reply.status, reply.text).toBe(200)
          expect(reply.body).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
        }))

      it.effect("a body that is not JSON by its Content-Type is 415; ws:// origins are not loopback pages", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
            expectRpcError(yield* post(url, rpc(1, "ping"), { "content-type": type }), 415, -32600)
          }
          expect((yield* post(url, rpc(1, "ping"), { "content-type": "application/json; charset=utf-8" })).status)
            .toBe(200)
          expectRpcError(yield* post(url, rpc(1, "ping"), { origin: "ws://127.0.0.1" }), 403, -32600)
        }))

      it.effect("tools without arguments take none; control characters in arguments are invalid_request", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(MONDAY)
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-args")
          const auth = { authorization: `Bearer ${key}` }
          const call = (name: string, args: unknown) => post(url, rpc(1, "tools/call", { name, arguments: args }), auth)
          for (const args of [{ x: 1 }, [1, 2], [], "a"]) {
            const reply = yield* call("get_portfolio_summary", args)
            expect(reply.body.result.isError, JSON.stringify(args)).toBe(true)
            expect(reply.body.result.structuredContent.code).toBe("invalid_request")
          }
          expect((yield* call("get_portfolio_summary", {})).body.result.isError).toBeUndefined()
          for (
            const [name, args] of [
              ["get_multiplier_history", { symbol: "AA\u0000PL" }],
              ["get_activity", { symbol: "\u0000" }],
              ["get_activity", { symbol: "AAPL\u0007" }]
            ] as const
          ) {
            const reply = yield* call(name, args)
            expect(reply.body.result.structuredContent, JSON.stringify(args)).toMatchObject({ code: "invalid_request" })
          }
        }))
    })

    describe("auth", () => {
      it.effect("tools/list is open; tools/call needs a key: 401 with WWW-Authenticate, not an empty list", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(MONDAY)
          const url = yield* McpUrl
          const listed = yield* post(url, rpc(1, "tools/list"))
          expect(listed.status).toBe(200)
          expect(listed.body.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(TOOL_NAMES)
          const call = rpc(2, "tools/call", {
            name: "get_exchange_rate_on",
            arguments: { currency: "GBP", date: "2025-05-09" }
          })
          const anonymous = yield* post(url, call)
          expect(anonymous.status).toBe(401)
          expect(anonymous.headers.get("www-authenticate")).toBe(`Bearer realm="scaledger"`)
          expect(anonymous.body).toMatchObject({ jsonrpc: "2.0", id: 2, error: { code: -32001 } })
          const badKey = yield* post(url, call, { authorization: "Bearer sk_live_00000000000000000000000000000000" })
          expect(badKey.status).toBe(401)
          expect(badKey.headers.get("www-authenticate")).toMatch(/^Bearer realm="scaledger"/)
          const { key } = yield* newKey("mcp-auth")
          const keyed = yield* post(url, call, { authorization: `Bearer ${key}` })
          expect(keyed.status).toBe(200)
          expect(keyed.body.result.isError, keyed.text).toBeUndefined()
        }))

      it.effect("several spaces after Bearer are accepted; more than one Authorization header is 401", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(MONDAY)
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-headers")
          const call = rpc(3, "tools/call", {
            name: "get_exchange_rate_on",
            arguments: { currency: "GBP", date: "2025-05-09" }
          })
          const spaced = yield* post(url, call, { authorization: `Bearer   ${key}` })
          expect(spaced.status, spaced.text).toBe(200)
          expect(spaced.body.result.isError, spaced.text).toBeUndefined()
          const port = Number(new URL(url).port)
          const body = JSON.stringify(call)
          const send = (...values: Array<string>) =>
            rawRequest(port, [
              `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
              values.map((v) => `Authorization: ${v}\r\n`).join("") +
              `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
            ])
          expect((yield* send(`Bearer ${key}`)).status).toBe(200)
          const twice = yield* send(`Bearer ${key}`, "Bearer sk_live_other")
          expect(twice.status, twice.text).toBe(401)
          expect(twice.headers["www-authenticate"]).toBe(`Bearer realm="scaledger", error="invalid_request"`)
          expect(twice.body).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: -32001 } })
          expect(twice.body.error.message).toContain("More than one Authorization header")
        }))

      it.effect("an unknown method needs the key too, then answers -32601", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          expect((yield* post(url, rpc(1, "resources/list"))).status).toBe(401)
          const { key } = yield* newKey("mcp-unknown")
          const reply = yield* post(url, rpc(1, "resources/list"), { authorization: `Bearer ${key}` })
          expect(reply.status).toBe(200)
          expect(reply.body).toMatchObject({ id: 1, error: { code: -32601 } })
        }))
    })

    describe("tools", () => {
      it.effect("every tool is read-only with a plain-object inputSchema (no $ref)", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const { tools } = (yield* post(url, rpc(1, "tools/list"))).body.result
          for (const tool of tools) {
            expect(tool.annotations.readOnlyHint).toBe(true)
            expect(tool.description.length).toBeGreaterThan(20)
            expect(tool.inputSchema.type).toBe("object")
            expect(Array.isArray(tool.inputSchema.required)).toBe(true)
            expect(JSON.stringify(tool.inputSchema)).not.toContain("$ref")
            // Unknown arguments are refused, and the schema says so; no relative `$id` two tools would share.
            expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
            expect(tool.inputSchema.$id, tool.name).toBeUndefined()
          }
          const summary = tools.find((t: { name: string }) => t.name === "get_portfolio_summary")
          expect(summary.inputSchema).toEqual({
            type: "object",
            properties: {},
            required: [],
            additionalProperties: false
          })
          const activity = tools.find((t: { name: string }) => t.name === "get_activity")
          expect(activity.inputSchema.properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 500 })
          const filings = tools.find((t: { name: string }) => t.name === "get_recent_filings")
          expect(filings.inputSchema.properties.limit).toMatchObject({
            type: "integer",
            minimum: 1,
            maximum: 500,
            default: 50
          })
          const history = tools.find((t: { name: string }) => t.name === "get_multiplier_history")
          expect(history.inputSchema.required).toEqual(["symbol"])
          expect(Object.keys(history.inputSchema.properties).sort()).toEqual(["from", "symbol"])
          // The argument's own description, not one generated from its bounds.
          expect(history.inputSchema.properties.symbol).toEqual({
            type: "string",
            minLength: 1,
            maxLength: 64,
            description: "Token symbol (any case), e.g. AAPL, or the token's address."
          })
          for (const t of tools) {
            for (const property of Object.values(t.inputSchema.properties) as Array<any>) {
              expect(String(property.title ?? "")).not.toMatch(/Length\(/)
            }
          }
          // Only the tools that read SEC EDGAR reach outside the service's own record.
          expect(tools.filter((t: any) => t.annotations.openWorldHint).map((t: any) => t.name).sort()).toEqual([
            "get_dividend_history",
            "get_recent_filings"
          ])
        }))

      it.effect("an unknown tool is -32602; bad arguments and failed reads are tool errors with the REST code", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(MONDAY)
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-tools")
          const auth = { authorization: `Bearer ${key}` }
          const unknown = yield* post(url, rpc(1, "tools/call", { name: "sell_everything", arguments: {} }), auth)
          expect(unknown.body).toMatchObject({
            id: 1,
            error: { code: -32602, message: "Unknown tool: sell_everything" }
          })
          // Without a name, or with one that is no string: what is wrong, not "Unknown tool: undefined".
          const nameless = yield* post(url, rpc(3, "tools/call", { arguments: {} }), auth)
          expect(nameless.body).toMatchObject({ id: 3, error: { code: -32602 } })
          expect(nameless.body.error.message).toContain("needs params.name")
          const numbered = yield* post(url, rpc(4, "tools/call", { name: 7 }), auth)
          expect(numbered.body.error.message).toContain("must be a tool's name (a string), not 7")
          const missing = yield* post(
            url,
            rpc(2, "tools/call", { name: "get_exchange_rate_on", arguments: { currency: "GBP" } }),
            auth
          )
          expect(missing.body.result.isError).toBe(true)
          expect(missing.body.result.structuredContent.code).toBe("invalid_request")
          // Named as REST names fields, not by the schema's type text.
          expect(missing.body.result.structuredContent.details).toEqual({
            issues: [{ path: ["date"], message: "is missing" }]
          })
          expect(missing.body.result.structuredContent.message).toBe(
            "Invalid arguments for get_exchange_rate_on: `date`: is missing"
          )
          const extra = yield* post(
            url,
            rpc(3, "tools/call", {
              name: "get_exchange_rate_on",
              arguments: { currency: "GBP", date: "2025-05-09", sneaky: 1 }
            }),
            auth
          )
          expect(extra.body.result.isError).toBe(true)
          expect(extra.body.result.structuredContent.details.issues).toEqual([
            { path: ["sneaky"], message: "is unexpected, expected: \"currency\" | \"date\"" }
          ])
          const currency = yield* post(
            url,
            rpc(4, "tools/call", { name: "get_exchange_rate_on", arguments: { currency: "XYZ", date: "2025-05-09" } }),
            auth
          )
          expect(currency.body.result.isError).toBe(true)
          expect(currency.body.result.structuredContent).toMatchObject({ code: "unsupported_currency" })
          expect(JSON.parse(currency.body.result.content[0].text)).toEqual(currency.body.result.structuredContent)
          const token = yield* post(
            url,
            rpc(5, "tools/call", { name: "get_multiplier_history", arguments: { symbol: "NOPE" } }),
            auth
          )
          expect(token.body.result.structuredContent.code).toBe("not_found")
          // A text argument longer than anything it could name is refused by its length, and not repeated back.
          const long = yield* post(
            url,
            rpc(6, "tools/call", { name: "get_multiplier_history", arguments: { symbol: "A".repeat(500_000) } }),
            auth
          )
          expect(long.body.result.isError).toBe(true)
          expect(long.body.result.structuredContent.code).toBe("invalid_request")
          expect(long.body.result.structuredContent.details.issues.map((i: { path: unknown }) => i.path)).toEqual([
            ["symbol"]
          ])
          expect(long.text.length).toBeLessThan(4_000)
          // The message says what is expected, not the argument's description.
          expect(long.body.result.structuredContent.details.issues[0].message).toMatch(
            /^expected text of 1 to 64 characters/
          )
          const negative = yield* post(
            url,
            rpc(8, "tools/call", { name: "estimate_sale", arguments: { symbol: "AAPL", shares: "-1" } }),
            auth
          )
          expect(negative.body.result.structuredContent.details.issues[0]).toMatchObject({
            path: ["shares"],
            message: expect.stringMatching(/^expected an unsigned decimal string such as "10\.5"/)
          })
          // An optional argument given wrong: its one issue, not also the absent alternative's "Expected undefined".
          const zero = yield* post(
            url,
            rpc(7, "tools/call", { name: "get_activity", arguments: { limit: 0 } }),
            auth
          )
          expect(zero.body.result.structuredContent.details.issues).toHaveLength(1)
          expect(zero.body.result.structuredContent.details.issues[0].path).toEqual(["limit"])
          // An empty symbol names no token, as the REST twins refuse `symbol=` (it was "The account holds no ." or an
          // answer for the symbol "").
          for (
            const [name, args] of [
              ["estimate_sale", { symbol: "", shares: "1" }],
              ["get_weekend_exposure", { symbol: "" }],
              ["get_recent_filings", { symbol: "" }],
              ["get_dividend_history", { symbol: "" }],
              ["get_multiplier_history", { symbol: "" }]
            ] as const
          ) {
            const empty = yield* post(url, rpc(9, "tools/call", { name, arguments: args }), auth)
            expect(empty.body.result.isError, name).toBe(true)
            expect(empty.body.result.structuredContent, name).toMatchObject({
              code: "invalid_request",
              details: { issues: [{ path: ["symbol"], message: "expected text of 1 to 64 characters" }] }
            })
          }
        }))
    })

    describe("errors link to /docs/errors; every answer has a Request-Id", () => {
      const DOC = /^http:\/\/127\.0\.0\.1:\d+\/docs\/errors#/
      const requestIdOf = (reply: RpcReply) => {
        const id = reply.headers.get("request-id")
        expect(id, reply.text).toMatch(/^req_[0-9A-Za-z]{20}$/)
        return id
      }
      const expectLinked = (reply: RpcReply, status: number, code: string) => {
        expect(reply.status, reply.text).toBe(status)
        expect(reply.body.error.data, reply.text).toEqual({
          code,
          docUrl: expect.stringMatching(new RegExp(DOC.source + code + "$")),
          requestId: requestIdOf(reply)
        })
      }

      it.effect("headers over 16 KiB (answered before any route) are a JSON-RPC error too, not the REST envelope", () =>
        Effect.gen(function*() {
          const port = Number(new URL(yield* McpUrl).port)
          const reply = yield* rawRequest(port, [
            `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Pad: ${"a".repeat(20_000)}\r\n` +
            `Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`
          ])
          expect(reply.status, reply.text).toBe(431)
          expect(reply.body, reply.text).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
          expect(reply.body.error.data).toEqual({
            code: "headers_too_large",
            docUrl: expect.stringMatching(new RegExp(DOC.source + "headers_too_large$")),
            requestId: reply.headers["request-id"]
          })
        }))

      it.effect("a tool error's structuredContent has the REST code's docUrl and the request id", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(MONDAY)
          const url = yield* McpUrl
          const { key } = yield* newKey("mcp-doc-url")
          const reply = yield* post(
            url,
            rpc(1, "tools/call", { name: "get_exchange_rate_on", arguments: { currency: "GBP" } }),
            { authorization: `Bearer ${key}` }
          )
          const structured = reply.body.result.structuredContent
          expect(structured.code).toBe("invalid_request")
          expect(structured.docUrl).toMatch(new RegExp(DOC.source + "invalid_request$"))
          expect(structured.requestId).toBe(requestIdOf(reply))
          expect(JSON.parse(reply.body.result.content[0].text)).toEqual(structured)
        }))

      it.effect("JSON-RPC errors carry code and docUrl in error.data: 401, 403, 404, 405, 415, -32601, -32700", () =>
        Effect.gen(function*() {
          const url = yield* McpUrl
          const call = rpc(2, "tools/call", { name: "get_portfolio_summary", arguments: {} })
          const anonymous = yield* post(url, call)
          expectLinked(anonymous, 401, "unauthorized")
          expect(anonymous.body).toMatchObject({ id: 2, error: { code: -32001 } })
          expectLinked(yield* post(url, rpc(1, "ping"), { origin: "https://evil.example" }), 403, "invalid_request")
          expectLinked(yield* post(url.replace(/\/mcp$/, "/nothing"), rpc(1, "ping")), 404, "not_found")
          expectLinked(yield* post(url, undefined, {}, "GET"), 405, "method_not_allowed")
          expectLinked(
            yield* post(url, rpc(1, "ping"), { "content-type": "text/plain" }),
            415,
            "unsupported_media_type"
          )
          expectLinked(yield* post(url, "{not json"), 400, "invalid_request")
          const { key } = yield* newKey("mcp-doc-url-rpc")
          const unknown = yield* post(url, rpc(3, "resources/list"), { authorization: `Bearer ${key}` })
          expectLinked(unknown, 200, "not_found")
          expect(unknown.body).toMatchObject({ id: 3, error: { code: -32601 } })
          // Answers without an error carry the header too.
          requestIdOf(yield* post(url, rpc(1, "ping")))
          requestIdOf(yield* post(url, { jsonrpc: "2.0", method: "notifications/initialized" }))
        }))
    })
  }
)

describe("MCP docUrl origin", () => {
  it("PUBLIC_BASE_URL wins; else the REST port on the address the client reached", () => {
    const socket = { localAddress: "::ffff:10.0.0.5", localPort: 8081 }
    expect(mcpDocOrigin({ publicBaseUrl: "https://api.example.com", restPort: 8080 }, socket))
      .toBe("https://api.example.com")
    expect(mcpDocOrigin({ restPort: 8080 }, socket)).toBe("http://10.0.0.5:8080")
    expect(mcpDocOrigin({ restPort: 8080 }, { localAddress: "::1", localPort: 8081 })).toBe("http://[::1]:8080")
    expect(mcpDocOrigin({}, socket)).toBe("http://10.0.0.5:8081")
  })

  it.effect("errors the listener's Node server answers itself link the REST port too, not the MCP listener", () =>
    Effect.gen(function*() {
      const server = makeMcpNodeServer({ allowedOrigins: undefined, chainId: 4663, restPort: 8080 })()
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => {
          server.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const port = (server.address() as AddressInfo).port
      const reply = yield* rawRequest(port, [
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Pad: ${"a".repeat(20_000)}\r\n\r\n`
      ])
      expect(reply.status, reply.text).toBe(431)
      expect(reply.body.error.data.docUrl).toBe("http://127.0.0.1:8080/docs/errors#headers_too_large")
    }).pipe(Effect.scoped))
})
