/**
 * `npm run bench:backfill`: seeds a local chain with 50,000 stock-token transfers (`-- --big`: 100,000; or
 * `BENCH_TOTAL`), a tenth of them to one wallet, each of those in a transaction of its own: half mints, half
 * transfers from another holder (`-- --mints`: all mints, the composition of the figures before issue 14). Prints
 * (a) the wall time to backfill that wallet into the database (transfers, their block times, the multiplier history,
 * all stored), with its time per phase (span totals) and the process's CPU time; (b) the same `eth_getLogs` calls made raw (the best of three), the ratio's reference;
 * (c) the receipts of the transfers that are not mints and (d) the headers of the wallet's blocks, read raw in
 * batches of 100: what the node itself costs for them (block headers are what a backfill reads where logs carry no
 * times; receipts it no longer reads). Runs on PostgreSQL (`DATABASE_URL`, default the local server) and on the
 * embedded PGlite with the node as EDR is (no `blockTimestamp` in logs), then on PostgreSQL with the node as geth
 * 1.16+ is (times in the logs). The node runs in a child process of its own, as a node is never in the indexer's
 * process (`-- --node-in-process`: in this one, as the figures before 2026-11-27 16:00 UTC were taken; its work for
 * the backfill's concurrent reads then shares the backfill's thread and counts in its CPU).
 */
import { SqlClient } from "@effect/sql"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Inspector from "node:inspector"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import * as Url from "node:url"
import { encodeFunctionData, type Hex } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import { startSeededNode, toJson } from "../chain/seed.js"
import { addAndBackfill, ingestServices } from "../support/ChainHarness.js"
import { makeSpanTimes } from "./spanTimes.js"

const TOTAL = Number(process.env.BENCH_TOTAL ?? (process.argv.includes("--big") ? 100_000 : 50_000))
const WALLET_SHARE = Math.floor(TOTAL / 10)
/** `--mints`: every wallet transfer a mint (the composition of the figures before issue 14): no receipts needed. */
const MINTS_ONLY = process.argv.includes("--mints")
/** `--timestamps`: only the case of a node that gives log timestamps (no raw receipt or header reads). */
const TIMESTAMPS_ONLY = process.argv.includes("--timestamps")
/**
 * Backfills per case, each into a fresh database (`BENCH_ROUNDS`, default 3): each is printed, then the best and the
 * median, the best against the raw calls' best of three (like against like: the least time either took).
 */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const PER_TX = 250
const WALLET = "0x00000000000000000000000000000000000beef1"
/** `--node-in-process`: the node in this process (see `startBenchChain`). */
const NODE_IN_PROCESS = process.argv.includes("--node-in-process")

let profiles = 0
/** `getconf CLK_TCK` on Linux. */
const CLOCK_TICKS = 100
const post = (session: Inspector.Session, method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) =>
    session.post(method, params ?? {}, (error, result) => (error === null ? resolve(result) : reject(error)))
  )

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** The seeded chain as the benchmark uses it, wherever its node runs. */
interface BenchChain {
  readonly httpUrl: string
  readonly chainId: number
  readonly head: number
  readonly tokenList: unknown
  readonly walletTransfers: ReadonlyArray<Hex>
  readonly setLogTimestamps: (on: boolean) => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * Starts a seeded node and adds the benchmark's history: the wallet's transfers each in a transaction of its own, as
 * real purchases are; the other 90 % in batches, so seeding stays quick. Both kinds are interleaved over the range.
 */
const seedBenchChain = async () => {
  const { node, tokenList, manifest } = await startSeededNode()
  const seededTransfers = manifest.transfers.length
  const aapl = manifest.tokens.find((t) => t.symbol === "AAPL")!.address
  const issuer = node.accounts[0]!.address
  const stock = loadArtifact("Stock")

  const seedStart = performance.now()
  const send = (data: Hex) =>
    node.request<Hex>("eth_sendTransaction", [{ from: issuer, to: aapl, data, gas: "0x1c9c380" }])
  const others = TOTAL - WALLET_SHARE
  const batches = Math.ceil(others / PER_TX)
  let other = 0
  await send(encodeFunctionData({ abi: stock.abi as any, functionName: "mint", args: [issuer, 10n ** 30n] }))
  const walletTransfers: Array<Hex> = []
  for (let i = 0; i < WALLET_SHARE; i++) {
    const functionName = i % 2 === 0 || MINTS_ONLY ? "mint" : "transfer"
    const hash = await send(encodeFunctionData({ abi: stock.abi as any, functionName, args: [WALLET, 10n ** 18n] }))
    if (functionName === "transfer") walletTransfers.push(hash)
    if (Math.floor(((i + 1) * batches) / WALLET_SHARE) > Math.floor((i * batches) / WALLET_SHARE)) {
      const recipients: Array<string> = []
      for (let j = 0; j < PER_TX && other < others; j++) {
        recipients.push(`0x${(++other).toString(16).padStart(40, "0")}`)
      }
      await send(
        encodeFunctionData({ abi: stock.abi as any, functionName: "mintBatch", args: [recipients, 10n ** 18n] })
      )
    }
  }
  const seedMs = performance.now() - seedStart
  const head = await node.blockNumber()
  console.log(
    `seeded ${(TOTAL + seededTransfers).toLocaleString("en")} transfers (${
      WALLET_SHARE.toLocaleString("en")
    } to the wallet, ` +
      `each in its own transaction, ${MINTS_ONLY ? "all" : "half of them"} mints) in ${
        seconds(seedMs)
      }; head block ${head}`
  )
  return { node, head, tokenList: JSON.parse(toJson(tokenList)) as unknown, walletTransfers }
}

/** Messages between the benchmark and its chain process. */
type ToChain = { readonly logTimestamps: boolean } | { readonly close: true }
type FromChain =
  | { readonly ready: Omit<BenchChain, "setLogTimestamps" | "close"> }
  | { readonly done: true }

/** The chain process (`--chain-process`): seeds its node, says where it is, and serves it until told to close. */
const serveChain = async () => {
  const { head, node, tokenList, walletTransfers } = await seedBenchChain()
  const say = (message: FromChain) => process.send!(message)
  process.on("message", (message: ToChain) => {
    if ("close" in message) {
      void node.close().then(() => process.exit(0))
    } else {
      node.setLogTimestamps(message.logTimestamps)
      say({ done: true })
    }
  })
  say({ ready: { httpUrl: node.httpUrl, chainId: node.chainId, head, tokenList, walletTransfers } })
  // Serves until the benchmark says close, or ends without saying it.
  process.on("disconnect", () => process.exit(0))
  return new Promise<void>(() => {})
}

/**
 * The node in a process of its own (the default, as a deployment has it: the node is never in the indexer's
 * process), or in this one (`--node-in-process`).
 */
const startBenchChain = async (): Promise<BenchChain> => {
  if (NODE_IN_PROCESS) {
    const { head, node, tokenList, walletTransfers } = await seedBenchChain()
    return {
      httpUrl: node.httpUrl,
      chainId: node.chainId,
      head,
      tokenList,
      walletTransfers,
      setLogTimestamps: async (on) => node.setLogTimestamps(on),
      close: () => node.close()
    }
  }
  const child = ChildProcess.fork(Url.fileURLToPath(import.meta.url), ["--chain-process", ...process.argv.slice(2)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const next = () =>
    new Promise<FromChain>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the chain process exited (${code})`))
      child.once("exit", onExit)
      child.once("message", (message: FromChain) => {
        child.off("exit", onExit)
        resolve(message)
      })
    })
  const first = await next()
  if (!("ready" in first)) throw new Error("the chain process did not say where its node is")
  return {
    ...first.ready,
    setLogTimestamps: async (logTimestamps) => {
      const answer = next()
      child.send({ logTimestamps } satisfies ToChain)
      await answer
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve())
        child.send({ close: true } satisfies ToChain)
      })
  }
}

const main = async () => {
  const node = await startBenchChain()
  const { head, tokenList, walletTransfers } = node
  const where = NODE_IN_PROCESS ? "the in-process node included" : "the node runs in a process of its own"

  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-bench-"))
  const tokenListPath = Path.join(dir, "tokens.json")
  Fs.writeFileSync(tokenListPath, toJson(tokenList))

  // (b) The same eth_getLogs calls, raw: one per side of the transfer over the whole range; the best of three.
  const topic = `0x${WALLET.slice(2).toLowerCase().padStart(64, "0")}`
  const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
  let rawLogs = 0
  const walletBlocks = new Set<string>()
  /** CPU time of this process during the best round (the node's work for those calls included). */
  let rawCpuMs = 0
  const rawGetLogs = async () => {
    let best = Infinity
    for (let round = 0; round < 3; round++) {
      const rawStart = performance.now()
      const cpuStart = process.cpuUsage()
      rawLogs = 0
      for (const topics of [[transferTopic, topic], [transferTopic, null, topic]]) {
        const response = await fetch(node.httpUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "eth_getLogs",
            params: [{ fromBlock: "0x0", toBlock: `0x${head.toString(16)}`, topics }]
          })
        })
        const { result } = (await response.json()) as { result: Array<{ blockNumber: string }> }
        rawLogs += result.length
        for (const log of result) walletBlocks.add(log.blockNumber)
      }
      const roundMs = performance.now() - rawStart
      if (roundMs < best) {
        best = roundMs
        const cpu = process.cpuUsage(cpuStart)
        rawCpuMs = (cpu.user + cpu.system) / 1000
      }
    }
    return best
  }
  let rawMs = await rawGetLogs()

  /** Raw JSON-RPC batches of 100, one after the other: what the node itself costs for these reads. */
  const rawBatched = async (method: string, params: ReadonlyArray<ReadonlyArray<unknown>>) => {
    const start = performance.now()
    for (let i = 0; i < params.length; i += 100) {
      const batch = params.slice(i, i + 100).map((p, id) => ({ jsonrpc: "2.0", id, method, params: p }))
      await fetch(node.httpUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(batch)
      }).then((r) => r.json())
    }
    return performance.now() - start
  }

  // (c) The receipts of the wallet's transfers that are not mints, and (d) the headers of the wallet's blocks, read
  // raw: what the node itself costs for them (the backfill reads block headers where logs carry no times).
  let rawBlocksMs = 0
  if (!TIMESTAMPS_ONLY) {
    const rawReceiptsMs = await rawBatched("eth_getTransactionReceipt", walletTransfers.map((hash) => [hash]))
    console.log(
      `(c) raw batched eth_getTransactionReceipt for the ${walletTransfers.length.toLocaleString("en")} ` +
        `transactions that are not mints: ${seconds(rawReceiptsMs)}`
    )
    rawBlocksMs = await rawBatched("eth_getBlockByNumber", [...walletBlocks].map((n) => [n, false]))
    console.log(
      `(d) raw batched eth_getBlockByNumber for the wallet's ${walletBlocks.size.toLocaleString("en")} blocks: ${
        seconds(rawBlocksMs)
      }`
    )
  }

  /**
   * CPU milliseconds of each PostgreSQL backend serving this database (from `/proc`, so a local server only; none
   * for PGlite, whose work is this process's).
   */
  const serverCpu = (database: "PostgreSQL" | "PGlite") =>
    Effect.gen(function*() {
      if (database === "PGlite") return new Map<number, number>()
      const sql = yield* SqlClient.SqlClient
      const byPid = new Map<number, number>()
      const rows = yield* sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`
        .pipe(
          Effect.orElseSucceed(() => [])
        )
      for (const { pid } of rows) {
        try {
          const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
          byPid.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS)
        } catch {
          // Not a local server, or the backend ended.
        }
      }
      return byPid
    })

  const backfill = (name: string, database: Layer.Layer<any>, withBlockReads: boolean) =>
    Effect.gen(function*() {
      const spans = makeSpanTimes({ statements: process.env.BENCH_SPANS !== undefined })
      const profiling = process.env.BENCH_CPU_PROFILE
      const session = profiling === undefined ? undefined : new Inspector.Session()
      if (session !== undefined) {
        session.connect()
        yield* Effect.promise(() => post(session, "Profiler.enable"))
        yield* Effect.promise(() => post(session, "Profiler.setSamplingInterval", { interval: 200 }))
        yield* Effect.promise(() => post(session, "Profiler.start"))
      }
      const server = name.startsWith("PGlite") ? "PGlite" : "PostgreSQL"
      const serverBefore = yield* serverCpu(server)
      const cpuStart = process.cpuUsage()
      const start = performance.now()
      const wallet = yield* spans.measure(addAndBackfill(WALLET, node.chainId))
      const ms = performance.now() - start
      const serverAfter = yield* serverCpu(server)
      if (session !== undefined) {
        const { profile } = (yield* Effect.promise(() => post(session, "Profiler.stop"))) as { profile: unknown }
        Fs.writeFileSync(`${profiling}-${++profiles}.cpuprofile`, JSON.stringify(profile))
        session.disconnect()
      }
      const cpu = process.cpuUsage(cpuStart)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM token_transfers`
      console.log(
        `(a) backfill on ${name}: ${seconds(ms)} for ${Number(row!.n).toLocaleString("en")} transfers ` +
          `(status ${wallet.backfillStatus}); ${(Number(row!.n) / (ms / 1000)).toFixed(0)} transfers/s; ` +
          `ratio to raw getLogs ${(ms / rawMs).toFixed(1)}×` +
          (withBlockReads
            ? `; to raw getLogs + the wallet's block headers (b + d) ${(ms / (rawMs + rawBlocksMs)).toFixed(1)}×`
            : "")
      )
      const phase = (name: string) => spans.totals.get(name)?.ms ?? 0
      console.log(
        `    phases: fetching ${seconds(phase("TransferScan.fetch"))} (overlapped: eth_getLogs calls ${
          seconds(phase("ChainClient.getLogs"))
        }, their decoding ${seconds(phase("ChainClient.decodeLogs"))}, block time reads ${
          seconds(phase("TransferScan.blockTimes"))
        }, transfer decoding ${seconds(phase("TransferScan.decode"))}), inserts ${
          seconds(phase("Backfill.storeTransfers"))
        }; multiplier history and the rest ${seconds(ms - phase("Backfill.transfers"))} (of which the tokens' own ` +
          `logs over the whole range ${seconds(phase("Backfill.lifecycleLogs"))})`
      )
      if (process.env.BENCH_SPANS !== undefined) {
        for (const [span, total] of [...spans.totals].sort((a, b) => b[1].ms - a[1].ms)) {
          console.log(`      ${span}: ${total.count} × ${seconds(total.ms)}`)
        }
      }
      const cpuMs = (cpu.user + cpu.system) / 1000
      console.log(
        `    process CPU (${where}; the database server not): ${seconds(cpuMs)} (user ${
          seconds(cpu.user / 1000)
        }, system ${seconds(cpu.system / 1000)}) = ${(cpuMs / rawCpuMs).toFixed(1)}× the CPU of the raw getLogs (${
          seconds(rawCpuMs)
        }); load average ${Os.loadavg()[0]!.toFixed(1)} on ${Os.cpus().length} cores`
      )
      if (serverAfter.size > 0) {
        let serverMs = 0
        for (const [pid, after] of serverAfter) serverMs += after - (serverBefore.get(pid) ?? 0)
        console.log(
          `    PostgreSQL server CPU (its backends for this database): ${seconds(serverMs)}; with the process: ${
            seconds(cpuMs + serverMs)
          } = ${((cpuMs + serverMs) / rawCpuMs).toFixed(1)}× the CPU of the raw getLogs`
        )
      }
      return ms
    }).pipe(
      Effect.provide(
        ingestServices({
          rpcUrl: node.httpUrl,
          chainId: node.chainId,
          tokenListPath,
          chain: { concurrency: 8 },
          ingest: { backfillCheckpointBlocks: 50_000 }
        }).pipe(Layer.provideMerge(database))
      ),
      Effect.scoped,
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )

  const onPostgres = (name: string, withBlockReads: boolean) =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* TestDatabase.postgresUrl
      return yield* backfill(
        name,
        Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie),
        withBlockReads
      )
    })))

  const rounds = async (name: string, run: () => Promise<number>) => {
    const times: Array<number> = []
    for (let round = 0; round < ROUNDS; round++) times.push(await run())
    if (times.length === 1) return
    const sorted = [...times].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    console.log(
      `(a) ${name}, ${times.length} backfills: best ${seconds(sorted[0]!)} = ${
        (sorted[0]! / rawMs).toFixed(1)
      }× raw getLogs (best of three); median ${seconds(median)} = ${(median / rawMs).toFixed(1)}×`
    )
  }
  if (!TIMESTAMPS_ONLY) {
    console.log(`(b) raw eth_getLogs for the same filters: ${seconds(rawMs)} for ${rawLogs.toLocaleString("en")} logs`)
    await rounds(
      "PostgreSQL, node without log timestamps",
      () => onPostgres("PostgreSQL, node without log timestamps", true)
    )
    await rounds(
      "PGlite (in memory), node without log timestamps",
      () => Effect.runPromise(backfill("PGlite (in memory), node without log timestamps", TestDatabase.pglite, true))
    )
  }
  await node.setLogTimestamps(true)
  rawMs = await rawGetLogs()
  console.log(
    `(b) raw eth_getLogs, node with log timestamps: ${seconds(rawMs)} for ${rawLogs.toLocaleString("en")} logs`
  )
  await rounds(
    "PostgreSQL, node with log timestamps (geth 1.16+)",
    () => onPostgres("PostgreSQL, node with log timestamps (geth 1.16+)", false)
  )

  Fs.rmSync(dir, { recursive: true, force: true })
  await node.close()
}
;(process.argv.includes("--chain-process") ? serveChain() : main()).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
