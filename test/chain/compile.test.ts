import { describe, expect, it } from "vitest"
import { loadArtifact, storageSlot } from "./artifacts.js"
import { compileContracts } from "./compile.js"

describe("compiled artifacts", () => {
  it("recompiling the sources gives the committed artifacts", () => {
    const fresh = compileContracts()
    expect(Object.keys(fresh).sort()).toEqual(["LegacyStock", "PriceFeed", "Stock"])
    for (const name of ["Stock", "LegacyStock", "PriceFeed"] as const) {
      const committed = loadArtifact(name)
      expect(fresh[name]!.bytecode, `${name} bytecode`).toBe(committed.bytecode)
      expect(fresh[name]!.deployedBytecode, `${name} deployedBytecode`).toBe(committed.deployedBytecode)
      expect(fresh[name]!.abi).toEqual(committed.abi)
      expect(fresh[name]!.storageLayout).toEqual(committed.storageLayout)
    }
  })

  it("the storage layout names the multiplier slots", () => {
    expect(storageSlot("Stock", "_uiMultiplier")).toBe(0n)
    expect(storageSlot("Stock", "_newUIMultiplier")).toBe(1n)
    expect(storageSlot("Stock", "_effectiveAt")).toBe(2n)
    expect(storageSlot("LegacyStock", "_effectiveAt")).toBe(2n)
  })
})
