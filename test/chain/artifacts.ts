import { readFileSync } from "node:fs"
import type { Abi, Hex } from "viem"

export interface StorageSlot {
  readonly label: string
  readonly slot: string
  readonly offset: number
  readonly type: string
  readonly contract: string
  readonly astId: number
}

export interface Artifact {
  readonly contractName: string
  readonly sourceName: string
  readonly compiler: { readonly version: string; readonly evmVersion: string; readonly optimizerRuns: number }
  readonly abi: Abi
  readonly bytecode: Hex
  readonly deployedBytecode: Hex
  readonly storageLayout: { readonly storage: ReadonlyArray<StorageSlot>; readonly types: unknown }
}

export type ContractName = "Stock" | "LegacyStock" | "PriceFeed"

const cache = new Map<ContractName, Artifact>()

/** Reads a committed artifact from `test/chain/artifacts/` (written by `compile.ts`). */
export const loadArtifact = (name: ContractName): Artifact => {
  let artifact = cache.get(name)
  if (artifact === undefined) {
    artifact = JSON.parse(readFileSync(new URL(`./artifacts/${name}.json`, import.meta.url), "utf8")) as Artifact
    cache.set(name, artifact)
  }
  return artifact
}

/** The storage slot of a state variable, from the compiler's storageLayout. */
export const storageSlot = (name: ContractName, label: string): bigint => {
  const entry = loadArtifact(name).storageLayout.storage.find((s) => s.label === label)
  if (entry === undefined) throw new Error(`${name} has no storage variable ${label}`)
  return BigInt(entry.slot)
}
