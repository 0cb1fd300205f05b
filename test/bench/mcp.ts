/**
 * `npm run bench:mcp`: the service started as `npm start -- --api --mcp` does (its own process, on PostgreSQL:
 * `DATABASE_URL`, default the local server, a fresh database), one account with one wallet whose history is
 * `BENCH_TOKENS` tokens (default 10) of 100 movements each plus quarterly dividend steps, then autocannon against
 * `GET /v1/positions` and `tools/call get_positions` (the same `LedgerQueries.positions` behind both), one after the
 * other in the same run: `BENCH_ROUNDS` (default 3) alternating rounds of `BENCH_SECONDS` each (default 5) with
 * `BENCH_CONNECTIONS` (default 10), so that a change of the machine's load hits both alike; the median round of each
 * is printed last. The rate limit is off (`RATE_LIMIT_PER_MINUTE=0`) and logging at warning level, so the figures
 * are the reads themselves.
 */
import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, PriceTable } from "@scaledger/domain/ledger/LedgerInput"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import autocannon from "autocannon"
import { Effect, Either, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { freePort, ready, runEntry } from "../support/Processes.js"

const TOKENS = Number(process.env.BENCH_TOKENS ?? 10)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const KEY_HASH_SECRET = "bench-key-hash-secret-0123456789abcdef"
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const EXCHANGE = "0x00000000000000000000000000000000000000e1"
const DAY = 86_400
const START = Date.UTC(2025, 0, 2, 15) / 1000

const hex = (n: number, width: number) => `0x${n.toString(16).padStart(width, "0")}`

/** Per token: 70 purchases and 30 sales over 200 days, a dividend step each quarter, a feed round a day. */
const history = () => {
  const events: Array<LedgerEvent> = []
  const prices: Record<string, Array<{ roundId: string; answer: string; updatedAt: number; feed: string }>> = {}
  let block = 1
  for (let t = 0; t < TOKENS; t++) {
    const symbol = `TK${t}`
    const tokenAddress = hex(0xa000 + t, 40)
    prices[symbol] = Array.from({ length: 201 }, (_, d) => ({
      roundId: String(d + 1),
      answer: String((100 + t + (d % 17)) * 1e8),
      updatedAt: START - 3_600 + d * DAY,
      feed: hex(0xf000 + t, 40)
    }))
    for (let i = 0; i < 100; i++) {
      const sale = i % 10 >= 7
      events.push({
        kind: "transfer",
        id: `${symbol}-${i}`,
        token: symbol,
        tokenAddress,
        from: sale ? WALLET : EXCHANGE,
        to: sale ? EXCHANGE : WALLET,
        raw: ((sale ? 1n : 2n) * 10n ** 18n).toString(),
        block: block++,
        logIndex: 0,
        txHash: hex(block, 64),
        timestamp: START + i * 2 * DAY + t * 60,
        classification: {
          type: sale ? "transfer.out" : "transfer.in",
          relationship: "exchange",
          classifiedBy: "user",
          confirmed: true
        }
      })
      if (i % 45 === 44) {
        events.push({
          kind: "multiplier",
          id: `${symbol}-step-${i}`,
          token: symbol,
          tokenAddress,
          from: (10n ** 18n + BigInt(i) * 10n ** 14n).toString(),
          to: (10n ** 18n + BigInt(i + 45) * 10n ** 14n).toString(),
          effectiveAt: START + i * 2 * DAY + DAY / 2,
          block: block++,
          logIndex: -1,
          stepKind: "dividend"
        })
      }
    }
  }
  events.sort((a, b) => a.block - b.block)
  return { events, prices: prices as PriceTable }
}

/** Stores the account's build as the ledger worker would, and returns its API key. */
const seed = Effect.gen(function*() {
  const { key } = yield* (yield* ApiKeys).create("bench-mcp")
  const account = Option.getOrThrow(yield* (yield* AccountsRepo).findByName("bench-mcp"))
  yield* (yield* WalletsRepo).insert({
    accountId: account.id,
    address: WALLET,
    label: "bench",
    self: true,
    watchingFromBlock: null,
    watchingFromAt: null,
    chainId: 4663
  })
  const { events, prices } = history()
  const report = Either.getOrThrow(Ledger.run({
    wallets: [{ address: WALLET, self: true }],
    country: "US",
    prices,
    events,
    asOf: START + 201 * DAY
  }))
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO ledger_builds (account_id, lease_owner, lease_until)
             VALUES (${account.id}, 'bench', now() + interval '1 hour')
             ON CONFLICT (account_id) DO UPDATE SET lease_owner = 'bench', lease_until = now() + interval '1 hour'`
  const { disposals, income, lots, movements, positions, splits: _, ...summary } = report
  const blockOf = (row: (typeof movements)[number] | (typeof income)[number]) =>
    row.type === "income.multiplier_increase" ? row.block : row.walletTransaction.block
  const rows = [...movements, ...income].sort((a, b) => blockOf(a) - blockOf(b))
  yield* (yield* LedgerStore).store(account.id, "bench", 1, {
    report: summary,
    positions: positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
    lots: lots.map((row) => ({ token: row.token, row })),
    disposals: disposals.map((row) => ({ token: row.token, day: row.date, row })),
    events: rows.map((row) => ({
      id: row.id,
      type: row.type,
      token: row.token,
      day: row.date,
      needsReview: row.needsReview,
      row
    }))
  })
  return { key, positions: positions.length, events: rows.length }
})

const run = (options: autocannon.Options) =>
  Effect.promise(() => autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options }))

const program = Effect.gen(function*() {
  const url = yield* TestDatabase.postgresUrl
  const database = Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
  const seeded = yield* seed.pipe(
    Effect.provide(Layer.mergeAll(ApiKeys.Default, AccountsRepo.Default, WalletsRepo.Default, LedgerStore.Default)),
    Effect.provide(Layer.succeed(KeyHashSecret, Redacted.make(KEY_HASH_SECRET))),
    Effect.provide(database),
    Effect.orDie
  )
  const [port, mcpPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-bench-"))
  const server = yield* Effect.acquireRelease(
    Effect.sync(() =>
      runEntry("main", ["--api", "--mcp"], {
        DATABASE_URL: url,
        PORT: String(port),
        MCP_PORT: String(mcpPort),
        HOST: "127.0.0.1",
        RATE_LIMIT_PER_MINUTE: "0",
        KEY_HASH_SECRET,
        SCALEDGER_DATA_DIR: dataDir,
        LOG_LEVEL: "warning"
      })
    ),
    (server) =>
      Effect.promise(async () => {
        server.child.kill("SIGTERM")
        await server.exited
        Fs.rmSync(dataDir, { recursive: true, force: true })
      })
  )
  yield* Effect.promise(() => ready(port)).pipe(
    Effect.catchAllDefect((e) => Effect.dieMessage(`server did not start: ${String(e)}\n${server.output()}`))
  )
  const authorization = `Bearer ${seeded.key}`
  const rest = yield* Effect.promise(() =>
    fetch(`http://127.0.0.1:${port}/v1/positions`, { headers: { authorization } }).then((r) => r.json())
  )
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_positions" } })
  const mcpHeaders = { authorization, "content-type": "application/json", accept: "application/json" }
  const tool = yield* Effect.promise(() =>
    fetch(`http://127.0.0.1:${mcpPort}/mcp`, { method: "POST", headers: mcpHeaders, body }).then((r) =>
      r.json() as Promise<any>
    )
  )
  const { evidence: _, ...figures } = tool.result.structuredContent
  if (JSON.stringify(figures) !== JSON.stringify(rest)) {
    return yield* Effect.dieMessage("get_positions and GET /v1/positions disagree; not benchmarking")
  }
  console.log(
    `one wallet: ${seeded.positions} positions, ${seeded.events} events; ${CONNECTIONS} connections, ${SECONDS} s each`
  )
  // Warm-up of both paths (JIT, connection pool), not counted.
  yield* run({ url: `http://127.0.0.1:${port}/v1/positions`, headers: { authorization }, duration: 2 })
  yield* run({ url: `http://127.0.0.1:${mcpPort}/mcp`, method: "POST", headers: mcpHeaders, body, duration: 2 })
  const line = (name: string, result: autocannon.Result) =>
    `${name.padEnd(30)} ${result.requests.average.toFixed(0).padStart(6)} req/s   p50 ${
      String(result.latency.p50).padStart(4)
    } ms   p99 ${String(result.latency.p99).padStart(4)} ms   non-2xx ${result.non2xx}   errors ${result.errors}`
  const restRuns: Array<autocannon.Result> = []
  const mcpRuns: Array<autocannon.Result> = []
  for (let round = 1; round <= ROUNDS; round++) {
    restRuns.push(yield* run({ url: `http://127.0.0.1:${port}/v1/positions`, headers: { authorization } }))
    mcpRuns.push(yield* run({ url: `http://127.0.0.1:${mcpPort}/mcp`, method: "POST", headers: mcpHeaders, body }))
    console.log(`round ${round}`)
    console.log(`  ${line("GET /v1/positions", restRuns[restRuns.length - 1]!)}`)
    console.log(`  ${line("tools/call get_positions", mcpRuns[mcpRuns.length - 1]!)}`)
  }
  const median = (runs: ReadonlyArray<autocannon.Result>) =>
    [...runs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(runs.length / 2)]!
  console.log(`median of ${ROUNDS} rounds`)
  console.log(`  ${line("GET /v1/positions", median(restRuns))}`)
  console.log(`  ${line("tools/call get_positions", median(mcpRuns))}`)
})

Effect.runPromise(
  program.pipe(Effect.scoped, Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))
).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
