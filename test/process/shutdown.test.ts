import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, ready, runEntry } from "../support/Processes.js"

const tmpDirs: Array<string> = []
afterAll(() => {
  for (const dir of tmpDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

interface Outcome {
  readonly kind: "answer" | "refused" | "reset" | "timeout"
  readonly status?: number
  readonly headers?: Http.IncomingHttpHeaders
  readonly body?: string
}

const get = (port: number, path: string, agent?: Http.Agent) =>
  new Promise<Outcome>((resolve) => {
    const request = Http.get({ host: "127.0.0.1", port, path, agent: agent ?? false, timeout: 5_000 }, (response) => {
      let body = ""
      response.on("data", (chunk) => (body += chunk))
      response.on(
        "end",
        () => resolve({ kind: "answer", status: response.statusCode!, headers: response.headers, body })
      )
    })
    request.on("timeout", () => {
      request.destroy()
      resolve({ kind: "timeout" })
    })
    request.on(
      "error",
      (error: NodeJS.ErrnoException) => resolve({ kind: error.code === "ECONNREFUSED" ? "refused" : "reset" })
    )
  })

describe("shutdown", () => {
  it(
    "GET /healthz right after SIGTERM is answered at once (503, Connection: close) or refused, never left hanging",
    async () => {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-shutdown-"))
      tmpDirs.push(dataDir)
      const port = await freePort()
      const server = runEntry("main", ["--api"], { SCALEDGER_DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: "" })
      try {
        await ready(port).catch(async () => ready(port))
        // A kept-alive connection, idle when the signal comes, and an upload in flight that keeps the server busy.
        const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
        expect((await get(port, "/healthz", agent)).status).toBe(200)
        const upload = Net.connect(port, "127.0.0.1")
        await new Promise((resolve) => upload.on("connect", resolve))
        upload.write(
          "POST /v1/wallets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
            "1\r\n{\r\n"
        )
        await new Promise((resolve) => setTimeout(resolve, 300))

        server.child.kill("SIGTERM")
        // Let the signal land (a request that reaches the server before it would rightly be served).
        await new Promise((resolve) => setTimeout(resolve, 500))
        const started = Date.now()
        const [fresh, kept] = await Promise.all([get(port, "/healthz"), get(port, "/healthz", agent)])
        const elapsed = Date.now() - started
        for (const outcome of [fresh, kept]) {
          expect(outcome.kind, JSON.stringify(outcome)).not.toBe("timeout")
          if (outcome.kind === "answer") {
            expect(outcome.status).toBe(503)
            expect(outcome.headers!["connection"]).toBe("close")
            const body = JSON.parse(outcome.body!)
            expect(body.error.code).toBe("service_unavailable")
            expect(outcome.headers!["request-id"]).toBe(body.error.requestId)
          }
        }
        expect(elapsed).toBeLessThan(4_000)
        upload.end("0\r\n\r\n")
        upload.destroy()
        agent.destroy()
        expect(await server.exited).toBe(0)
      } finally {
        server.child.kill("SIGKILL")
      }
    },
    150_000
  )
})
