/**
 * `npm run bench:scale [-- --events=N --wallets=W --accounts=A --per-tx=P --live=L]`: the service at scale on
 * PostgreSQL. Defaults: 1,000,000 events over 1,000 wallets in 100 accounts (10 wallets each), 1,000 Transfer logs
 * per transaction, 5 live blocks.
 *
 * 1. seed: the seeded test chain (EDR, in this process) plus the history of `scaleChain.ts`;
 * 2. the real service as `npm start` runs it (built, its Node flags; every role) as its own process on a fresh database (`DATABASE_URL`,
 *    default the local server), one API key per account, every wallet added with `POST /v1/wallets`;
 * 3. backfill: until every wallet's backfill is done; build: until every account's ledger build is stored and no
 *    transfer waits for classification;
 * 4. live: one purchase at a time in a new block, timed until `GET /v1/positions?wallet=` shows it.
 * Each phase prints its wall time, the service's CPU time, its RSS at the end and its peak, as it goes.
 */
import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import type { Hex } from "viem"
import { startSeededNode, toJson } from "../chain/seed.js"
import { freePort, ready, ROOT, waitFor } from "../support/Processes.js"
import { buyOne, EXCHANGE, walletAddress, writeHistory } from "./scaleChain.js"
import { startCommand } from "./startCommand.js"

const arg = (name: string, fallback: number) => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`))
  return given === undefined ? fallback : Number(given.slice(name.length + 3).replaceAll("_", ""))
}
const EVENTS = arg("events", 1_000_000)
const WALLETS = arg("wallets", 1_000)
const ACCOUNTS = arg("accounts", 100)
const PER_TX = arg("per-tx", 1_000)
const LIVE = arg("live", 5)
const SECRET = "bench-scale-key-hash-secret"
const MB = 1024 * 1024

const procStat = (pid: number) => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return { rss: kb("VmRSS"), peak: kb("VmHWM"), cpu: (Number(fields[11]) + Number(fields[12])) / 100 }
}
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const load = () => Os.loadavg()[0]!.toFixed(1)

const main = Effect.gen(function*() {
  console.log(
    `bench:scale: ${EVENTS.toLocaleString("en")} events, ${WALLETS} wallets, ${ACCOUNTS} accounts, ` +
      `${PER_TX} logs per transaction; ${Os.cpus().length} cores, load average ${load()}`
  )
  // 1. The chain.
  let started = performance.now()
  const { node, tokenList, manifest } = yield* Effect.promise(() => startSeededNode())
  yield* Effect.addFinalizer(() => Effect.promise(() => node.close()))
  const tokens = manifest.tokens.filter((t) => t.feedAddress !== undefined).map((t) => t.address as Hex)
  let lastPrint = performance.now()
  const history = yield* Effect.promise(() =>
    writeHistory({
      node,
      tokens,
      wallets: WALLETS,
      events: EVENTS,
      perTx: PER_TX,
      startTime: manifest.headTimestamp + 3600,
      progress: (done) => {
        if (performance.now() - lastPrint < 15_000) return
        lastPrint = performance.now()
        console.log(`  seed: ${done.toLocaleString("en")} events in ${s(performance.now() - started)}`)
      }
    })
  )
  const head = yield* Effect.promise(() => node.blockNumber())
  console.log(
    `seed: ${history.events.toLocaleString("en")} events in ${history.transactions} transactions, ` +
      `${history.multiplierChanges} multiplier changes, head block ${head}: ${s(performance.now() - started)}`
  )

  // 2. The database, the keys, the service.
  const url = yield* TestDatabase.postgresUrl
  const database = Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
  const context = yield* Layer.build(
    ApiKeys.Default.pipe(
      Layer.provideMerge(AccountsRepo.Default),
      Layer.provideMerge(Layer.succeed(KeyHashSecret, Redacted.make(SECRET))),
      Layer.provideMerge(database)
    )
  )
  const apiKeys = yield* Effect.provide(ApiKeys, context)
  const keys = yield* Effect.forEach(
    Array.from({ length: ACCOUNTS }, (_, a) => a),
    (a) => Effect.map(apiKeys.create(`bench-scale-${a}`), (created) => created.key)
  ).pipe(Effect.orDie)
  const sql = yield* Effect.provide(SqlClient.SqlClient, context)
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-scale-"))
  const tokenListPath = Path.join(dir, "tokens.json")
  Fs.writeFileSync(tokenListPath, toJson(tokenList))
  const contractListPath = Path.join(dir, "contracts.json")
  Fs.writeFileSync(
    contractListPath,
    JSON.stringify([{ chainId: node.chainId, address: EXCHANGE, kind: "exchange", name: "Bench exchange" }])
  )
  const port = yield* Effect.promise(freePort)
  const logPath = Path.join(dir, "service.log")
  const log = Fs.openSync(logPath, "w")
  const service = spawn(
    process.execPath,
    startCommand(),
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: url,
        KEY_HASH_SECRET: SECRET,
        PORT: String(port),
        MCP_PORT: String(yield* Effect.promise(freePort)),
        HOST: "127.0.0.1",
        RPC_URL: node.wsUrl,
        CHAIN_ID: String(node.chainId),
        TOKEN_LIST: tokenListPath,
        CONTRACT_LIST: contractListPath,
        FINALITY_DEPTH: "5",
        FX_REFRESH: "off",
        RATE_LIMIT_PER_MINUTE: "0"
      },
      stdio: ["ignore", log, log]
    }
  )
  const exited = new Promise((resolve) => service.once("exit", resolve))
  yield* Effect.addFinalizer(() =>
    Effect.promise(async () => {
      service.kill("SIGTERM")
      await exited
      Fs.closeSync(log)
      if (process.env.BENCH_KEEP_LOG === undefined) Fs.rmSync(dir, { recursive: true, force: true })
      else console.log(`service log: ${logPath}`)
    })
  )
  yield* Effect.promise(() => ready(port).then(() => undefined, () => ready(port)))
  const base = `http://127.0.0.1:${port}`
  const pid = service.pid!
  const accountOf = (w: number) => w % ACCOUNTS
  const auth = (w: number) => ({ authorization: `Bearer ${keys[accountOf(w)]!}` })

  // This process's CPU is mostly the chain node's (EDR) answering the service.
  let nodeCpu = process.cpuUsage()
  const phase = (name: string, since: number, cpuBefore: number, extra = "") => {
    const now = procStat(pid)
    const used = process.cpuUsage(nodeCpu)
    nodeCpu = process.cpuUsage()
    console.log(
      `${name}: ${s(performance.now() - since)} wall, service CPU ${(now.cpu - cpuBefore).toFixed(1)} s, ` +
        `chain node and bench CPU ${((used.user + used.system) / 1e6).toFixed(1)} s, ` +
        `RSS ${mb(now.rss)} (peak so far ${mb(now.peak)}); load average ${load()}${extra}`
    )
    return now.cpu
  }
  const count = (query: Effect.Effect<ReadonlyArray<{ n: string }>, unknown>) =>
    Effect.map(Effect.orDie(query), (rows) => Number(rows[0]!.n))
  const poll = <A>(what: string, probe: Effect.Effect<A | undefined>, report: Effect.Effect<string>) =>
    Effect.gen(function*() {
      let printed = performance.now()
      for (;;) {
        const value = yield* probe
        if (value !== undefined) return value
        if (performance.now() - printed > 15_000) {
          printed = performance.now()
          const now = procStat(pid)
          console.log(`  ${what}: ${yield* report}; RSS ${mb(now.rss)}, service CPU ${now.cpu.toFixed(0)} s`)
        }
        if (service.exitCode !== null) return yield* Effect.dieMessage(`the service exited; see ${logPath}`)
        yield* Effect.sleep("500 millis")
      }
    })

  // The recorder begins at the first new head it sees; a live chain gives one at once, this idle one is given one.
  yield* poll(
    "recorder start",
    Effect.flatMap(
      count(sql`SELECT count(*) AS n FROM chain_cursors`),
      (n) => (n > 0 ? Effect.succeed(true) : Effect.as(Effect.promise(() => node.mine(1)), undefined))
    ),
    Effect.succeed("waiting")
  )

  started = performance.now()
  let cpu = procStat(pid).cpu
  yield* Effect.forEach(
    Array.from({ length: WALLETS }, (_, w) => w),
    (w) =>
      Effect.promise(async () => {
        const response = await fetch(`${base}/v1/wallets`, {
          method: "POST",
          headers: { ...auth(w), "content-type": "application/json" },
          body: JSON.stringify({ address: walletAddress(w), label: `w${w}`, self: true })
        })
        if (response.status !== 201) throw new Error(`POST /v1/wallets answered ${response.status}`)
      }),
    { concurrency: 8, discard: true }
  )
  cpu = phase(`wallets added (${WALLETS} POST /v1/wallets)`, started, cpu)

  // 3. Backfill, then builds.
  const backfillsLeft = count(sql`SELECT count(*) AS n FROM wallet_backfills WHERE phase <> 'done'`)
  const transfers = count(sql`SELECT count(*) AS n FROM token_transfers`)
  yield* poll(
    "backfill",
    Effect.map(backfillsLeft, (n) => (n === 0 ? true : undefined)),
    Effect.map(
      Effect.all([backfillsLeft, transfers]),
      ([left, n]) => `${WALLETS - left} of ${WALLETS} wallets done, ${n.toLocaleString("en")} transfers stored`
    )
  )
  const stored = yield* transfers
  cpu = phase(
    "backfill",
    started,
    cpu,
    `; ${stored.toLocaleString("en")} transfers stored, ${
      Math.round(stored / ((performance.now() - started) / 1000)).toLocaleString("en")
    }/s`
  )
  const buildStart = performance.now()
  // Built: every account's build is at least the version asked for when the last backfill ended. Classification
  // goes on after it, and each classified batch asks for another build, so "no build due" would wait for it.
  const builds = Effect.orDie(
    sql<{ account_id: string; requested_version: string; built_version: string; status: string }>`
      SELECT account_id, requested_version, built_version, status FROM ledger_builds`
  )
  const wanted = new Map((yield* builds).map((b) => [b.account_id, Number(b.requested_version)]))
  const buildsLeft = Effect.map(
    builds,
    (rows) => rows.filter((b) => b.status !== "ready" || Number(b.built_version) < wanted.get(b.account_id)!).length
  )
  const unclassified = count(sql`SELECT count(*) AS n FROM transfer_classifications WHERE status = 'pending'`)
  yield* poll(
    "build",
    Effect.map(buildsLeft, (b) => (b === 0 ? true : undefined)),
    Effect.map(Effect.all([buildsLeft, unclassified]), ([b, c]) => `${b} builds due, ${c} transfers to classify`)
  )
  const queuedAtBuild = yield* unclassified
  const classifyStart = performance.now()
  cpu = phase("build (after the backfill)", buildStart, cpu, `; ${queuedAtBuild} transfers still to classify`)
  console.log(`backfill and build: ${s(performance.now() - started)}`)

  // The figures the API shows are the chain's: every tenth wallet's balances of every token.
  const balanceOf = (w: number, token: string) =>
    Effect.promise(async () => {
      const response = await fetch(`${base}/v1/positions?wallet=${walletAddress(w)}`, { headers: auth(w) })
      const body = await response.json() as { positions?: Array<{ token: string; balance: string }> }
      if (response.status !== 200) throw new Error(`GET /v1/positions answered ${response.status}`)
      const symbol = tokenList.tokens.find((t) => t.address.toLowerCase() === token.toLowerCase())!.symbol
      return body.positions!.find((p) => p.token === symbol)?.balance ?? "0"
    })
  let checked = 0
  for (let w = 0; w < WALLETS; w += 10) {
    for (const token of tokens) {
      const expected = Number(history.balances.get(token)![w]! / 10n ** 18n)
      const shown = Number(yield* balanceOf(w, token))
      if (shown !== expected) {
        return yield* Effect.dieMessage(`wallet ${w} shows ${shown} of ${token}; the chain has ${expected}`)
      }
      checked++
    }
  }
  console.log(`reads: ${checked} wallet balances shown by GET /v1/positions?wallet= match the chain`)

  /** What a live block that never reached reads left behind: where the recorder, the transfer and the build stand. */
  const liveState = (address: string, block: number) =>
    Effect.gen(function*() {
      const rows = yield* Effect.orDie(Effect.all([
        sql`SELECT name, block FROM chain_cursors`,
        sql`SELECT t.block, c.status AS classification FROM token_transfers t
            LEFT JOIN transfer_classifications c USING (chain_id, tx_hash, log_index)
            WHERE t.to_key = ${address.toLowerCase()} AND t.block >= ${block}`,
        sql`SELECT b.* FROM ledger_builds b JOIN wallets w USING (account_id) WHERE w.address_key = ${address.toLowerCase()}`
      ]))
      console.log(`the live block ${block} to ${address} is not on reads; node head ${yield* Effect.promise(() =>
        node.blockNumber()
      )}`)
      for (const row of rows.flat()) {
        console.log(`  ${JSON.stringify(row)}`)
      }
    })

  // 4. Live blocks.
  const lags: Array<number> = []
  const liveStart = performance.now()
  for (let i = 0; i < LIVE; i++) {
    const w = Math.floor(((i + 0.5) * WALLETS) / LIVE)
    const token = tokens[i % tokens.length]!
    const before = Number(yield* balanceOf(w, token))
    yield* Effect.promise(() => buyOne(node, token, walletAddress(w)))
    const mined = performance.now()
    const minedBlock = yield* Effect.promise(() => node.blockNumber())
    yield* Effect.tryPromise(() =>
      waitFor("the live block on reads", async () => {
        const shown = Number(await Effect.runPromise(balanceOf(w, token)))
        return shown === before + 1 || undefined
      }, 120_000)
    ).pipe(Effect.tapError(() => liveState(walletAddress(w), minedBlock)), Effect.orDie)
    lags.push(performance.now() - mined)
  }
  const sorted = [...lags].sort((a, b) => a - b)
  phase(
    `live (${LIVE} blocks)`,
    liveStart,
    cpu,
    `; block to GET /v1/positions: ${lags.map((l) => `${Math.round(l)}`).join(", ")} ms (median ${
      Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)
    } ms, max ${Math.round(sorted.at(-1) ?? 0)} ms)`
  )
  // Classification runs on after the builds (balances do not wait for it; a classified sale rebuilds its account).
  const queued = yield* unclassified
  const classified = yield* count(sql`SELECT count(*) AS n FROM transfer_classifications WHERE status = 'done'`)
  console.log(
    `classification: ${classified.toLocaleString("en")} transfers classified, ${queued.toLocaleString("en")} queued ` +
      `(${queuedAtBuild.toLocaleString("en")} when the build phase ended, ${
        s(performance.now() - classifyStart)
      } before)`
  )
  yield* Effect.sleep("10 seconds")
  const end = procStat(pid)
  console.log(
    `service RSS idle 10 s later: ${mb(end.rss)}; peak over the whole run ${mb(end.peak)} ` +
      `(must reach <= 400 MB: ${end.peak <= 400 * MB ? "OK" : "OVER"}; aim 300 MB); service CPU ${
        end.cpu.toFixed(1)
      } s in all`
  )
}).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))

Effect.runPromise(main).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
