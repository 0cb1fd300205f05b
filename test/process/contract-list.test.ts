import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, runEntry } from "../support/Processes.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-contract-list-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

describe("CONTRACT_LIST at start", () => {
  it("a bad list stops the start with one line naming the list and the fault", async () => {
    const list = Path.join(dir, "list.json")
    Fs.writeFileSync(list, JSON.stringify([{ chainId: 4663, address: "0x12", kind: "dex", name: "x" }]))
    const run = runEntry("main", [], {
      SCALEDGER_DATA_DIR: Path.join(dir, "data"),
      DATABASE_URL: "",
      PORT: String(await freePort()),
      MCP_PORT: String(await freePort()),
      CONTRACT_LIST: list,
      FX_REFRESH: "off"
    })
    expect(await run.exited).toBe(1)
    const lines = run.output().trim().split("\n").filter((line) => line.startsWith("scaledger:"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`CONTRACT_LIST ${list}`)
    expect(lines[0]).toContain("address")
    expect(run.output()).not.toMatch(/\n\s+at /)
  }, 60_000)
})
