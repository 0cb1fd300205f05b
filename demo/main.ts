/**
 * `npm run demo`: a local chain seeded with real symbols and Robinhood's real multiplier steps, and the service
 * watching it on the embedded database, with two demo wallets added. Offline; stop with Ctrl-C.
 * `npm run demo -- --port 9090` serves the API elsewhere (default 8080), and MCP on the next port unless
 * `--mcp-port` says otherwise. Its data folder is always `data/demo`, emptied at each start (whatever
 * `SCALEDGER_DATA_DIR` says: the demo never touches a real data folder).
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { startSeededNode, toJson } from "../test/chain/seed.js"
import { ROOT, runEntry, waitFor } from "../test/support/Processes.js"

const numberArg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}
const port = numberArg("--port", 8080)
const mcpPort = numberArg("--mcp-port", port + 1)
const dataDir = Path.join(ROOT, "data", "demo")

const isReady = async (port: number) => {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`)
  return response.status === 200 ? true : undefined
}

/** What `main` started, stopped before the demo exits, whichever way it ends (no process is left behind). */
const running: Array<() => Promise<unknown>> = []
let stopping = false
const stopAll = async () => {
  stopping = true
  for (const stop of running.splice(0).reverse()) await stop().catch(() => undefined)
}

/** Whether nothing listens on the port yet (another service there would answer the demo's readiness checks). */
const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = Net.createServer()
    probe.once("error", () => resolve(false))
    probe.listen(port, "0.0.0.0", () => probe.close(() => resolve(true)))
  })

const main = async () => {
  for (const [option, value] of [["--port", port], ["--mcp-port", mcpPort]] as const) {
    if (!Number.isInteger(value) || value < 1 || value > 65535) throw new Error(`${option} wants a port number`)
    if (!(await isFree(value))) throw new Error(`port ${value} is in use; choose another with ${option}`)
  }
  Fs.rmSync(dataDir, { recursive: true, force: true })
  Fs.mkdirSync(dataDir, { recursive: true })
  const { node, tokenList, manifest } = await startSeededNode({ openingQuotes: true })
  running.push(() => node.close())
  const tokenListPath = Path.join(dataDir, "tokens.json")
  Fs.writeFileSync(tokenListPath, toJson(tokenList))
  // The chain keeps moving, a block every two seconds, as a live chain would.
  const miner = setInterval(() => void node.mine(1).catch(() => undefined), 2_000)
  running.push(async () => clearInterval(miner))

  const service = runEntry("main", [], {
    DATABASE_URL: "",
    SCALEDGER_DATA_DIR: dataDir,
    PORT: String(port),
    MCP_PORT: String(mcpPort),
    RPC_URL: node.wsUrl,
    CHAIN_ID: String(node.chainId),
    TOKEN_LIST: tokenListPath,
    FINALITY_DEPTH: "5",
    FX_REFRESH: "off",
    BACKFILL_POLL_MS: "250"
  })
  running.push(() => {
    service.child.kill("SIGTERM")
    return service.exited
  })
  service.child.stdout!.pipe(process.stdout)
  service.child.stderr!.pipe(process.stderr)
  const stop = async () => {
    await stopAll()
    process.exit(0)
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  const serviceExited = service.exited.then(async (code) => {
    if (stopping) return
    await stopAll()
    process.exit(code ?? 1)
  })

  // The first start creates the embedded database: on a busy machine that takes well over half a minute.
  await Promise.race([waitFor(`the service on port ${port}`, () => isReady(port), 300_000), serviceExited])
  const key = /API key (sk_live_[0-9A-Za-z]{32})/.exec(service.output())?.[1]
  if (key === undefined) throw new Error("the service printed no first-start key")
  const base = `http://localhost:${port}`
  const alice = manifest.holders.filter((holder) => holder.person === "alice")
  for (const holder of alice) {
    const response = await fetch(`${base}/v1/wallets`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ address: holder.address, label: holder.label, self: true })
    })
    if (!response.ok) throw new Error(`adding ${holder.label} failed: ${response.status} ${await response.text()}`)
  }

  console.log(`
Scaledger demo: chain ${node.chainId} at ${node.httpUrl}, API at ${base}, MCP at http://localhost:${mcpPort}/mcp,
data in ${dataDir} (fresh each run)
Watching Alice's two wallets: ${alice.map((h) => h.address).join(", ")}

  export KEY=${key}
  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/wallets
  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/wallets/${alice[0]!.address}
  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/positions
  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/portfolio
  curl -s -H "Authorization: Bearer $KEY" "${base}/v1/basis?token=AAPL"
  curl -s -H "Authorization: Bearer $KEY" "${base}/v1/events?type=income.multiplier_increase"
  curl -s -H "Authorization: Bearer $KEY" "${base}/v1/multiplier?token=CRWD"
  curl -s -H "Authorization: Bearer $KEY" "${base}/v1/multiplier?token=AAPL&at=2026-08-14"
  curl -s -H "Authorization: Bearer $KEY" ${base}/v1/fx/SGD/2025-05-09
  SCALEDGER_DATA_DIR=${Path.relative(process.cwd(), dataDir) || "."} npx scaledger keys list --account default

The chain's history is in 2026 and the bundled ECB rates end on 2025-05-09 (offline: no refresh), so figures in
another reporting currency than USD are null with reason stale_rate here.
API reference: ${base}/docs    Stop with Ctrl-C.
`)
}

main().catch(async (error) => {
  console.error(`demo: ${error instanceof Error ? error.message : String(error)}`)
  await stopAll()
  process.exit(1)
})
