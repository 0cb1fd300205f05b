import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { bundledContracts, ContractListLive, loadContractList } from "@scaledger/workers/classify/ContractListLive"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "scaledger-contracts-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const GATEWAY_ROUTER = "0x1e324b9316138ca9a73f960213621ad1aaf01b89"

describe("the contract list", () => {
  it("bundles Robinhood Chain's canonical bridge gateways, each saying where it comes from", () => {
    const bundled = bundledContracts()
    expect(bundled.length).toBeGreaterThanOrEqual(2)
    for (const entry of bundled) {
      expect(entry.chainId).toBe(4663)
      expect(entry.kind).toBe("bridge")
      expect(entry.source).toMatch(/docs\.robinhood\.com/)
    }
    const index = Effect.runSync(loadContractList(4663, Option.none()))
    expect(index.get(GATEWAY_ROUTER)?.kind).toBe("bridge")
    // Another chain has none of them.
    expect(Effect.runSync(loadContractList(31337, Option.none())).size).toBe(0)
  })

  it("CONTRACT_LIST (a path) adds entries and overrides the bundled ones by address", () => {
    const path = join(dir, "list.json")
    writeFileSync(
      path,
      JSON.stringify([
        { chainId: 4663, address: GATEWAY_ROUTER.toUpperCase().replace("0X", "0x"), kind: "exchange", name: "Mine" },
        { chainId: 4663, address: "0x00000000000000000000000000000000000000d1", kind: "dex", name: "Router" }
      ])
    )
    const index = Effect.runSync(loadContractList(4663, Option.some(path)))
    expect(index.get(GATEWAY_ROUTER)).toMatchObject({ kind: "exchange", name: "Mine" })
    expect(index.get("0x00000000000000000000000000000000000000d1")?.kind).toBe("dex")
  })

  it("a bad CONTRACT_LIST stops the start with a message naming it", async () => {
    const bad = join(dir, "bad.json")
    writeFileSync(bad, JSON.stringify([{ chainId: 4663, address: "0xnope", kind: "dex", name: "x" }]))
    for (const [spec, pattern] of [[bad, /bad\.json.*address/s], [join(dir, "missing.json"), /could not be read/]]) {
      const exit = await Effect.runPromiseExit(
        Effect.provide(
          ContractListLive.pipe(Layer.build, Effect.scoped),
          Layer.mergeAll(
            ChainConfig.layer({ rpcUrls: [], chainId: 4663 } as any),
            Layer.setConfigProvider(ConfigProvider.fromJson({ CONTRACT_LIST: spec }))
          )
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(JSON.stringify(exit.cause)).toMatch(pattern)
    }
  })
})
