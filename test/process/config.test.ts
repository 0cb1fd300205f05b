import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, runEntry } from "../support/Processes.js"

const tmpDirs: Array<string> = []
afterAll(() => {
  for (const dir of tmpDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const start = async (env: Record<string, string>) => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-config-"))
  tmpDirs.push(dataDir)
  return runEntry("main", ["--workers"], {
    SCALEDGER_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    DATABASE_URL: "",
    FX_REFRESH: "false",
    ...env
  })
}

// Each case starts a process on a fresh embedded database; the checks themselves are unit-tested in
// packages/domain/test/ConfigValues.test.ts and packages/workers/test/ledger/LedgerBuilderConfig.test.ts.
describe("settings checked at startup", () => {
  it.each([
    [{ LEDGER_POLL_MS: "soon" }, "LEDGER_POLL_MS must be a whole number of millis"],
    [{ WEBHOOK_CONCURRENCY: "-3" }, "WEBHOOK_CONCURRENCY must be a positive integer"]
  ])("%o stops the start with one line naming the variable", async (env, message) => {
    const server = await start(env)
    const code = await server.exited
    expect(code, server.output()).toBe(1)
    expect(server.output()).toContain("scaledger: configuration error")
    expect(server.output()).toContain(message)
  }, 60_000)
})

describe("arguments", () => {
  it("an argument other than --api, --mcp, --workers is a usage error (exit code 2), nothing started", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-config-"))
    tmpDirs.push(dataDir)
    const server = runEntry("main", ["--api", "--port", "9090"], {
      SCALEDGER_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DATABASE_URL: ""
    })
    const code = await server.exited
    expect(server.output().trim()).toBe(
      "scaledger: unknown argument \"--port\": the arguments pick the parts to run (--api, --mcp, --workers; none: all" +
        " of them); settings are environment variables, e.g. PORT=9090"
    )
    expect(code).toBe(2)
    expect(Fs.readdirSync(dataDir)).toEqual([])
  }, 60_000)
})
