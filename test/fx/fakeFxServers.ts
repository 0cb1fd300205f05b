/**
 * Fake ECB and Frankfurter servers for tests: real HTTP servers on free loopback ports, serving the real bundled
 * ECB history (`packages/workers/assets/ecb/eurofxref-hist.csv`) in each service's own formats. The CSV is read
 * here with a few lines of code of its own (not the workers' parser), keeping the numbers exactly as written.
 *
 * ECB (`ecbBaseUrl` = `<origin>/stats/eurofxref`): `eurofxref-daily.xml` (single-quoted attributes, as the ECB
 * writes it), `eurofxref-hist-90d.xml` and `eurofxref-hist.xml` (double-quoted), `eurofxref-hist.zip` (the CSV).
 * Frankfurter (`<origin>/v1/...`, `base=EUR` only): `latest`, `{date}` (latest publication on or before it),
 * `{start}..{end}` and `{start}..` (starting at the publication on or before `start`, as Frankfurter does), 404
 * `{"message":"not found"}` when nothing matches.
 *
 * Both serve as if today were `today` (default 2025-05-09, the last day of the history): nothing newer is shown.
 * `failNext` queues failures, one per request, before normal service resumes; `requests` records every path.
 */
import type { Duration } from "effect"
import { Clock, Effect, type Scope } from "effect"
import { strToU8, zipSync } from "fflate"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export const bundledCsvPath = new URL("../../packages/workers/assets/ecb/eurofxref-hist.csv", import.meta.url)

export interface CsvDay {
  readonly date: string
  /** Currency → rate exactly as written in the CSV; `N/A` cells left out. */
  readonly rates: ReadonlyArray<readonly [string, string]>
}

export interface BundledCsv {
  readonly text: string
  readonly header: string
  /** Raw data lines, newest first as in the file. */
  readonly lines: ReadonlyArray<string>
  /** Newest first. */
  readonly days: ReadonlyArray<CsvDay>
}

let cached: BundledCsv | undefined

export const bundledCsv = (): BundledCsv => {
  if (cached !== undefined) return cached
  const text = readFileSync(bundledCsvPath, "utf8")
  const [header, ...lines] = text.split("\n").filter((l) => l !== "")
  const codes = header!.split(",")
  const days = lines.map((line) => {
    const cells = line.split(",")
    const rates: Array<readonly [string, string]> = []
    for (let i = 1; i < codes.length; i++) {
      if (codes[i] !== "" && cells[i] !== "N/A") rates.push([codes[i]!, cells[i]!])
    }
    return { date: cells[0]!, rates }
  })
  cached = { text, header: header!, lines, days }
  return cached
}

export type FakeFailure =
  | { readonly kind: "status"; readonly status: number; readonly retryAfter?: string; readonly body?: string }
  /** 200 with a body cut in half (XML, JSON) or garbage (zip). */
  | { readonly kind: "malformed" }
  /** 200 with an HTML error page instead of the data, as proxies and CDNs do. */
  | { readonly kind: "html" }
  /** Never answers. */
  | { readonly kind: "hang" }
  /** Closes the connection without answering. */
  | { readonly kind: "reset" }

export const status500: FakeFailure = { kind: "status", status: 500 }
export const rateLimited = (retryAfterSeconds: number): FakeFailure => ({
  kind: "status",
  status: 429,
  retryAfter: String(retryAfterSeconds),
  body: "{\"message\":\"too many requests\"}"
})

export interface FakeServer {
  readonly origin: string
  /** What a provider is given as `FX_BASE_URL`. */
  readonly baseUrl: string
  /** Every request path (with query), in order. */
  readonly requests: Array<string>
  /** Requests whose path contains `fragment`. */
  readonly count: (fragment?: string) => number
  readonly failNext: (...failures: ReadonlyArray<FakeFailure>) => void
  readonly setToday: (date: string) => void
  /** ECB only: how many calendar days back `eurofxref-hist-90d.xml` reaches (default 90). */
  readonly setWindowDays: (days: number) => void
}

interface Reply {
  readonly status: number
  readonly contentType: string
  readonly body: string | Uint8Array
}

type Handler = (path: string, query: URLSearchParams, state: State) => Reply

interface State {
  today: string
  windowDays: number
}

const minusDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10)

const visible = (state: State): ReadonlyArray<CsvDay> => bundledCsv().days.filter((d) => d.date <= state.today)

const xmlDocument = (days: ReadonlyArray<CsvDay>, quote: "'" | "\""): string => {
  const q = quote
  const cubes = days.map((d) =>
    `\t\t<Cube time=${q}${d.date}${q}>\n${
      d.rates.map(([c, r]) => `\t\t\t<Cube currency=${q}${c}${q} rate=${q}${r}${q}/>`).join("\n")
    }\n\t\t</Cube>`
  )
  return `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
${cubes.join("\n")}
\t</Cube>
</gesmes:Envelope>
`
}

const zipCache = new Map<string, Uint8Array>()

const histZip = (state: State): Uint8Array => {
  const hit = zipCache.get(state.today)
  if (hit !== undefined) return hit
  const csv = bundledCsv()
  const lines = csv.lines.filter((l) => l.slice(0, 10) <= state.today)
  const zip = zipSync({ "eurofxref-hist.csv": strToU8(`${csv.header}\n${lines.join("\n")}\n`) }, { level: 1 })
  zipCache.set(state.today, zip)
  return zip
}

const notFoundHtml: Reply = { status: 404, contentType: "text/html", body: "<html><body>Not found</body></html>" }

const ecbHandler: Handler = (path, _query, state) => {
  const prefix = "/stats/eurofxref/"
  if (!path.startsWith(prefix)) return notFoundHtml
  const xml = (body: string): Reply => ({ status: 200, contentType: "text/xml", body })
  switch (path.slice(prefix.length)) {
    case "eurofxref-daily.xml":
      return xml(xmlDocument(visible(state).slice(0, 1), "'"))
    case "eurofxref-hist-90d.xml": {
      const from = minusDays(state.today, state.windowDays)
      return xml(xmlDocument(visible(state).filter((d) => d.date > from), "\""))
    }
    case "eurofxref-hist.xml":
      return xml(xmlDocument(visible(state), "\""))
    case "eurofxref-hist.zip":
      return { status: 200, contentType: "application/zip", body: histZip(state) }
    default:
      return notFoundHtml
  }
}

const json = (status: number, body: string): Reply => ({ status, contentType: "application/json", body })
const notFoundJson = json(404, "{\"message\":\"not found\"}")

const ratesJson = (day: CsvDay): string =>
  `{${[...day.rates].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, r]) => `"${c}":${r}`).join(",")}}`

const isDate = (s: string | undefined): s is string => s !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(s)

const frankfurterHandler: Handler = (path, query, state) => {
  if (!path.startsWith("/v1/")) return notFoundHtml
  const m = /^\/v1\/(latest|\d{4}-\d{2}-\d{2})(?:(\.\.)(\d{4}-\d{2}-\d{2})?)?$/.exec(path)
  if (m === null) return notFoundJson
  if ((query.get("base") ?? "EUR") !== "EUR") return json(422, "{\"message\":\"the fake serves base=EUR only\"}")
  const days = visible(state)
  if (m[2] === undefined) {
    const date = m[1] === "latest" ? state.today : m[1]!
    const day = days.find((d) => d.date <= date)
    return day === undefined
      ? notFoundJson
      : json(200, `{"amount":1.0,"base":"EUR","date":"${day.date}","rates":${ratesJson(day)}}`)
  }
  const start = m[1]!
  if (!isDate(start)) return notFoundJson
  const end = m[3] ?? state.today
  if (start > state.today) return notFoundJson
  const nearest = days.find((d) => d.date <= start)?.date ?? start
  const inRange = days.filter((d) => d.date >= nearest && d.date <= end).reverse()
  if (inRange.length === 0) return notFoundJson
  const rates = inRange.map((d) => `"${d.date}":${ratesJson(d)}`).join(",")
  return json(
    200,
    `{"amount":1.0,"base":"EUR","start_date":"${inRange[0]!.date}","end_date":"${
      inRange[inRange.length - 1]!.date
    }","rates":{${rates}}}`
  )
}

const malformedBody = (reply: Reply): string | Uint8Array =>
  typeof reply.body === "string"
    ? reply.body.slice(0, Math.floor(reply.body.length / 2))
    : strToU8("PK\u0003\u0004 this is not a zip archive")

const startServer = (handler: Handler, basePath: string): Effect.Effect<FakeServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ server: Server; fake: FakeServer }>((resume) => {
      const requests: Array<string> = []
      const failures: Array<FakeFailure> = []
      const state: State = { today: "2025-05-09", windowDays: 90 }
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        const url = new URL(req.url ?? "/", "http://fake")
        requests.push(`${url.pathname}${url.search}`)
        const failure = failures.shift()
        if (failure?.kind === "hang") return
        if (failure?.kind === "reset") {
          req.socket.destroy()
          return
        }
        if (failure?.kind === "status") {
          res.writeHead(failure.status, {
            "content-type": "text/html",
            ...(failure.retryAfter === undefined ? {} : { "retry-after": failure.retryAfter })
          })
          res.end(failure.body ?? `<html><body>Error ${failure.status}</body></html>`)
          return
        }
        if (failure?.kind === "html") {
          res.writeHead(200, { "content-type": "text/html" })
          res.end("<html><body>Please enable JavaScript</body></html>")
          return
        }
        const reply = handler(url.pathname, url.searchParams, state)
        const body = failure?.kind === "malformed" && reply.status === 200 ? malformedBody(reply) : reply.body
        res.writeHead(reply.status, { "content-type": reply.contentType })
        res.end(body)
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        const origin = `http://127.0.0.1:${port}`
        resume(Effect.succeed({
          server,
          fake: {
            origin,
            baseUrl: `${origin}${basePath}`,
            requests,
            count: (fragment = "") => requests.filter((r) => r.includes(fragment)).length,
            failNext: (...more) => {
              for (const failure of more) failures.push(failure)
            },
            setToday: (date) => void (state.today = date),
            setWindowDays: (days) => void (state.windowDays = days)
          }
        }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ fake }) => fake))

export const startFakeEcb = (): Effect.Effect<FakeServer, never, Scope.Scope> =>
  startServer(ecbHandler, "/stats/eurofxref")

export const startFakeFrankfurter = (): Effect.Effect<FakeServer, never, Scope.Scope> =>
  startServer(frankfurterHandler, "")

/** A clock that reads `isoInstant` when created and runs on from there in real time (real sleeps). */
export const clockAt = (isoInstant: string): Clock.Clock => {
  const live = Clock.make()
  const offset = Date.parse(isoInstant) - live.unsafeCurrentTimeMillis()
  const millis = () => live.unsafeCurrentTimeMillis() + offset
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: millis,
    currentTimeMillis: Effect.sync(millis),
    unsafeCurrentTimeNanos: () => BigInt(millis()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
    sleep: (duration: Duration.Duration) => live.sleep(duration)
  }
}
