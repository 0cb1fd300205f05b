/**
 * `npm run bench:rss`: the service's resident memory with the embedded database (PGlite). Starts a local chain
 * (seeded), the real service process on it as `npm start` runs it (`npm run build`, then the `node …` command of the
 * `start` script: the compiled JavaScript, every role: REST, MCP, workers) with a fresh data folder, adds one wallet
 * with history, waits for its backfill and ledger build, then prints the RSS of the service process idle (after
 * `BENCH_IDLE_SECONDS`, default 20) and under light load (autocannon, 4 connections, 10 s on `GET /v1/positions` and
 * `GET /v1/portfolio`), with where the idle RSS sits (`/proc/<pid>/smaps`). `BENCH_NODE_FLAGS` replaces the start
 * script's Node flags (`BENCH_NODE_FLAGS=" "` for none).
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { startSeededNode, toJson } from "../chain/seed.js"
import { freePort, ROOT, waitFor } from "../support/Processes.js"
import { startCommand } from "./startCommand.js"

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20)
const MB = 1024 * 1024

const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly headers?: Record<string, string>
}) => Promise<{ readonly requests: { readonly average: number; readonly total: number }; readonly non2xx: number }>

/** Resident and peak resident memory of a process, in bytes, from /proc. */
const memoryOf = (pid: number) => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  return { rss: kb("VmRSS"), peak: kb("VmHWM") }
}

/**
 * The process's resident memory by kind of mapping: the V8 heap and other anonymous memory (WebAssembly memories
 * are anonymous too: PGlite's is reported apart as the largest single mapping), and file-backed pages (the node
 * binary, shared libraries, PGlite's files).
 */
const residentByKind = (pid: number) => {
  const lines = Fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")
  let anonymous = 0
  let files = 0
  let largest = 0
  let isFile = false
  for (const line of lines) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line)
    if (header !== null) {
      isFile = header[1] !== "0" && header[2]!.startsWith("/")
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss === null) continue
    const bytes = Number(rss[1]) * 1024
    if (isFile) files += bytes
    else {
      anonymous += bytes
      largest = Math.max(largest, bytes)
    }
  }
  return { anonymous, files, largest }
}

/** User and system CPU time of a process so far, in seconds (`/proc/<pid>/stat`, clock ticks of 10 ms). */
const cpuSecondsOf = (pid: number) => {
  const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const main = async () => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-rss-"))
  const { manifest, node, tokenList } = await startSeededNode()
  const tokenListPath = Path.join(dataDir, "tokens.json")
  Fs.writeFileSync(tokenListPath, toJson(tokenList))
  const port = await freePort()
  const command = startCommand()
  const flags = command.slice(0, -1)
  const service = spawn(
    process.execPath,
    command,
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
        BACKFILL_POLL_MS: "250",
        // The load is to reach the handlers (600 a minute would answer nearly all of it with 429).
        RATE_LIMIT_PER_MINUTE: "0"
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  // The sampler below names each reading by the bench's phase and the service's last log line, so the peak can be
  // placed (PGlite opening, migrations, the backfill, the first build, a request burst...).
  let phase = "starting"
  let lastLine = ""
  service.stdout.on("data", (chunk) => {
    if (output.length < 100_000) output += chunk
    const lines = String(chunk).trim().split("\n")
    lastLine = lines[lines.length - 1]!.slice(0, 160)
  })
  let highest = { rss: 0, at: 0, phase: "", lastLine: "" }
  const startedAt = Date.now()
  const sampler = setInterval(() => {
    try {
      const { rss } = memoryOf(service.pid!)
      if (rss > highest.rss) highest = { rss, at: Date.now() - startedAt, phase, lastLine }
    } catch {
      // the process has exited
    }
  }, 100)
  service.stderr.on("data", (chunk) => process.stderr.write(chunk))
  const stop = async () => {
    clearInterval(sampler)
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
    const cpuReady = cpuSecondsOf(service.pid!)
    phase = "adding the wallet and its backfill"
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
    phase = "waiting for the first ledger build (positions)"
    const positions = await waitFor("the positions", async () => {
      const response = await fetch(`${base}/v1/positions`, { headers })
      const body = await response.json() as any
      return response.status === 200 && body.positions.length > 0 ? body.positions.length as number : undefined
    }, 120_000)
    const afterBackfill = memoryOf(service.pid!)
    phase = "idle"
    await sleep(IDLE_SECONDS * 1000)
    const idle = memoryOf(service.pid!)
    const idleKinds = residentByKind(service.pid!)
    const loads = []
    const cpuBeforeLoad = cpuSecondsOf(service.pid!)
    for (const path of ["/v1/positions", "/v1/portfolio"]) {
      phase = `light load on ${path}`
      loads.push(await autocannon({ url: `${base}${path}`, connections: 4, duration: 10, headers }))
    }
    const loaded = memoryOf(service.pid!)
    const loadedKinds = residentByKind(service.pid!)
    const cpuAfterLoad = cpuSecondsOf(service.pid!)
    phase = "idle after the load"
    await sleep(IDLE_SECONDS * 1000)
    const settled = memoryOf(service.pid!)
    console.log(
      `service with PGlite, one wallet (${positions} positions), Node ${process.version}` +
        (flags.length > 0 ? `, flags ${flags.join(" ")}` : "") +
        `; load average ${Os.loadavg()[0]!.toFixed(1)}`
    )
    console.log(`RSS ready: ${mb(started.rss)}; after the backfill and build: ${mb(afterBackfill.rss)}`)
    console.log(
      `RSS idle (${IDLE_SECONDS} s later): ${mb(idle.rss)} (target <= 250 MB: ${idle.rss <= 250 * MB ? "OK" : "OVER"})`
    )
    const kinds = (k: ReturnType<typeof residentByKind>) =>
      `  of which anonymous ${mb(k.anonymous)} (largest mapping ${mb(k.largest)}: PGlite's WebAssembly memory), ` +
      `file-backed ${mb(k.files)}`
    console.log(kinds(idleKinds))
    console.log(
      `RSS after light load (4 connections, 10 s each on positions and portfolio, ${
        loads.map((l) => `${Math.round(l.requests.average)} req/s, ${l.non2xx} not 2xx`).join(" and ")
      }): ${mb(loaded.rss)}; ${IDLE_SECONDS} s later ${mb(settled.rss)}; peak over the whole run ${mb(loaded.peak)}`
    )
    console.log(kinds(loadedKinds))
    console.log(
      `highest 100 ms sample: ${mb(highest.rss)} at ${(highest.at / 1000).toFixed(1)} s, during ${highest.phase}` +
        (highest.lastLine === "" ? "" : `; the service's last output line then: ${highest.lastLine}`)
    )
    console.log(
      `service CPU: ${cpuReady.toFixed(1)} s until ready, ${cpuBeforeLoad.toFixed(1)} s before the load, ` +
        `${(cpuAfterLoad - cpuBeforeLoad).toFixed(1)} s during it`
    )
  } finally {
    await stop()
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
