/**
 * Lists the MCP server's tools with the official MCP Inspector in CLI mode (Node 22, kept in tools/mcp-inspector).
 *
 *   npm run mcp:inspect                                   a throwaway server on a fresh embedded database
 *   npm run mcp:inspect -- http://localhost:8081/mcp      a running server
 *   npm run mcp:inspect -- http://localhost:8081/mcp sk_live_… --method tools/call --tool-name get_positions
 *
 * Arguments after the URL and key go to the Inspector as they are.
 */
import { spawnSync } from "node:child_process"
import { node22Tool, withMcpServer } from "./mcpTools.js"

const [url, key, ...rest] = process.argv.slice(2)
const { node, tool } = node22Tool("mcp-inspector", "mcp-inspector")

const inspect = (target: string) => {
  const args = [tool, "--cli", target, "--transport", "http", ...(rest.length > 0 ? rest : ["--method", "tools/list"])]
  if (key !== undefined) args.push("--header", `Authorization: Bearer ${key}`)
  return spawnSync(node, args, { stdio: "inherit" }).status ?? 1
}

process.exit(url === undefined ? await withMcpServer(async (target) => inspect(target)) : inspect(url))
