/**
 * `npm run bench:rss`: the service's resident memory with the embedded database (PGlite). Starts a local chain
 * (seeded), the real service process on it (`packages/server/src/main.ts`, every role: REST, MCP, workers) with a
 * fresh data folder, adds one wallet with history, waits for its backfill and ledger build, then prints the RSS
 * of the service process idle (after `BENCH_IDLE_SECONDS`, default 20) and under light load (autocannon, 4
 * connections, 10 s on `GET /v1/positions` and `GET /v1/portfolio`). The Node flags are `npm start`'s
 * (`--max-semi-space-size=2`); `BENCH_NODE_FLAGS` replaces them (`BENCH_NODE_FLAGS=" "` for none).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { startSeededNode, toJson } from "../chain/seed.js"
import { freePort, ROOT, waitFor } from "../support/Processes.js"

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20)
const MB = 1024 * 1024

const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly headers?: Record<string, string>
}) => Promise<{ readonly requests: { readonly average: number }; readonly non2xx: number }>

/** Resident and peak resident memory of a process, in bytes, from /proc. */
const memoryOf = (pid: number) => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  return { rss: kb("VmRSS"), peak: kb("VmHWM") }
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const main = async () => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-rss-"))
  const { manifest, node, tokenList } = await startSeededNode()
  const tokenListPath = Path.join(dataDir, "tokens.json")
  Fs.writeFileSync(tokenListPath, toJson(tokenList))
  const port = await freePort()
  const flags = (process.env.BENCH_NODE_FLAGS ?? "--max-semi-space-size=2").split(" ").filter((flag) => flag !== "")
  const service = spawn(
    process.execPath,
    [...flags, "--import", "tsx", Path.join(ROOT, "packages/server/src/main.ts")],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: "",
        SCALEDGER_DATA_DIR: Path.join(dataDir, "data"),
        PORT: String(port),
        MCP_PORT: String(await freePort()),
        HOST: "127.0.0.1",
        RPC_URL: node.wsUrl,
        CHAIN_ID: String(node.chainId),
        TOKEN_LIST: tokenListPath,
        FINALITY_DEPTH: "5",
        FX_REFRESH: "off",
        BACKFILL_POLL_MS: "250"
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  service.stdout.on("data", (chunk) => {
    if (output.length < 100_000) output += chunk
  })
  service.stderr.on("data", (chunk) => process.stderr.write(chunk))
  const stop = async () => {
    const exited = new Promise((resolve) => service.once("exit", resolve))
    service.kill("SIGTERM")
    await exited
    await node.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    await waitFor(
      `/readyz on port ${port}`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok || undefined,
      180_000
    )
    const started = memoryOf(service.pid!)
    const key = /API key (sk_live_[0-9A-Za-z]{32})/.exec(output)?.[1]
    if (key === undefined) throw new Error("the service printed no first-start key")
    const headers = { authorization: `Bearer ${key}` }
    const base = `http://127.0.0.1:${port}`
    const wallet = manifest.holders.find((holder) => holder.person === "alice")!
    const added = await fetch(`${base}/v1/wallets`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ address: wallet.address, label: wallet.label, self: true })
    })
    if (added.status !== 201) throw new Error(`adding the wallet answered ${added.status}`)
    await waitFor("the backfill", async () => {
      const body = await (await fetch(`${base}/v1/wallets/${wallet.address}`, { headers })).json() as any
      return body?.backfill?.status === "complete" || undefined
    }, 120_000)
    const positions = await waitFor("the positions", async () => {
      const response = await fetch(`${base}/v1/positions`, { headers })
      const body = await response.json() as any
      return response.status === 200 && body.positions.length > 0 ? body.positions.length as number : undefined
    }, 120_000)
    const afterBackfill = memoryOf(service.pid!)
    await sleep(IDLE_SECONDS * 1000)
    const idle = memoryOf(service.pid!)
    const loads = []
    for (const path of ["/v1/positions", "/v1/portfolio"]) {
      loads.push(await autocannon({ url: `${base}${path}`, connections: 4, duration: 10, headers }))
    }
    const loaded = memoryOf(service.pid!)
    console.log(
      `service with PGlite, one wallet (${positions} positions), Node ${process.version}` +
        (flags.length > 0 ? `, flags ${flags.join(" ")}` : "") +
        `; load average ${Os.loadavg()[0]!.toFixed(1)}`
    )
    console.log(`RSS ready: ${mb(started.rss)}; after the backfill and build: ${mb(afterBackfill.rss)}`)
    console.log(
      `RSS idle (${IDLE_SECONDS} s later): ${mb(idle.rss)} (target <= 250 MB: ${idle.rss <= 250 * MB ? "OK" : "OVER"})`
    )
    console.log(
      `RSS after light load (4 connections, 10 s each on positions and portfolio, ${
        loads.map((l) => `${Math.round(l.requests.average)} req/s`).join(" and ")
      }): ${mb(loaded.rss)}; peak over the whole run ${mb(loaded.peak)}`
    )
  } finally {
    await stop()
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
