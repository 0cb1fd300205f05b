/**
 * Compiles the test contracts with npm `solc` and writes `test/chain/artifacts/<Name>.json`.
 * Run: `npx tsx test/chain/compile.ts` (artifacts are committed; tests never compile at run time, except the
 * test that checks a fresh compile still matches them).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import solc from "solc"
import type { Artifact } from "./artifacts.js"

const here = dirname(fileURLToPath(import.meta.url))

/** Cancun: what Arbitrum Orbit chains (Robinhood Chain) execute; the EDR node runs a later hardfork. */
export const EVM_VERSION = "cancun"
export const CONTRACT_SOURCES = ["Stock.sol", "PriceFeed.sol"] as const

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ severity: string; formattedMessage: string }>
  readonly contracts: Record<
    string,
    Record<string, {
      abi: Artifact["abi"]
      evm: { bytecode: { object: string }; deployedBytecode: { object: string } }
      storageLayout: Artifact["storageLayout"]
    }>
  >
}

export const compileContracts = (): Record<string, Artifact> => {
  const sources: Record<string, { content: string }> = {}
  for (const file of CONTRACT_SOURCES) {
    sources[`contracts/${file}`] = { content: readFileSync(join(here, "contracts", file), "utf8") }
  }
  const input = {
    language: "Solidity",
    sources,
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "storageLayout"] } }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const artifacts: Record<string, Artifact> = {}
  for (const [sourceName, contracts] of Object.entries(output.contracts)) {
    for (const [contractName, c] of Object.entries(contracts)) {
      artifacts[contractName] = {
        contractName,
        sourceName,
        compiler: { version: solc.version() as string, evmVersion: EVM_VERSION, optimizerRuns: 200 },
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        storageLayout: c.storageLayout
      }
    }
  }
  return artifacts
}

export const writeArtifacts = (artifacts: Record<string, Artifact>): ReadonlyArray<string> => {
  const dir = join(here, "artifacts")
  mkdirSync(dir, { recursive: true })
  return Object.values(artifacts).map((artifact) => {
    const path = join(dir, `${artifact.contractName}.json`)
    writeFileSync(path, JSON.stringify(artifact, null, 2) + "\n")
    return path
  })
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now()
  const written = writeArtifacts(compileContracts())
  console.log(`compiled in ${Date.now() - started} ms:\n${written.join("\n")}`)
}
