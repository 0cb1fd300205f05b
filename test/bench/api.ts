/**
 * `npm run bench:api`: the REST service (`npm start -- --api`, its own process, on a fresh PostgreSQL database at
 * `DATABASE_URL`, default the local server) with one account holding one wallet with history, and beside it a
 * hello-world Effect `HttpApi` server (`helloServer.ts`, same stack) in another process. This process loads each
 * with autocannon, 32 connections over loopback: `GET /v1/positions`, `GET /v1/portfolio`, `GET /hello`, and prints
 * requests/s, p50/p99 latency and the ratio to the hello-world server. `BENCH_SECONDS` (default 10) per run,
 * `BENCH_EVENTS` (default 2,000) the wallet's history; `BENCH_PROFILE=1` starts the service with `--cpu-prof`
 * (profiles in ./profiles).
 */
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { freePort, ready, ROOT, waitFor } from "../support/Processes.js"
import { BENCH_CHAIN, seedApiAccount } from "./apiAccount.js"

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000)
const PROFILE = process.env.BENCH_PROFILE === "1"
const CONNECTIONS = 32
const SECRET = "bench-api-key-hash-secret"

interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly p50: number; readonly p99: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}
const autocannon = createRequire(import.meta.url)("autocannon") as (
  options: {
    readonly url: string
    readonly connections: number
    readonly duration: number
    readonly headers?: Record<string, string>
  }
) => Promise<AutocannonResult>

const node = (script: string, env: Record<string, string>, flags: ReadonlyArray<string> = []): ChildProcess =>
  spawn(process.execPath, [...flags, "--import", "tsx", Path.join(ROOT, script), ...(env.ARGS ?? "").split(" ")], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"]
  })

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 10 ms). */
const cpuOf = (pid: number): number => {
  const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * A warm-up (JIT, connection pools), then the measured run; besides the rates, the server process's CPU time per
 * answered request, which the other load on a shared machine moves far less than requests per second.
 */
const load = async (pid: number, url: string, key?: string) => {
  const headers = key === undefined ? undefined : { authorization: `Bearer ${key}` }
  await autocannon({ url, connections: CONNECTIONS, duration: 2, ...(headers ? { headers } : {}) })
  const cpuBefore = cpuOf(pid)
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...(headers ? { headers } : {}) })
  const cpu = cpuOf(pid) - cpuBefore
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
    cpuUsPerRequest: result.requests.total > 0 ? (cpu * 1e6) / result.requests.total : 0
  }
}

const line = (
  name: string,
  r: Awaited<ReturnType<typeof load>>,
  reference?: { readonly rps: number; readonly cpuUsPerRequest: number }
) =>
  `${name.padEnd(18)} ${Math.round(r.rps).toLocaleString("en").padStart(7)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
  `server CPU ${Math.round(r.cpuUsPerRequest)} µs/request` +
  (r.bad > 0 ? `, ${r.bad} not 2xx/errors` : "") +
  (reference === undefined
    ? ""
    : `; ${(100 * r.rps / reference.rps).toFixed(0)} % of hello-world's rate, ${
      (100 * reference.cpuUsPerRequest / r.cpuUsPerRequest).toFixed(0)
    } % by CPU per request`)

const main = Effect.gen(function*() {
  const url = yield* TestDatabase.postgresUrl
  const database = Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
  const { key, positions } = yield* Effect.gen(function*() {
    const seeded = yield* seedApiAccount("bench-api", EVENTS)
    const created = yield* (yield* ApiKeys).create("bench-api")
    return { key: created.key, positions: seeded.positions }
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        AccountsRepo.Default,
        WalletsRepo.Default,
        LedgerInputs.Default,
        LedgerStore.Default,
        FxRates.Default,
        ApiKeys.Default
      ).pipe(
        Layer.provideMerge(Layer.mergeAll(
          ChainConfig.layer({ rpcUrls: ["http://127.0.0.1:1"], chainId: BENCH_CHAIN }),
          Layer.succeed(KeyHashSecret, Redacted.make(SECRET))
        )),
        Layer.provideMerge(database)
      )
    ),
    Effect.orDie
  )

  const servicePort = yield* Effect.promise(freePort)
  const helloPort = yield* Effect.promise(freePort)
  const service = node("packages/server/src/main.ts", {
    ARGS: "--api",
    DATABASE_URL: url,
    KEY_HASH_SECRET: SECRET,
    PORT: String(servicePort),
    HOST: "127.0.0.1",
    CHAIN_ID: String(BENCH_CHAIN),
    // The limiter stays on (its cost is measured) with a limit the load does not reach.
    RATE_LIMIT_PER_MINUTE: "100000000"
  }, PROFILE ? ["--cpu-prof", "--cpu-prof-dir=profiles"] : [])
  const hello = node("test/bench/helloServer.ts", { PORT: String(helloPort) })
  yield* Effect.addFinalizer(() =>
    Effect.promise(async () => {
      for (const child of [service, hello]) {
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill("SIGINT")
        await exited
      }
    })
  )
  yield* Effect.promise(() => ready(servicePort))
  yield* Effect.promise(() =>
    waitFor("the hello-world server", async () => (await fetch(`http://127.0.0.1:${helloPort}/hello`)).ok || undefined)
  )
  const check = yield* Effect.promise(() =>
    fetch(`http://127.0.0.1:${servicePort}/v1/positions`, { headers: { authorization: `Bearer ${key}` } })
  )
  const text = yield* Effect.promise(() => check.text())
  const portfolioBytes = (yield* Effect.promise(() =>
    fetch(`http://127.0.0.1:${servicePort}/v1/portfolio`, { headers: { authorization: `Bearer ${key}` } })
      .then((r) =>
        r.arrayBuffer()
      )
  )).byteLength
  const body = JSON.parse(text) as { positions?: Array<unknown> }
  if (check.status !== 200 || body.positions?.length !== positions || positions === 0) {
    return yield* Effect.dieMessage(`GET /v1/positions answered ${check.status}: ${JSON.stringify(body)}`)
  }
  console.log(
    `one wallet, ${EVENTS.toLocaleString("en")} transfers, ${positions} positions on PostgreSQL ` +
      `(answers of ${Buffer.byteLength(text).toLocaleString("en")} and ${
        portfolioBytes.toLocaleString("en")
      } bytes); ` +
      `${CONNECTIONS} connections, ${SECONDS} s per run; load average ${
        Os.loadavg()[0]!.toFixed(1)
      } on ${Os.cpus().length} cores`
  )
  const api = `http://127.0.0.1:${servicePort}`
  if (process.env.BENCH_ONLY !== undefined) {
    // One path alone (for a profile of it): `BENCH_ONLY=/v1/positions`.
    const only = yield* Effect.promise(() => load(service.pid!, `${api}${process.env.BENCH_ONLY}`, key))
    console.log(line(`GET ${process.env.BENCH_ONLY}`, only))
    return
  }
  const helloRun = yield* Effect.promise(() => load(hello.pid!, `http://127.0.0.1:${helloPort}/hello`))
  const positionsRun = yield* Effect.promise(() => load(service.pid!, `${api}/v1/positions`, key))
  const portfolioRun = yield* Effect.promise(() => load(service.pid!, `${api}/v1/portfolio`, key))
  // The service's edge alone (request id, checks, the log line; no key, no database): the ceiling of the others.
  const healthRun = yield* Effect.promise(() => load(service.pid!, `${api}/healthz`))
  // Hello-world again: the machine is shared, so the reference is the mean of a run before and one after.
  const helloAfter = yield* Effect.promise(() => load(hello.pid!, `http://127.0.0.1:${helloPort}/hello`))
  const reference = {
    rps: (helloRun.rps + helloAfter.rps) / 2,
    cpuUsPerRequest: (helloRun.cpuUsPerRequest + helloAfter.cpuUsPerRequest) / 2
  }
  console.log(line("hello-world", helloRun))
  console.log(line("GET /v1/positions", positionsRun, reference))
  console.log(line("GET /v1/portfolio", portfolioRun, reference))
  console.log(line("GET /healthz", healthRun, reference))
  console.log(line("hello-world again", helloAfter))
  const ratio = positionsRun.rps / reference.rps
  console.log(
    `positions: ${(100 * ratio).toFixed(0)} % of hello-world (must reach 40 %): ${ratio >= 0.4 ? "OK" : "UNDER"}`
  )
}).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))

Effect.runPromise(main).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
