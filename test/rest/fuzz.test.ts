/**
 * A bounded, deterministic fuzz of the REST API derived from the OpenAPI document the server itself serves: for every
 * operation, requests with valid-looking and hostile path, query and body values (control characters, NUL, huge and
 * deep values, wrong types, out-of-range dates and cursors, odd methods, content types and headers). Every answer
 * must be below 500, carry a `Request-Id`, and, when it is an error, the one envelope with the same request id.
 */
import { describe, expect, layer } from "@effect/vitest"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { loadBundledHistory } from "@scaledger/workers/fx/BundledHistory"
import { Effect } from "effect"
import * as Http from "node:http"
import { edgeServer, serverPort } from "../support/EdgeHarness.js"
import { newKey } from "../support/RestHarness.js"

const REQUESTS = 2500
const SEED = 0x5ca1ed

/** mulberry32: a small deterministic PRNG, so a failure names a seed and request number that reproduce it. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const AAPL = "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url")

const hostileStrings = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\u0001\u0002\u001f",
  "\u007f\u0085\u009f",
  "\t\r\n",
  "x".repeat(10_000),
  "😀🚀 ünïcödé",
  "\ud800",
  "' OR 1=1 --",
  "%00",
  "%",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "-1",
  "0",
  "1e309",
  "NaN",
  "9".repeat(40),
  "0000-01-01",
  "9999-12-31",
  "10000-01-01",
  "2025-02-30",
  "2025-13-01",
  "1999-01-04",
  "2026-01-01T00:00:00Z",
  AAPL,
  AAPL.toLowerCase(),
  "0xAF3D76f1834A1d425780943C99Ea8A608f8a93f9",
  "0x" + "0".repeat(40),
  "0x" + "g".repeat(40),
  "AAPL",
  "aapl",
  "USD",
  "sgd",
  "HUF",
  "US",
  "SG",
  "DE",
  "true",
  "false",
  "self",
  "income.multiplier_increase",
  b64("wallets:1"),
  b64("wallets:" + "9".repeat(30)),
  b64("wallets:9223372036854775808"),
  b64("events:" + "9".repeat(30)),
  b64("events:-5"),
  "===",
  "A".repeat(300)
]

const hostileJsonValues: ReadonlyArray<unknown> = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  Number.MAX_SAFE_INTEGER,
  [],
  {},
  [1, 2, 3],
  { nested: { deeper: [1, { a: "b" }] } },
  ...hostileStrings
]

interface Operation {
  readonly method: string
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly query: ReadonlyArray<{ name: string; schema: any }>
  readonly bodyProperties: ReadonlyArray<string> | undefined
}

const operationsOf = (doc: any): ReadonlyArray<Operation> => {
  const ops: Array<Operation> = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const params: Array<any> = op.parameters ?? []
      let body: ReadonlyArray<string> | undefined = undefined
      const schema = op.requestBody?.content?.["application/json"]?.schema
      if (schema !== undefined) {
        const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema
        body = Object.keys(resolved?.properties ?? {})
      }
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query: params.filter((p) => p.in === "query").map((p) => ({ name: p.name, schema: p.schema })),
        bodyProperties: body
      })
    }
  }
  return ops
}

interface Sent {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string | undefined
}

interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly text: string
}

const send = (agent: Http.Agent, port: number, request: Sent) =>
  new Promise<Answer>((resolve, reject) => {
    const req = Http.request(
      { host: "127.0.0.1", port, method: request.method, path: request.path, headers: request.headers, agent },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c) => chunks.push(c))
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      }
    )
    req.setTimeout(20_000, () =>
      req.destroy(new Error("timeout")))
    req.on("error", reject)
    if (request.body !== undefined) {
      req.end(request.body)
    } else req.end()
  })

/** Percent-encoding that also takes lone surrogates (sent as the bytes of their UTF-8-like form). */
const encodeLoosely = (value: string) => {
  try {
    return encodeURIComponent(value)
  } catch {
    return "%ED%A0%80"
  }
}

/** One request: mostly well-formed with one hostile part, sometimes hostile throughout. */
const generate = (random: () => number, ops: ReadonlyArray<Operation>, key: string): Sent => {
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  const chance = (p: number) => random() < p
  const op = pick(ops)
  let path = op.path
  for (const name of op.pathParams) {
    const value = chance(0.5) ? pick([AAPL, "GBP", "2025-05-09", "USD"]) : pick(hostileStrings)
    path = path.replace(`{${name}}`, encodeLoosely(value).slice(0, 4000))
  }
  const query = new URLSearchParams()
  for (const param of op.query) {
    if (chance(0.5)) continue
    query.append(
      param.name,
      chance(0.3) ? String(Math.floor(random() * 700) - 100) : pick(hostileStrings).slice(0, 3000)
    )
  }
  if (chance(0.1)) query.append(pick(["unknown", "limit", "cursor", "x\u0000"]), pick(hostileStrings).slice(0, 100))
  let method = op.method
  if (chance(0.08)) method = pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"])
  if (chance(0.04)) path = pick(["/v1", "/v1/", "/v1/wallets/", "/nothing", "/v1/openapi.json", "/docs/errors", "//"])
  const headers: Record<string, string> = {}
  if (!chance(0.07)) {
    headers["authorization"] = chance(0.95)
      ? `Bearer ${key}`
      : pick(["Bearer ", "Basic x", `Bearer ${key}x`, "bearer a b"])
  }
  if (chance(0.05)) headers["accept"] = pick(["text/html", "*/*", "application/xml", "\u00ff"])
  if (chance(0.03)) headers["x-forwarded-proto"] = "javascript"
  let body: string | undefined = undefined
  if (op.bodyProperties !== undefined || chance(0.05)) {
    const props = op.bodyProperties ?? ["address"]
    const roll = random()
    if (roll < 0.55) {
      const object: Record<string, unknown> = {}
      for (const prop of props) {
        if (chance(0.7)) object[prop] = pick(hostileJsonValues)
      }
      if (chance(0.1)) object[pick(["privateKey", "__proto__", "constructor", "x"])] = 1
      body = JSON.stringify(object)
    } else if (roll < 0.65) body = JSON.stringify(pick(hostileJsonValues))
    else if (roll < 0.72) body = "[".repeat(3000) + "]".repeat(3000)
    else if (roll < 0.78) body = "{\"a\":".repeat(50) + "1" + "}".repeat(50)
    else if (roll < 0.85) {
      body = pick(["{", "{\"address\":", "nul\u0000l", "\"\\u0000\"", "{\"label\":\"\\ud800\"}", ""])
    } else if (roll < 0.9) body = JSON.stringify({ address: AAPL, label: "x".repeat(1024 * 1024) })
    else body = JSON.stringify({ address: AAPL, label: "fuzz" })
    headers["content-type"] = chance(0.85)
      ? "application/json"
      : pick([
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/plain",
        "application/json; charset=latin1"
      ])
  }
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body))
  const search = query.toString()
  return { method, path: path + (search === "" ? "" : `?${search}`), headers, body }
}

const problemsOf = (sent: Sent, answer: Answer): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const requestId = answer.headers["request-id"]
  if (answer.status >= 500) problems.push(`status ${answer.status}`)
  if (typeof requestId !== "string" || !/^req_[0-9A-Za-z]{20}$/.test(requestId)) problems.push("no Request-Id")
  if (answer.status >= 400 && sent.method !== "HEAD") {
    let body: any
    try {
      body = JSON.parse(answer.text)
    } catch {
      problems.push(`error body is not JSON: ${answer.text.slice(0, 80)}`)
      return problems
    }
    const error = body?.error
    if (
      Object.keys(body ?? {}).join() !== "error" || typeof error?.code !== "string" ||
      typeof error?.message !== "string" || typeof error?.docUrl !== "string" || error?.requestId !== requestId
    ) problems.push(`not the envelope: ${answer.text.slice(0, 120)}`)
    else if (!/^http:\/\/127\.0\.0\.1:\d+\/docs\/errors#[a-z_]+$/.test(error.docUrl)) {
      problems.push(`docUrl ${error.docUrl}`)
    }
  }
  return problems
}

layer(edgeServer(TestDatabase.postgres), { timeout: 180_000 })("fuzz from the served OpenAPI document", (it) => {
  describe("bounded and deterministic", () => {
    it.effect(
      `${REQUESTS} requests: no 5xx, every answer with a Request-Id, every error in the envelope`,
      () =>
        Effect.gen(function*() {
          const history = yield* Effect.orDie(loadBundledHistory())
          yield* Effect.flatMap(FxRates, (fx) => fx.insertMissing(history.source, history.days.slice(-400))).pipe(
            Effect.provide(FxRates.Default),
            Effect.orDie
          )
          const { key } = yield* newKey("fuzzer")
          const port = yield* serverPort
          const agent = new Http.Agent({ keepAlive: false, maxSockets: 4 })
          const doc = yield* Effect.promise(() =>
            send(agent, port, { method: "GET", path: "/v1/openapi.json", headers: {} }).then((a) => JSON.parse(a.text))
          )
          const ops = operationsOf(doc)
          expect(ops.length).toBeGreaterThanOrEqual(13)
          const random = prng(SEED)
          const requests = Array.from({ length: REQUESTS }, () => generate(random, ops, key))
          const failures: Array<string> = []
          const statuses = new Map<number, number>()
          yield* Effect.promise(async () => {
            let next = 0
            const worker = async () => {
              while (next < requests.length) {
                const n = next++
                const sent = requests[n]!
                const answer = await send(agent, port, sent).catch((error: unknown) => ({
                  status: 0,
                  headers: {},
                  text: String(error)
                }))
                statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
                const problems = answer.status === 0 ? [`no answer: ${answer.text}`] : problemsOf(sent, answer)
                if (problems.length > 0 && failures.length < 20) {
                  failures.push(
                    `#${n} ${sent.method} ${sent.path.slice(0, 120)} ${
                      JSON.stringify(sent.headers).slice(0, 200)
                    } body=${(sent.body ?? "").length} → ${answer.status}: ${problems.join("; ")}`
                  )
                }
              }
            }
            await Promise.all([worker(), worker(), worker(), worker()])
            agent.destroy()
          })
          console.log(`fuzz: ${REQUESTS} requests, seed ${SEED}, statuses`, Object.fromEntries(statuses))
          expect(failures, failures.join("\n")).toEqual([])
          // The fuzz reached past the edge: successes and typed refusals of several kinds.
          expect(statuses.get(200) ?? 0).toBeGreaterThan(50)
          for (const status of [400, 401, 404, 405, 413, 415]) {
            expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0)
          }
        }),
      150_000
    )
  })
})
