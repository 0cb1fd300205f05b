import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A local HTTP server speaking EDGAR's paths and JSON formats (both SEC hosts under one base, as `EDGAR_BASE_URL`
 * allows), serving the fixtures in test/fixtures/edgar. It records every request (path, User-Agent, arrival time) and
 * can answer scripted failures first (`failNext`).
 */
export interface EdgarServer {
  readonly baseUrl: string
  readonly requests: Array<{ readonly path: string; readonly userAgent: string | undefined; readonly at: number }>
  /** The next answers for `path`, before the fixture: a status (and optional Retry-After seconds). */
  readonly failNext: (path: string, ...answers: ReadonlyArray<{ status: number; retryAfter?: string }>) => void
  /** Answer `path` with this status from now on (e.g. 500 to simulate an outage). */
  readonly failAlways: (path: string, status: number) => void
}

const fixture = (name: string) => readFileSync(new URL(`../fixtures/edgar/${name}`, import.meta.url), "utf8")

const routes: Record<string, string> = {
  "/files/company_tickers.json": "company_tickers.json",
  "/submissions/CIK0000320193.json": "CIK0000320193.submissions.json",
  "/submissions/CIK0000200406.json": "CIK0000200406.submissions.json",
  "/api/xbrl/companyfacts/CIK0000320193.json": "CIK0000320193.companyfacts.json",
  "/api/xbrl/companyfacts/CIK0000200406.json": "CIK0000200406.companyfacts.json",
  "/api/xbrl/companyfacts/CIK0000884394.json": "CIK0000884394.companyfacts.json"
}

export const edgarServer = Effect.acquireRelease(
  Effect.async<{ server: ReturnType<typeof createServer>; edgar: EdgarServer }>((resume) => {
    const requests: EdgarServer["requests"] = []
    const scripted = new Map<string, Array<{ status: number; retryAfter?: string }>>()
    const always = new Map<string, number>()
    const server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0]!
      requests.push({ path, userAgent: req.headers["user-agent"], at: performance.now() })
      const next = scripted.get(path)?.shift()
      const status = next?.status ?? always.get(path)
      if (status !== undefined) {
        res.writeHead(status, {
          "content-type": "text/html",
          ...(next?.retryAfter === undefined ? {} : { "retry-after": next.retryAfter })
        })
        res.end(status === 429 ? "<html>Request Rate Threshold Exceeded</html>" : "<html>Service Unavailable</html>")
        return
      }
      const file = routes[path]
      if (file === undefined) {
        res.writeHead(404, { "content-type": "application/xml" })
        res.end("<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code></Error>")
        return
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end(fixture(file))
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resume(Effect.succeed({
        server,
        edgar: {
          baseUrl: `http://127.0.0.1:${port}`,
          requests,
          failNext: (path, ...answers) => scripted.set(path, [...(scripted.get(path) ?? []), ...answers]),
          failAlways: (path, status) => always.set(path, status)
        }
      }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ edgar }) => edgar))
