/**
 * Compiles the classification test contracts with npm `solc` and writes `test/classify/artifacts/<Name>.json`.
 * Run: `npx tsx test/classify/compile.ts` (artifacts are committed; tests never compile at run time).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import solc from "solc"
import { EVM_VERSION } from "../chain/compile.js"

const here = dirname(fileURLToPath(import.meta.url))

const input = {
  language: "Solidity",
  sources: { "contracts/Classify.sol": { content: readFileSync(join(here, "contracts", "Classify.sol"), "utf8") } },
  settings: {
    evmVersion: EVM_VERSION,
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } }
  }
}
const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
  errors?: ReadonlyArray<{ severity: string; formattedMessage: string }>
  contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
}
const errors = (output.errors ?? []).filter((e) => e.severity === "error")
if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
mkdirSync(join(here, "artifacts"), { recursive: true })
for (const [name, contract] of Object.entries(output.contracts["contracts/Classify.sol"]!)) {
  if (name === "IERC20Like") continue
  writeFileSync(
    join(here, "artifacts", `${name}.json`),
    JSON.stringify({ contractName: name, abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }, null, 2) +
      "\n"
  )
  console.log(`wrote ${name}`)
}
