import { spawn } from "node:child_process"
import { once } from "node:events"
import * as Net from "node:net"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { freePort, ROOT } from "../support/Processes.js"

// `npm run demo` while something (`npm start`, say) already listens on the port: the other service would answer the
// demo's readiness checks. The demo says so in one line and exits 1, with nothing started and no stack trace.
describe("npm run demo", () => {
  it.each(["--port", "--mcp-port"] as const)("a %s already in use is a one-line error, exit code 1", async (option) => {
    const port = await freePort()
    const busy = option === "--port" ? port : port + 1
    const other = Net.createServer((socket) => socket.end())
    other.listen(busy, "127.0.0.1")
    await once(other, "listening")
    try {
      const demo = spawn(Path.join(ROOT, "node_modules/.bin/tsx"), [
        Path.join(ROOT, "demo/main.ts"),
        "--port",
        String(port)
      ], {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      demo.stderr.on("data", (chunk) => (stderr += chunk))
      demo.stdout.resume()
      const [code] = await once(demo, "exit")
      expect(stderr.trim()).toBe(`demo: port ${busy} is in use; choose another with ${option}`)
      expect(code).toBe(1)
    } finally {
      other.close()
    }
  }, 120_000)
})
