import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import * as Root from "../src/index.js"

const SRC = join(import.meta.dirname, "..", "src")

/** Every module an embedder may import: a folder with an `index.ts` is one module (its index), else each file. */
const modules = (dir: string): Array<string> => {
  const names = readdirSync(dir)
  if (dir !== SRC && names.includes("index.ts")) return [relative(SRC, join(dir, "index"))]
  return names.flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return modules(path)
    if (!name.endsWith(".ts") || (dir === SRC && name === "index.ts")) return []
    return [relative(SRC, path).replace(/\.ts$/, "")]
  })
}

describe("the package root (README: everything is reachable from the root, one namespace per module)", () => {
  it("exports every module as a namespace", () => {
    const index = readFileSync(join(SRC, "index.ts"), "utf8")
    const exported = new Set([...index.matchAll(/export \* as \w+ from "\.\/(.+)\.js"/g)].map((m) => m[1]))
    expect(modules(SRC).filter((module) => !exported.has(module))).toEqual([])
  })

  it("reaches the documented pure code: EDGAR parsing, sale estimates, CSV cells, the chain port", () => {
    expect(typeof Root.Edgar.padCik).toBe("function")
    expect(Root.Edgar.padCik(320193)).toBe("0000320193")
    expect(Root.SaleEstimate).toBeDefined()
    expect(Root.Csv).toBeDefined()
    expect(Root.ChainClient.ChainClient).toBeDefined()
  })
})

describe("the package's exports map", () => {
  it("resolves @scaledger/domain/package.json (its versions of effect and @effect/platform, for embedders)", async () => {
    const { createRequire } = await import("node:module")
    const require = createRequire(import.meta.url)
    const manifest = require("@scaledger/domain/package.json") as { name: string; dependencies: Record<string, string> }
    expect(manifest.name).toBe("@scaledger/domain")
    expect(manifest.dependencies.effect).toMatch(/^\d/)
  })
})
