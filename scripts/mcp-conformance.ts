/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, which needs Node 22: both live in
 * tools/mcp-conformance, apart from the project's Node 20 tree) against `npm start -- --mcp` on a fresh embedded
 * database. Only the scenarios that apply to a tools-only, stateless server are run; the others need the suite's own
 * test tools, prompts, resources, sampling or elicitation, which a read-only record service does not offer.
 */
import { spawnSync } from "node:child_process"
import { node22Tool, withMcpServer } from "./mcpTools.js"

const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]

const { node, tool } = node22Tool("mcp-conformance", "conformance")
const failed = await withMcpServer(async (url) => {
  let failures = 0
  for (const scenario of SCENARIOS) {
    const run = spawnSync(node, [tool, "server", "--url", url, "--scenario", scenario], { encoding: "utf8" })
    const passed = run.status === 0
    if (!passed) failures++
    console.log(`${passed ? "PASS" : "FAIL"} ${scenario}`)
    if (!passed || process.argv.includes("--verbose")) console.log(`${run.stdout}${run.stderr}`)
  }
  return failures
})
console.log(`${SCENARIOS.length - failed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
