import { describe, expect, it, layer } from "@effect/vitest"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { docOrigin, restOrigin } from "@scaledger/server/http/RequestEnvelope"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect, Option, Stream, TestClock } from "effect"
import * as Zlib from "node:zlib"
import { edgeServer, rawRequest, serverPort } from "../support/EdgeHarness.js"
import { call, newKey, type Reply } from "../support/RestHarness.js"

const AAPL = "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"

/** The envelope, with a Request-Id header equal to `requestId`, and a docUrl on the service's own listener. */
const expectError = (reply: Pick<Reply, "status" | "headers" | "body">, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(Object.keys(reply.body ?? {})).toEqual(["error"])
  const error = reply.body.error
  expect(error.code).toBe(code)
  expect(error.message.length).toBeGreaterThan(0)
  expect(error.requestId).toMatch(/^req_[0-9A-Za-z]{20}$/)
  expect(reply.headers["request-id"]).toBe(error.requestId)
  expect(error.docUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/docs/errors#${code}$`))
  return error
}

const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url")

layer(edgeServer(TestDatabase.postgres), { timeout: 60_000 })("hardening: defects of issue 15", (it) => {
  describe("bad input reaches the database no more (400, never 503)", () => {
    it.effect("POST /v1/wallets with a NUL in the label is 400 invalid_request", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("nul-post")
        const reply = yield* call("POST", "/v1/wallets", { key, body: { address: AAPL, label: "a\u0000b" } })
        expectError(reply, 400, "invalid_request")
        const control = yield* call("POST", "/v1/wallets", { key, body: { address: AAPL, label: "bell\u0007" } })
        // One issue for the field: not also "Expected undefined" (the optional field's absent alternative).
        expect(expectError(control, 400, "invalid_request").details.issues).toEqual([{
          path: ["label"],
          message: "must not contain control characters other than tab, line feed and carriage return"
        }])
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
      }))

    it.effect("PATCH /v1/wallets/{address} with a NUL in the label is 400 invalid_request", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("nul-patch")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: AAPL, label: "main" } })).status).toBe(201)
        const reply = yield* call("PATCH", `/v1/wallets/${AAPL}`, { key, body: { label: "x\u0000" } })
        expectError(reply, 400, "invalid_request")
        expect((yield* call("GET", `/v1/wallets/${AAPL}`, { key })).body.label).toBe("main")
      }))

    it.effect("GET /v1/multiplier?token=AAPL%00 is 400 invalid_request", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("nul-query")
        const error = expectError(yield* call("GET", "/v1/multiplier?token=AAPL%00", { key }), 400, "invalid_request")
        expect(error.details.issues[0].path).toEqual(["token"])
        // No token at all is the request's mistake too, not an unknown token.
        const empty = expectError(yield* call("GET", "/v1/multiplier?token=", { key }), 400, "invalid_request")
        expect(empty.details.issues[0].path).toEqual(["token"])
        expectError(yield* call("GET", "/v1/wallets/0x%00", { key }), 400, "invalid_request")
        // An unknown token or id is quoted by its first 64 characters, not whole.
        const long = "T".repeat(5_000)
        const paths: ReadonlyArray<readonly ["GET" | "PATCH" | "DELETE", string]> = [
          ["GET", `/v1/multiplier?token=${long}`],
          ["GET", `/v1/basis?token=${long}`],
          ["GET", `/v1/exports/${long}`],
          ["DELETE", `/v1/webhooks/${long}`]
        ]
        for (const [method, path] of paths) {
          const unknown = expectError(yield* call(method, path, { key }), 404, "not_found")
          expect(unknown.message, path).toContain(`${"T".repeat(64)}…`)
          expect(unknown.message.length, path).toBeLessThan(200)
        }
      }))

    it.effect("GET /v1/events?from=0000-01-01 is 400 invalid_date, not a database error", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("year-zero")
        expectError(yield* call("GET", "/v1/events?from=0000-01-01", { key }), 400, "invalid_date")
        expectError(yield* call("GET", "/v1/events?to=0000-12-31", { key }), 400, "invalid_date")
        expectError(yield* call("GET", "/v1/multiplier?token=AAPL&at=0000-01-01", { key }), 400, "invalid_date")
        expectError(yield* call("GET", "/v1/events?from=10000-01-01", { key }), 400, "invalid_date")
      }))

    it.effect("GET /v1/wallets takes only a cursor it issued to the same account: any other is 400 invalid_request", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("cursor-sealed")
        for (
          const address of ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000a2"]
        ) {
          expect((yield* call("POST", "/v1/wallets", { key, body: { address } })).status).toBe(201)
        }
        const first = yield* call("GET", "/v1/wallets?limit=1", { key })
        const cursor: string = first.body.nextCursor
        // It names no row of any account (a sealed position), and it works for the list and account it came from.
        expect(Buffer.from(cursor, "base64url").toString("utf8")).not.toContain("wallets:")
        const second = yield* call("GET", `/v1/wallets?limit=1&cursor=${cursor}`, { key })
        expect(second.status).toBe(200)
        expect(second.body.wallets.map((w: any) => w.address)).toEqual(["0x00000000000000000000000000000000000000A2"])
        const other = (yield* newKey("cursor-other")).key
        expectError(yield* call("GET", `/v1/wallets?cursor=${cursor}`, { key: other }), 400, "invalid_request")
        expectError(yield* call("GET", `/v1/exports?cursor=${cursor}`, { key }), 400, "invalid_request")
        const tampered = cursor.slice(0, -2) + (cursor.endsWith("AA") ? "AB" : "AA")
        for (
          const forged of [
            tampered,
            base64url("wallets:1"),
            base64url("wallets:" + "9".repeat(40)),
            base64url("events:1"),
            "not a cursor!",
            "A".repeat(5000)
          ]
        ) {
          const reply = yield* call("GET", `/v1/wallets?cursor=${encodeURIComponent(forged)}`, { key })
          expectError(reply, 400, "invalid_request")
        }
      }))

    it.effect("limit outside 1–500 or not an integer is 400 invalid_request", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("limits")
        // `Number` reads hexadecimal, signs, spaces, a trailing point and exponents; an integer parameter does not.
        for (
          const limit of ["0", "501", "1.5", "abc", "1e3", "-1", "0x10", "%2B5", "%205", "5%20", "1.", "5e1", "1.0"]
        ) {
          expectError(yield* call("GET", `/v1/wallets?limit=${limit}`, { key }), 400, "invalid_request")
        }
        expectError(yield* call("GET", "/v1/filings?limit=0x10", { key }), 400, "invalid_request")
        expect((yield* call("GET", "/v1/wallets?limit=500", { key })).status).toBe(200)
        expect((yield* call("GET", "/v1/wallets?limit=05", { key })).status).toBe(200)
      }))
  })

  describe("bodies", () => {
    it.effect("deeply nested JSON ([ x3000 ... ] x3000) is 400 invalid_request, not 500", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("deep")
        const deep = "[".repeat(3000) + "]".repeat(3000)
        const reply = yield* call("POST", "/v1/wallets", { key, rawBody: deep })
        expect(expectError(reply, 400, "invalid_request").details.maxDepth).toBe(32)
        const objects = "{\"a\":".repeat(3000) + "1" + "}".repeat(3000)
        expectError(yield* call("PUT", "/v1/settings", { key, rawBody: objects }), 400, "invalid_request")
        // Brackets inside strings do not count.
        const inString = yield* call("POST", "/v1/wallets", {
          key,
          rawBody: JSON.stringify({ address: AAPL, label: "[".repeat(100) })
        })
        expect(inString.status).toBe(201)
      }))

    it.effect("a chunked body over 1 MiB answers 413 payload_too_large (no reset)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("chunked")
        const body = JSON.stringify({ address: AAPL, label: "x".repeat(1024 * 1024 + 10) })
        const port = yield* serverPort
        const chunks = [body.slice(0, 1000), body.slice(1000, 600_000), body.slice(600_000)]
        const reply = yield* rawRequest(port, [
          `POST /v1/wallets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
          ...chunks.map((chunk) => `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`),
          "0\r\n\r\n"
        ])
        expect(reply.closedEarly).toBe(false)
        expectError(reply, 413, "payload_too_large")
        expect(reply.headers["connection"]).toBe("close")
        // Through an HTTP client too, and nothing was written.
        const encoded = new TextEncoder().encode(body)
        const streamed = yield* call("POST", "/v1/wallets", {
          key,
          stream: Stream.make(encoded.slice(0, 1000), encoded.slice(1000))
        })
        expectError(streamed, 413, "payload_too_large")
        // A much larger chunked body (4 MiB in 64 KiB chunks): still the 413, not a reset.
        const piece = "x".repeat(64 * 1024)
        const big = yield* rawRequest(port, [
          `POST /v1/wallets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
          ...Array.from({ length: 64 }, () => `${piece.length.toString(16)}\r\n${piece}\r\n`),
          "0\r\n\r\n"
        ])
        expect(big.closedEarly).toBe(false)
        expectError(big, 413, "payload_too_large")
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
      }))

    it.effect("a body on a GET over 1 MiB is 413, a non-JSON body on a DELETE 415 (both declared for those operations)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("bodyless")
        const port = yield* serverPort
        const get = yield* rawRequest(port, [
          `GET /v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`,
          "x".repeat(2 * 1024 * 1024)
        ])
        expectError(get, 413, "payload_too_large")
        yield* call("POST", "/v1/wallets", { key, body: { address: AAPL } })
        const del = yield* rawRequest(port, [
          `DELETE /v1/wallets/${AAPL} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc`
        ])
        expectError(del, 415, "unsupported_media_type")
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toHaveLength(1)
      }))

    it.effect("form bodies are 415 unsupported_media_type: multipart PUT /v1/settings, urlencoded POST /v1/wallets", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("forms")
        const boundary = "----scaledger"
        const multipart =
          `--${boundary}\r\nContent-Disposition: form-data; name="country"\r\n\r\nSG\r\n--${boundary}--\r\n`
        const port = yield* serverPort
        const settings = yield* rawRequest(port, [
          `PUT /v1/settings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${multipart.length}\r\n\r\n` +
          multipart
        ])
        expectError(settings, 415, "unsupported_media_type")
        expect((yield* call("GET", "/v1/settings", { key })).body.country).toBe("US")
        const form = `address=${AAPL}&label=form`
        const urlencoded = yield* rawRequest(port, [
          `POST /v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`
        ])
        expectError(urlencoded, 415, "unsupported_media_type")
        const json = JSON.stringify({ address: AAPL })
        const plain = yield* rawRequest(port, [
          `POST /v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: text/plain\r\nContent-Length: ${json.length}\r\n\r\n${json}`
        ])
        expectError(plain, 415, "unsupported_media_type")
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
        // JSON with a charset is fine.
        const withCharset = yield* rawRequest(port, [
          `POST /v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: application/json; charset=UTF-8\r\nContent-Length: ${json.length}\r\n\r\n${json}`
        ])
        expect(withCharset.status).toBe(201)
      }))

    it.effect("a body with a Content-Encoding is 415 unsupported_media_type, not 400 for its compressed bytes", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("encoded")
        const port = yield* serverPort
        const json = JSON.stringify({ address: AAPL, label: "gzip" })
        const gzipped = Zlib.gzipSync(json)
        const head = (coding: string, length: number) =>
          `POST /v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: application/json\r\nContent-Encoding: ${coding}\r\nContent-Length: ${length}\r\n\r\n`
        const gzip = yield* rawRequest(port, [head("gzip", gzipped.length), gzipped])
        const error = expectError(gzip, 415, "unsupported_media_type")
        expect(error.details).toEqual({ contentEncoding: "gzip", supported: ["identity"] })
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
        // `identity` is no coding at all.
        const identity = yield* rawRequest(port, [head("identity", json.length) + json])
        expect(identity.status).toBe(201)
      }))
  })

  describe("empty bodies", () => {
    it.effect("an empty body declared as a form or multipart is 415, not 500 nor a request left unanswered", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("empty-forms")
        const port = yield* serverPort
        const types = [
          "multipart/form-data",
          "multipart/form-data; boundary=",
          "multipart/form-data; boundary=x",
          "MULTIPART/FORM-DATA; boundary=x",
          "application/x-www-form-urlencoded",
          "text/plain"
        ]
        for (const [method, path] of [["PUT", "/v1/settings"], ["POST", "/v1/wallets"], ["POST", "/v1/exports"]]) {
          for (const type of types) {
            for (const length of ["Content-Length: 0\r\n", ""]) {
              const reply = yield* rawRequest(port, [
                `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
                `Content-Type: ${type}\r\n${length}\r\n`
              ], 5_000)
              expect(reply.closedEarly, `${method} ${path} ${type} ${length}`).toBe(false)
              expectError(reply, 415, "unsupported_media_type")
            }
          }
        }
        // Nothing was made of them (an empty form read as {} would have started an export).
        expect((yield* call("GET", "/v1/exports", { key })).body.exports).toEqual([])
        // Empty JSON is the schema's 400; a DELETE takes no body, whatever its declared type.
        const emptyJson = yield* rawRequest(port, [
          `PUT /v1/settings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: application/json\r\nContent-Length: 0\r\n\r\n`
        ])
        expectError(emptyJson, 400, "invalid_request")
        const del = yield* rawRequest(port, [
          `DELETE /v1/wallets/${AAPL} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
          `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 0\r\n\r\n`
        ])
        expectError(del, 404, "not_found")
      }))
  })

  describe("routing", () => {
    it.effect("a path parameter holds a `;` and may be long: its own 400 or 404, never the list's 200 or a 405", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("params")
        // The router read `;` as the end of the path: `/v1/wallets/;` answered the list.
        expectError(yield* call("GET", "/v1/wallets/;", { key }), 400, "invalid_address")
        expectError(yield* call("PATCH", "/v1/wallets/;x", { key, body: { label: "x" } }), 400, "invalid_address")
        expect((yield* call("GET", "/v1/fx/EUR/2025-05-09;x", { key })).status).toBe(400)
        expect((yield* call("GET", "/v1/fx/EUR/2025-05-09%3Bx", { key })).status).toBe(400)
        // A method the route does not have is 405.
        const post = yield* call("POST", "/v1/wallets/abc", { key, body: {} })
        expect(expectError(post, 405, "method_not_allowed").details.allowed).toEqual([
          "DELETE",
          "GET",
          "HEAD",
          "PATCH"
        ])
        // Past 512 characters a parameter answered 405 listing the very method refused; now its schema's 400.
        for (const length of [512, 513, 4000]) {
          expectError(yield* call("GET", `/v1/wallets/${"a".repeat(length)}`, { key }), 400, "invalid_address")
          expect((yield* call("PATCH", `/v1/events/${"e".repeat(length)}`, { key, body: {} })).status).toBe(400)
        }
        expect((yield* call("GET", `/v1/wallets?x=${";".repeat(3)}`, { key })).status).toBe(200)
      }))

    it.effect("an empty path parameter (a trailing slash on a collection) is 404 not_found, whatever the method", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("empty-param")
        // Before: 400 invalid_address for "", 405, `404 "No export ."`, 400 invalid_date: the item route's answers.
        for (
          const [method, path] of [
            ["GET", "/v1/wallets/"],
            ["POST", "/v1/wallets/"],
            ["PATCH", "/v1/wallets/"],
            ["GET", "/v1/webhooks/"],
            ["DELETE", "/v1/webhooks/"],
            ["GET", "/v1/exports/"],
            ["GET", "/v1/fx/SGD/"],
            ["GET", "/v1/fx//2025-05-09"],
            ["GET", "/v1/settings/"]
          ] as const
        ) {
          const reply = yield* call(method, path, { key, ...(method === "GET" ? {} : { body: {} }) })
          expect(expectError(reply, 404, "not_found").message, `${method} ${path}`).toBe(
            `No route for ${method} ${path}.`
          )
          expect(reply.headers["allow"]).toBeUndefined()
        }
        // Without a key too: the path is not found before it is refused.
        expectError(yield* call("GET", "/v1/wallets/"), 404, "not_found")
        expect((yield* call("GET", "/v1/wallets", { key })).status).toBe(200)
      }))

    it.effect("a wrong method is 405 method_not_allowed with Allow, an unknown path 404", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("methods")
        const put = yield* call("PUT", "/v1/wallets", { key, body: {} })
        expect(expectError(put, 405, "method_not_allowed").details.allowed).toEqual(["GET", "HEAD", "POST"])
        expect(put.headers["allow"]).toBe("GET, HEAD, POST")
        const post = yield* call("POST", `/v1/wallets/${AAPL}/`, { key })
        expectError(post, 404, "not_found")
        const del = yield* call("DELETE", "/v1/settings", { key })
        expect(expectError(del, 405, "method_not_allowed").details.allowed).toEqual(["GET", "HEAD", "PUT"])
        const health = yield* call("POST", "/healthz")
        expect(health.headers["allow"]).toBe("GET, HEAD")
        // The deliveries list is a resource of its own, not a webhook whose id is "deliveries".
        for (const method of ["PATCH", "DELETE"] as const) {
          const deliveries = yield* call(method, "/v1/webhooks/deliveries", { key, body: {} })
          expect(expectError(deliveries, 405, "method_not_allowed").details.allowed).toEqual(["GET", "HEAD"])
          expect(deliveries.headers["allow"]).toBe("GET, HEAD")
        }
        for (const spelling of ["/V1/webhooks/deliveries", "/v1//webhooks/deliveries", "/v1/webhooks/%64eliveries"]) {
          expect((yield* call("GET", spelling, { key })).status, spelling).toBe(200)
          const refused = yield* call("DELETE", spelling, { key })
          expectError(refused, 405, "method_not_allowed")
          expect(refused.headers["allow"], spelling).toBe("GET, HEAD")
        }
        expect((yield* call("GET", "/v1/webhooks/deliveries", { key })).status).toBe(200)
        expectError(yield* call("DELETE", "/v1/webhooks/wh_missing", { key }), 404, "not_found")
        expectError(yield* call("GET", "/v1/nothing-here", { key }), 404, "not_found")
        // A path the router does not take with a method the route has (an empty parameter between two others):
        // 404, not a 405 that allows the very method it refuses.
        const empty = yield* call("GET", "/v1/fx//2025-05-09", { key })
        expectError(empty, 404, "not_found")
        expect(empty.headers["allow"]).toBeUndefined()
      }))
  })

  describe("the Authorization header", () => {
    it.effect("`Bearer` and the key may be separated by several spaces (RFC 6750: 1*SP)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("spaces")
        expect((yield* call("GET", "/v1/settings", { headers: { authorization: `Bearer   ${key}` } })).status).toBe(200)
        expect((yield* call("GET", "/v1/settings", { headers: { authorization: `bearer  ${key}` } })).status).toBe(200)
        expectError(
          yield* call("GET", "/v1/settings", { headers: { authorization: "Bearer   " } }),
          401,
          "unauthorized"
        )
      }))

    it.effect("more than one Authorization header is 401, even when one holds a valid key", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const { key } = yield* newKey("two-headers")
        const send = (...values: Array<string>) =>
          rawRequest(port, [
            `GET /v1/settings HTTP/1.1\r\nHost: x\r\n${values.map((v) => `Authorization: ${v}\r\n`).join("")}` +
            "Connection: close\r\n\r\n"
          ])
        expect((yield* send(`Bearer ${key}`)).status).toBe(200)
        for (const values of [[`Bearer ${key}`, "Bearer sk_live_other"], [`Bearer ${key}`, `Bearer ${key}`]]) {
          const reply = yield* send(...values)
          expect(expectError(reply, 401, "unauthorized").message).toContain("More than one Authorization header")
          expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="scaledger", error="invalid_request"`)
        }
      }))
  })

  describe("docUrl", () => {
    it.effect("docUrl ignores Host and X-Forwarded-Proto without TRUST_PROXY", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/v1/wallets", {
          headers: { host: "evil.example", "x-forwarded-proto": "javascript", "x-forwarded-host": "evil.example" }
        })
        const error = expectError(reply, 401, "unauthorized")
        expect(error.docUrl).not.toContain("evil")
        expect(error.docUrl).not.toContain("javascript")
      }))
  })

  describe("the OpenAPI document describes the API as it behaves", () => {
    it.effect("bearer security on every /v1 operation, limit an integer 1–500, every status declared, summaries", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/v1/openapi.json")).body
        const schemaOf = (ref: any) => ref.$ref ? doc.components.schemas[ref.$ref.split("/").pop()] : ref
        let operations = 0
        for (const [path, item] of Object.entries<any>(doc.paths)) {
          for (const [method, op] of Object.entries<any>(item)) {
            operations++
            const where = `${method.toUpperCase()} ${path}`
            expect(op.security, where).toEqual([{ bearer: [] }])
            expect(typeof op.summary, where).toBe("string")
            for (const status of ["400", "401", "408", "413", "429", "431", "500", "503"]) {
              expect(op.responses[status], `${where} ${status}`).toBeDefined()
            }
            expect(op.responses["415"] !== undefined, where).toBe(op.requestBody !== undefined || method === "delete")
            for (const param of op.parameters.filter((p: any) => p.name === "limit")) {
              const limit = schemaOf(param.schema)
              expect(limit, where).toMatchObject({ type: "integer", minimum: 1 })
              expect(limit.maximum, where).toBeLessThanOrEqual(500)
            }
          }
        }
        expect(operations).toBeGreaterThanOrEqual(13)
        expect(Object.keys(doc.paths["/v1/wallets"].post.responses)).toEqual(expect.arrayContaining(["200", "201"]))
        expect(doc.paths["/v1/events"].get.responses["409"]).toBeDefined()
        for (const tag of doc.tags) expect(typeof tag.description, tag.name).toBe("string")
      }))

    it.effect("405 is declared where a parameter's value can name a sibling route without the method", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/v1/openapi.json")).body
        // PATCH and DELETE /v1/webhooks/{id} with the id "deliveries" reach GET /v1/webhooks/deliveries: 405.
        for (const method of ["patch", "delete"]) {
          const response = doc.paths["/v1/webhooks/{id}"][method].responses["405"]
          expect(response, method).toBeDefined()
          const declared = response.$ref ? doc.components.responses[response.$ref.split("/").pop()] : response
          expect(Object.keys(declared.headers ?? {}), method).toEqual(expect.arrayContaining(["Request-Id", "Allow"]))
          expect(declared.content["application/json"], method).toBeDefined()
        }
        // Nowhere else: no other parameter route has a literal sibling.
        for (const [path, item] of Object.entries<any>(doc.paths)) {
          for (const [method, op] of Object.entries<any>(item)) {
            if (path === "/v1/webhooks/{id}") continue
            expect(op.responses["405"], `${method.toUpperCase()} ${path}`).toBeUndefined()
          }
        }
      }))

    it.effect("a parameter value the document allows is taken, one it refuses is 400 (as a fuzzer reads it)", () =>
      Effect.gen(function*() {
        // "Today" for the dates that must not be in the future.
        yield* TestClock.setTime(Date.parse("2025-05-12T10:00:00Z"))
        const { key } = yield* newKey("documented-forms")
        const doc = (yield* call("GET", "/v1/openapi.json")).body
        const ajv = new Ajv2020({ strict: false })
        ajv.addSchema(doc, "openapi.json")
        const lower = "0x00000000000000000000000000000000000000c3"
        const cases: ReadonlyArray<readonly [path: string, name: string, value: string, allowed: boolean]> = [
          ["/v1/alerts", "severity", "warning", true],
          ["/v1/alerts", "severity", "WARNING", false],
          ["/v1/alerts", "kind", "token-paused", true],
          ["/v1/alerts", "kind", "unlabeled_transfers", false],
          ["/v1/events", "type", "income.multiplier_increase", true],
          ["/v1/events", "type", "foo", false],
          ["/v1/events", "from", "2026-01-05", true],
          ["/v1/events", "from", "2026-1-5", false],
          ["/v1/events", "from", "0000-01-01", false],
          ["/v1/positions", "wallet", lower, true],
          ["/v1/positions", "wallet", "0x12", false],
          ["/v1/estimates/sale", "shares", "0.5", true],
          ["/v1/estimates/sale", "shares", "0", false],
          ["/v1/estimates/sale", "price", "1.000000000000000001", true],
          ["/v1/estimates/sale", "price", "1.0000000000000000001", false],
          ["/v1/fx/{currency}/{date}", "currency", "gBp", true],
          ["/v1/fx/{currency}/{date}", "currency", "HUF", false]
        ]
        for (const [path, name, value, allowed] of cases) {
          const parameters: ReadonlyArray<any> = doc.paths[path].get.parameters
          const index = parameters.findIndex((p) => p.name === name)
          const where = `${path} ${name}=${value}`
          expect(
            ajv.validate(
              { $ref: `openapi.json#/paths/${path.replace(/\//g, "~1")}/get/parameters/${index}/schema` },
              value
            ),
            where
          )
            .toBe(allowed)
          const url = path === "/v1/fx/{currency}/{date}"
            ? `/v1/fx/${value}/2025-05-09`
            : path === "/v1/estimates/sale"
            ? `${path}?symbol=AAPL${name === "shares" ? "" : "&shares=1"}&${name}=${encodeURIComponent(value)}`
            : `${path}?${name}=${encodeURIComponent(value)}`
          const status = (yield* call("GET", url, { key })).status
          if (allowed) expect(status, where).not.toBe(400)
          else expect(status, where).toBe(400)
        }
        // Lengths are counted in characters (code points), as JSON Schema counts them: 200 emoji are a valid label.
        const label = doc.components.schemas.CreateWallet.properties.label
        expect(label.maxLength).toBe(200)
        const emoji = "\u{1F4A5}"
        const created = yield* call("POST", "/v1/wallets", { key, body: { address: lower, label: emoji.repeat(200) } })
        expect(created.status).toBe(201)
        expectError(
          yield* call("PATCH", `/v1/wallets/${lower}`, { key, body: { label: emoji.repeat(201) } }),
          400,
          "invalid_request"
        )
        // The zero address is refused as a wallet to watch (400), so the document's schema refuses it too.
        const zero = `0x${"0".repeat(40)}`
        expect(ajv.validate(doc.components.schemas.CreateWallet, { address: zero })).toBe(false)
        expect(ajv.validate(doc.components.schemas.CreateWallet, { address: lower })).toBe(true)
        expectError(yield* call("POST", "/v1/wallets", { key, body: { address: zero } }), 400, "invalid_address")
        // A webhook URL too: 1,038 characters (2,064 UTF-16 units) are within its 2,048, so the unknown id decides.
        const url = `https://hooks.example.com/${emoji.repeat(1_012)}`
        expect(ajv.validate(doc.components.schemas.UpdateWebhook.properties.url, url)).toBe(true)
        expectError(yield* call("PATCH", "/v1/webhooks/wh_unknown", { key, body: { url } }), 404, "not_found")
        // No body is the defaults; the export's headers are documented.
        const exportOp = doc.paths["/v1/exports"].post
        expect(exportOp.requestBody.required).toBe(false)
        expect(Object.keys(exportOp.responses["200"].headers)).toEqual(
          expect.arrayContaining(["Content-Disposition", "Scaledger-Export-Id", "Cache-Control"])
        )
        expect(Object.keys(doc.paths["/v1/exports/{id}"].get.responses["304"].headers)).toContain("ETag")
      }))
  })

  describe("the OpenAPI document is valid JSON Schema 2020-12", () => {
    it.effect("every schema of /v1/openapi.json compiles with Ajv 2020 (no `$id` names two schemas)", () =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/v1/openapi.json")).body
        // `Schema.Unknown` wrote `"$id": "/schemas/unknown"` into each error's `details`: Ajv refused the document
        // ("reference /schemas/unknown resolves to more than one schema").
        const escape = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1")
        const pointers: Array<string> = []
        const collect = (node: unknown, at: string): void => {
          if (typeof node !== "object" || node === null) return
          for (const [key, value] of Object.entries(node)) {
            if (key === "schema") pointers.push(`${at}/schema`)
            else collect(value, `${at}/${escape(key)}`)
          }
        }
        collect(doc.paths, "/paths")
        collect(doc.components.responses, "/components/responses")
        for (const name of Object.keys(doc.components.schemas)) pointers.push(`/components/schemas/${escape(name)}`)
        expect(pointers.length).toBeGreaterThan(100)
        const ajv = new Ajv2020({ strict: false })
        ajv.addSchema(doc, "openapi.json")
        for (const pointer of pointers) {
          expect(() => ajv.compile({ $ref: `openapi.json#${pointer}` }), pointer).not.toThrow()
        }
      }))
  })

  describe("rejections by Node's HTTP parser carry the envelope and a Request-Id", () => {
    it.effect("a header over 16 KiB is 431 headers_too_large in the envelope", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const reply = yield* rawRequest(port, [
          `GET /v1/wallets HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`
        ])
        expectError(reply, 431, "headers_too_large")
      }))

    it.effect("a duplicate Content-Length is 400 invalid_request in the envelope", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const reply = yield* rawRequest(port, [
          "POST /v1/wallets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
        ])
        expectError(reply, 400, "invalid_request")
      }))

    it.effect("an HTTP/1.1 request without Host is answered as any other (Node's bare 400 before)", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const { key } = yield* newKey("no-host")
        const list = yield* rawRequest(port, [
          `GET /v1/wallets HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`
        ])
        expect(list.status).toBe(200)
        expect(list.body.wallets).toEqual([])
        expect(list.headers["request-id"]).toMatch(/^req_/)
        const anonymous = yield* rawRequest(port, ["GET /v1/wallets HTTP/1.1\r\nConnection: close\r\n\r\n"])
        expectError(anonymous, 401, "unauthorized")
      }))

    it.effect("an Expect other than 100-continue is answered as any request (Node's bare 417 before)", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const { key } = yield* newKey("expect")
        const list = yield* rawRequest(port, [
          `GET /v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: foo\r\n` +
          "Connection: close\r\n\r\n"
        ])
        expect(list.status).toBe(200)
        expect(list.body.wallets).toEqual([])
        expect(list.headers["request-id"]).toMatch(/^req_/)
        const refused = yield* rawRequest(port, [
          "POST /v1/wallets HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Type: application/json\r\n" +
          "Content-Length: 2\r\nConnection: close\r\n\r\n{}"
        ])
        expectError(refused, 401, "unauthorized")
      }))

    it.effect("CONNECT is 400 invalid_request in the envelope, not a connection closed unanswered", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const reply = yield* rawRequest(port, ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"])
        expectError(reply, 400, "invalid_request")
      }))

    it.effect("a bad method is 400 invalid_request in the envelope", () =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const reply = yield* rawRequest(port, ["FO@O /v1/wallets HTTP/1.1\r\nHost: x\r\n\r\n"])
        expectError(reply, 400, "invalid_request")
        const garbage = yield* rawRequest(port, ["\u0001\u0002 not http at all\r\n\r\n"])
        expectError(garbage, 400, "invalid_request")
      }))
  })
})

describe("docUrl origin", () => {
  const socket = { localAddress: "::ffff:10.0.0.5", localPort: 8080 }
  const evil = { host: "evil.example", "x-forwarded-proto": "javascript", "x-forwarded-host": "evil.example" }
  it("PUBLIC_BASE_URL wins", () => {
    expect(
      docOrigin({ publicBaseUrl: Option.some(new URL("https://api.example.com/x")), trustProxy: true }, evil, socket)
    )
      .toBe("https://api.example.com")
  })
  it("without TRUST_PROXY: the listener's own address, whatever the headers say", () => {
    expect(docOrigin({ publicBaseUrl: Option.none(), trustProxy: false }, evil, socket)).toBe("http://10.0.0.5:8080")
    expect(docOrigin({ publicBaseUrl: Option.none(), trustProxy: false }, {}, { localAddress: "::1", localPort: 9 }))
      .toBe("http://[::1]:9")
  })
  it("the REST listener's origin (the admin listener's docUrls): PUBLIC_BASE_URL, else HOST:PORT", () => {
    const none = Option.none<URL>()
    expect(restOrigin({ publicBaseUrl: Option.some(new URL("https://api.example.com/x")), host: "::", port: 1 }))
      .toBe("https://api.example.com")
    expect(restOrigin({ publicBaseUrl: none, host: "0.0.0.0", port: 8080 })).toBe("http://127.0.0.1:8080")
    expect(restOrigin({ publicBaseUrl: none, host: "::", port: 8080 })).toBe("http://[::1]:8080")
    expect(restOrigin({ publicBaseUrl: none, host: "10.0.0.5", port: 9 })).toBe("http://10.0.0.5:9")
    expect(restOrigin({ publicBaseUrl: none, host: "fe80::1", port: 9 })).toBe("http://[fe80::1]:9")
  })
  it("with TRUST_PROXY: forwarded http(s) and a well-formed host only", () => {
    const config = { publicBaseUrl: Option.none<URL>(), trustProxy: true }
    expect(docOrigin(config, evil, socket)).toBe("http://10.0.0.5:8080")
    expect(docOrigin(config, { "x-forwarded-proto": "https", "x-forwarded-host": "api.example.com" }, socket))
      .toBe("https://api.example.com")
    expect(docOrigin(config, { "x-forwarded-proto": "https", host: "a.example/evil?x=" }, socket))
      .toBe("http://10.0.0.5:8080")
  })
})
