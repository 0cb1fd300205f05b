/** What the MCP scripts share: Node 22 tools kept in tools/<name>, and a throwaway MCP server to point them at. */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { freePort, ROOT, runEntry, waitFor } from "../test/support/Processes.js"

/** The Node 22 binary and a tool's bin in tools/<dir>, installed from its lockfile when missing. */
export const node22Tool = (dir: string, name: string) => {
  const toolsDir = Path.join(ROOT, "tools", dir)
  const bin = (file: string) => Path.join(toolsDir, "node_modules/.bin", file)
  if (!existsSync(bin(name)) || !existsSync(bin("node"))) {
    console.log(`Installing tools/${dir} (with Node 22) …`)
    execFileSync("npm", ["ci", "--prefix", toolsDir, "--no-audit", "--no-fund"], { stdio: "inherit" })
  }
  return { node: bin("node"), tool: bin(name) }
}

/** Runs `use` against `npm start -- --mcp` on a fresh embedded database, then stops the server. */
export const withMcpServer = async <A>(use: (url: string) => Promise<A>): Promise<A> => {
  const dataDir = mkdtempSync(Path.join(tmpdir(), "scaledger-mcp-"))
  const port = await freePort()
  const server = runEntry("main", ["--mcp"], {
    SCALEDGER_DATA_DIR: dataDir,
    DATABASE_URL: "",
    MCP_PORT: String(port),
    HOST: "127.0.0.1",
    FX_REFRESH: "off"
  })
  try {
    const url = `http://localhost:${port}/mcp`
    await waitFor(`the MCP server on port ${port}`, async () => {
      const response = await fetch(url.replace("localhost", "127.0.0.1"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
      })
      return response.status === 200 ? true : undefined
    }, 120_000)
    return await use(url)
  } finally {
    server.child.kill("SIGTERM")
    await server.exited
    rmSync(dataDir, { recursive: true, force: true })
  }
}
