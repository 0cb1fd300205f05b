import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, ready, runEntry, waitFor } from "../support/Processes.js"

interface Received {
  readonly path: string
  readonly contentType: string
  readonly body: any
}

/** A minimal OTLP/HTTP collector: accepts `POST /v1/traces` with a JSON body, answers 200 `{}`. */
const startCollector = async () => {
  const received: Array<Received> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      if (req.method === "POST" && req.url === "/v1/traces") {
        received.push({ path: req.url, contentType: String(req.headers["content-type"]), body: JSON.parse(text) })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      } else {
        res.writeHead(404).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port
  return { received, url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) }
}

const spanNames = (received: ReadonlyArray<Received>): Array<string> =>
  received.flatMap((r) =>
    (r.body.resourceSpans ?? []).flatMap((rs: any) =>
      (rs.scopeSpans ?? []).flatMap((ss: any) => (ss.spans ?? []).map((span: any) => String(span.name)))
    )
  )

const serviceNames = (received: ReadonlyArray<Received>): Array<string> =>
  received.flatMap((r) =>
    (r.body.resourceSpans ?? []).flatMap((rs: any) =>
      (rs.resource?.attributes ?? []).filter((a: any) => a.key === "service.name").map((a: any) => a.value?.stringValue)
    )
  )

const tmpDirs: Array<string> = []
afterAll(() => {
  for (const dir of tmpDirs) Fs.rmSync(dir, { recursive: true, force: true })
})
const tmpDataDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-otel-"))
  tmpDirs.push(dir)
  return dir
}

describe("OpenTelemetry export", () => {
  it("sends the spans of a request to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP", async () => {
    const collector = await startCollector()
    const port = await freePort()
    const server = runEntry("main", ["--api"], {
      SCALEDGER_DATA_DIR: tmpDataDir(),
      PORT: String(port),
      MCP_PORT: String(await freePort()),
      DATABASE_URL: "",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "scaledger-test"
    })
    try {
      await ready(port)
      const key = /API key (sk_live_[0-9A-Za-z]{32})/.exec(server.output())![1]!
      const response = await fetch(`http://127.0.0.1:${port}/v1/settings`, {
        headers: { authorization: `Bearer ${key}` }
      })
      expect(response.status).toBe(200)
      // The exporter sends in batches every few seconds; the repository's span proves the request was traced.
      const names = await waitFor("the SettingsRepo.get span", async () => {
        const seen = spanNames(collector.received)
        return seen.includes("SettingsRepo.get") ? seen : undefined
      }, 30_000)
      expect(names).toContain("SettingsRepo.get")
      expect(names.some((name) => name.startsWith("http.server"))).toBe(true)
      expect(collector.received.every((r) => r.contentType.startsWith("application/json"))).toBe(true)
      expect(serviceNames(collector.received)).toContain("scaledger-test")
    } finally {
      server.child.kill("SIGTERM")
      await server.exited
      await collector.close()
    }
  }, 90_000)

  it("refuses to start with an endpoint that is not a URL, naming the variable", async () => {
    const server = runEntry("main", ["--api"], {
      SCALEDGER_DATA_DIR: tmpDataDir(),
      PORT: String(await freePort()),
      DATABASE_URL: "",
      OTEL_EXPORTER_OTLP_ENDPOINT: "not a url"
    })
    expect(await server.exited).toBe(1)
    expect(server.output()).toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
  }, 60_000)
})
