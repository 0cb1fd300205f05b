/**
 * `npm run bench:ledger`: the time to rebuild an account's ledger from the database (load the chain record, run
 * the ledger, store the derived records) for accounts of 10,000, 100,000 and 1,000,000 events, beside the time
 * of the pure ledger alone on the same events, so the ratio can be read off; then the time the ledger worker takes
 * for one new block after that rebuild (an incremental build from its checkpoint). Runs on PostgreSQL
 * (`DATABASE_URL`, default the local server). Sizes can be chosen: `npm run bench:ledger -- 10000 100000`.
 */
import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Backfills } from "@scaledger/db/chain/Backfills"
import * as Database from "@scaledger/db/Database"
import { FxRates } from "@scaledger/db/FxRates"
import { invalidateLedgers, requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { SaleEstimator } from "@scaledger/db/market/SaleEstimator"
import { BasisBodies } from "@scaledger/db/reads/BasisBody"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, PriceTable } from "@scaledger/domain/ledger/LedgerInput"
import type { Position } from "@scaledger/domain/ledger/LedgerReport"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import {
  buildLedger,
  LedgerBuilderSettings,
  LedgerPricesLive,
  makeLedgerBuilder
} from "@scaledger/workers/ledger/LedgerBuilder"
import { Chunk, ConfigProvider, Effect, Layer, Logger, LogLevel, Redacted, Stream } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { performance } from "node:perf_hooks"
import { getHeapStatistics } from "node:v8"

const CHAIN = 31337
const TOKENS = ["AAPL", "CRWD", "SGOV", "MU", "TSLA"]
const BASE_TIME = Date.UTC(2024, 0, 2) / 1000
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const SIZES = sizes.length > 0 ? sizes : [10_000, 100_000, 1_000_000]
/** `--repeat=N`: the pure ledger and the stored full rebuild each made N times (alternately), their medians printed. */
const repeatArg = process.argv.find((arg) => arg.startsWith("--repeat="))
const REPEAT = repeatArg === undefined ? 1 : Math.max(1, Number(repeatArg.slice("--repeat=".length)))
/** New blocks timed after the first one that follows the full rebuild. */
const LATER_BLOCKS = 9
/** `--profile=<file>`: a CPU profile of the new blocks' builds only (open it in Chrome's DevTools). */
const profileFile = process.argv.find((arg) => arg.startsWith("--profile="))?.slice("--profile=".length)
/** `--profile-rebuild=<file>`: a CPU profile of the stored full rebuild only. */
const rebuildProfileFile = process.argv.find((arg) => arg.startsWith("--profile-rebuild="))?.slice(
  "--profile-rebuild=".length
)

/** Runs `effect` under the CPU profiler when `file` is given, writing the profile to `file`. */
const profiled = <A, E, R>(file: string | undefined, effect: Effect.Effect<A, E, R>) =>
  file === undefined ? effect : Effect.acquireUseRelease(
    Effect.promise(async () => {
      const session = new Session()
      session.connect()
      await session.post("Profiler.enable")
      await session.post("Profiler.start")
      return session
    }),
    () => effect,
    (session) =>
      Effect.promise(async () => {
        const { profile } = await session.post("Profiler.stop")
        writeFileSync(file, JSON.stringify(profile))
        session.disconnect()
      })
  )

const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const tokenAddress = (t: number) => hex40(0xa000 + t)

/** Synthetic prices: a round per token every 500 blocks (every ~8 minutes of chain time). */
const prices = (events: number): PriceTable =>
  Object.fromEntries(TOKENS.map((symbol, t) => [
    symbol,
    Array.from({ length: Math.ceil(events / 500) + 1 }, (_, r) => ({
      roundId: String(r + 1),
      answer: String((100 + t * 10 + (r % 50)) * 1e8),
      updatedAt: BASE_TIME + r * 500 - 1,
      feed: hex40(0xf000 + t)
    }))
  ]))

/**
 * An account of `events` transfers over two own addresses, as an active trader's would be: per token, cycles of ten
 * (three purchases to the first address, a move to the second, two sales, a purchase to the second, a sale from it,
 * a move back, a purchase from the exchange), so that one lot in ten stays open; five tokens, with a dividend
 * step per token every 20,000 blocks (about quarterly for an account trading a few hundred times a day). Lots are
 * mostly sold again, so open lots grow slowly. Written with generate_series, the way a long history would sit in
 * the chain record.
 */
const seedAccount = (events: number, seed: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const w1 = hex40(0x100000 * seed + 1)
    const w2 = hex40(0x100000 * seed + 2)
    const exchange = hex40(0x100000 * seed + 3)
    const zero = hex40(0)
    const { account } = yield* (yield* AccountsRepo).findOrCreate(`bench-${events}`)
    for (const address of [w1, w2]) {
      yield* (yield* WalletsRepo).insert({
        accountId: account.id,
        address,
        label: "",
        self: true,
        watchingFromBlock: null,
        watchingFromAt: null,
        chainId: CHAIN
      })
    }
    for (const [t, symbol] of TOKENS.entries()) {
      yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, decimals, listed, is_stock)
                 VALUES (${CHAIN}, ${tokenAddress(t)}, ${tokenAddress(t)}, ${symbol}, 18, true, true)
                 ON CONFLICT DO NOTHING`
    }
    const offset = seed * 10_000_000
    yield* sql`
      INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key, to_key,
                                   from_address, to_address, raw)
      SELECT ${CHAIN}, '0x' || lpad(to_hex(${offset} + i), 64, '0'), 0, i, '0x' || lpad(to_hex(i), 64, '0'),
             to_timestamp(${BASE_TIME} + i), '0x' || lpad(to_hex(${0xa000} + (i / 10) % 5), 40, '0'),
             f, t, f, t,
             1000000000000000000
      FROM (
        SELECT i,
          CASE WHEN i % 10 < 3 THEN ${zero} WHEN i % 10 IN (3, 4, 5) THEN ${w1} WHEN i % 10 IN (6, 9) THEN ${exchange}
               ELSE ${w2} END AS f,
          CASE WHEN i % 10 < 3 THEN ${w1} WHEN i % 10 = 3 THEN ${w2} WHEN i % 10 IN (4, 5, 7) THEN ${exchange}
               WHEN i % 10 = 6 THEN ${w2} ELSE ${w1} END AS t
        FROM generate_series(1, ${events}) AS s(i)
      ) g`
    yield* sql`
      INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier, kind, status, source, block, block_time)
      SELECT ${CHAIN}, '0x' || lpad(to_hex(${0xa000} + k % 5), 40, '0'), to_timestamp(${BASE_TIME} + k * 4000),
             1000000000000000000 + (k / 5) * 100000000000000, 1000000000000000000 + (k / 5 + 1) * 100000000000000,
             'dividend', 'active', 'chain_storage', k * 4000, to_timestamp(${BASE_TIME} + k * 4000)
      FROM generate_series(1, ${Math.floor(events / 4000)}) AS s(k)
      ON CONFLICT DO NOTHING`
    // The rounds `prices(events)` lists, as the price recorder stores them: builds read them through the worker's
    // own price history (`LedgerPricesLive`), as the service does.
    yield* sql`
      INSERT INTO price_rounds (chain_id, feed_key, round_id, feed_address, token_key, answer, decimals, started_at,
                                updated_at, answered_in_round)
      SELECT ${CHAIN}, '0x' || lpad(to_hex(${0xf000} + t), 40, '0'), r + 1, '0x' || lpad(to_hex(${0xf000} + t), 40, '0'),
             '0x' || lpad(to_hex(${0xa000} + t), 40, '0'), (100 + t * 10 + r % 50)::numeric * 100000000, 8,
             to_timestamp(${BASE_TIME} + r * 500 - 1), to_timestamp(${BASE_TIME} + r * 500 - 1), r + 1
      FROM generate_series(0, ${TOKENS.length - 1}) AS g(t), generate_series(0, ${Math.ceil(events / 500)}) AS h(r)
      ON CONFLICT DO NOTHING`
    // What follows a backfill this size: its end summarizes the new block ranges, and autovacuum gathers the
    // statistics plans are chosen from within a minute.
    yield* (yield* Backfills).summarizeRecorded
    yield* sql`ANALYZE token_transfers`
    yield* sql`ANALYZE multiplier_changes`
    yield* sql`ANALYZE price_rounds`
    yield* requestReplay(account.id)
    return account.id
  })

/** CPU time of this process since `start` (GC threads included; the database server's time is not in it). */
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const cpu = process.cpuUsage(start)
  return (cpu.user + cpu.system) / 1000
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** A full collection where `--expose-gc` allows it (`npm run bench:ledger` passes it). */
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.()

/**
 * The process's resident memory at most since `residentPeakReset` (`VmHWM`; Linux, which resets it when "5" is
 * written to `/proc/self/clear_refs`), in MB.
 */
const residentPeakMb = () => {
  const status = readFileSync("/proc/self/status", "utf8")
  return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024)
}
const residentPeakReset = () => {
  try {
    writeFileSync("/proc/self/clear_refs", "5")
  } catch {
    // Not Linux, or not allowed: the peak then counts from the process's start.
  }
}

/** The heap in use (as `process.memoryUsage().heapUsed`, without its reading of the resident size: a tenth the cost). */
const heapUsed = () => getHeapStatistics().used_heap_size

/**
 * The most heap in use while it runs, sampled every 10 ms (a full build keeps its open lots and the chunk in hand;
 * the garbage collector decides when the rest goes: garbage not yet collected counts), in MB.
 */
const heapPeak = () => {
  collectGarbage()
  const startMb = Math.round(heapUsed() / 1e6)
  let peak = heapUsed()
  const timer = setInterval(() => {
    peak = Math.max(peak, heapUsed())
  }, 10)
  return {
    /** The heap in use when it started, after a full collection, in MB. */
    startMb,
    stop: () => {
      clearInterval(timer)
      return Math.round(Math.max(peak, heapUsed()) / 1e6)
    }
  }
}

/**
 * The most heap still in use after a full collection, sampled while it runs (what the work keeps alive, not the
 * garbage a large heap lets wait), in MB: a collection every 250 ms, or every four times as long as the last one
 * took (a heap of a million events' checkpoint takes long to walk). The collections slow the work: time it apart.
 */
const liveHeapPeak = () => {
  collectGarbage()
  const startMb = Math.round(heapUsed() / 1e6)
  let peak = heapUsed()
  let timer: NodeJS.Timeout | undefined
  const sample = () => {
    const start = performance.now()
    collectGarbage()
    peak = Math.max(peak, heapUsed())
    timer = setTimeout(sample, Math.max(250, 4 * (performance.now() - start)))
  }
  timer = setTimeout(sample, 250)
  return {
    startMb,
    stop: () => {
      clearTimeout(timer)
      return Math.round(peak / 1e6)
    }
  }
}

/** Records one more transfer in the next block, asks for a build as the recorder would, and times the worker's step. */
const newBlock = (
  events: number,
  seed: number,
  builder: Effect.Effect.Success<typeof makeLedgerBuilder>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const block = events + 1
    const w1 = hex40(0x100000 * seed + 1)
    const exchange = hex40(0x100000 * seed + 3)
    yield* sql`
      INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key, to_key,
                                   from_address, to_address, raw)
      VALUES (${CHAIN}, ${`0x${(seed * 10_000_000 + block).toString(16).padStart(64, "0")}`}, 0, ${block},
              ${`0x${block.toString(16).padStart(64, "0")}`}, to_timestamp(${BASE_TIME + block}), ${tokenAddress(0)},
              ${exchange}, ${w1}, ${exchange}, ${w1}, 1000000000000000000)`
    yield* invalidateLedgers({ chainId: CHAIN, addresses: [w1] })
    const incrementalBefore = builder.stats.incremental
    const { cpuMs, ms } = yield* profiled(
      profileFile === undefined ? undefined : `${profileFile}.${seed}.${block}.cpuprofile`,
      Effect.gen(function*() {
        const cpuStart = process.cpuUsage()
        const start = performance.now()
        yield* builder.poll
        return { ms: performance.now() - start, cpuMs: cpuMsSince(cpuStart) }
      })
    )
    return { ms, cpuMs, incremental: builder.stats.incremental > incrementalBefore }
  })

/** The pure ledger alone on the account's events, already in memory (loaded first, not timed). */
const pureLedger = (accountId: string, events: number, asOf: number) =>
  Effect.gen(function*() {
    const inputs = yield* (yield* LedgerInputs).load(accountId, CHAIN)
    const transfers = Chunk.toReadonlyArray(
      yield* Stream.runCollect((yield* LedgerInputs).transfers(accountId, CHAIN, inputs.tokens))
    )
    const all: Array<LedgerEvent> = [...transfers, ...inputs.multiplierEvents].sort((a, b) =>
      a.block - b.block || (a.kind === "multiplier" ? -1 : 0) - (b.kind === "multiplier" ? -1 : 0) ||
      a.logIndex - b.logIndex
    )
    const table = prices(events)
    collectGarbage()
    const cpuStart = process.cpuUsage()
    const start = performance.now()
    const state = yield* Ledger.build({
      wallets: inputs.wallets,
      country: inputs.country,
      prices: table,
      initialMultipliers: inputs.initialMultipliers,
      events: all
    })
    Ledger.report(state, asOf, { rows: false })
    const ms = performance.now() - start
    const cpu = process.cpuUsage(cpuStart)
    // CPU time of this process (GC threads included): less sensitive than wall time to other work on the machine.
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000 }
  })

const bench = Effect.gen(function*() {
  console.log(`ledger rebuild on PostgreSQL, sizes ${SIZES.map((n) => n.toLocaleString("en")).join(", ")}`)
  for (const [index, events] of SIZES.entries()) {
    const accountId = yield* seedAccount(events, index + 1)
    const asOf = BASE_TIME + events + 86_400

    // Each step keeps nothing alive for the next: one ledger state in memory at a time.
    const pure = yield* pureLedger(accountId, events, asOf)
    const computeStart = performance.now()
    yield* Effect.asVoid(buildLedger(accountId, CHAIN, asOf))
    const computeMs = performance.now() - computeStart
    // The due build (the wallets' creation asked for one), made and stored by the ledger worker's own step; with
    // `--repeat`, replays of it after the pure ledger again.
    const builder = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
    const pures: Array<{ readonly ms: number; readonly cpuMs: number }> = [pure]
    const rebuilds: Array<
      { readonly ms: number; readonly cpuMs: number; readonly heapMb: number; readonly rssMb: number }
    > = []
    for (let r = 0; r < REPEAT; r++) {
      if (r > 0) {
        pures.push(yield* pureLedger(accountId, events, asOf))
        yield* requestReplay(accountId)
      }
      const heap = heapPeak()
      residentPeakReset()
      const rebuildCpu = process.cpuUsage()
      const rebuildStart = performance.now()
      yield* profiled(
        rebuildProfileFile === undefined ? undefined : `${rebuildProfileFile}.${events}.${r}.cpuprofile`,
        builder.poll
      )
      rebuilds.push({
        ms: performance.now() - rebuildStart,
        cpuMs: cpuMsSince(rebuildCpu),
        heapMb: heap.stop(),
        rssMb: residentPeakMb()
      })
    }
    const median = (runs: ReadonlyArray<{ readonly ms: number; readonly cpuMs: number }>) => {
      const by = (key: "ms" | "cpuMs") => [...runs].map((run) => run[key]).sort((a, b) => a - b)[runs.length >> 1]!
      return { ms: by("ms"), cpuMs: by("cpuMs") }
    }
    const pureMs = median(pures).ms
    const pureCpuMs = median(pures).cpuMs
    const rebuildMs = median(rebuilds).ms
    const rebuildCpuMs = median(rebuilds).cpuMs
    const [stored] = yield* (yield* SqlClient.SqlClient)<
      { n: string }
    >`SELECT sum(count) AS n FROM ledger_event_pages WHERE account_id = ${accountId}`

    // The basis record of every token (`GET /v1/basis`), written from one snapshot into a spool and read back.
    const basisHeap = heapPeak()
    residentPeakReset()
    const basisStart = performance.now()
    const basis = yield* (yield* BasisBodies).basis(accountId)
    const basisBytes = yield* Stream.runFold(basis.body, 0, (n, chunk) => n + chunk.length)
    const basisMs = performance.now() - basisStart
    const basisHeapMb = basisHeap.stop()
    const basisRssMb = residentPeakMb()
    // Again, untimed, for what the record keeps alive while it is written and read back.
    const basisLive = liveHeapPeak()
    yield* Stream.runDrain((yield* (yield* BasisBodies).basis(accountId)).body)
    const basisLiveMb = basisLive.stop()

    // A sale estimate (`GET /v1/estimates/sale`) from the first address's lots of the first token: one share (FIFO
    // draws one lot), then the whole position (every lot of the pool).
    const estimator = yield* SaleEstimator
    const seller = hex40(0x100000 * (index + 1) + 1)
    const held = (yield* (yield* LedgerStore).positions(accountId)).map((row) => row as Position).find((p) =>
      p.token === TOKENS[0] && p.wallet === seller
    )!
    const estimate = (shares: string) =>
      Effect.gen(function*() {
        const heap = heapPeak()
        const start = performance.now()
        const sale = yield* estimator.estimate(accountId, { symbol: TOKENS[0]!, shares, wallet: seller })
        return { ms: performance.now() - start, heapMb: heap.stop(), startMb: heap.startMb, lots: sale.lots.length }
      })
    const oneShare = yield* estimate("1")
    const wholePosition = yield* estimate(held.sharesEquivalent)

    // One new block (a purchase into the first address), built by the same worker from its checkpoint; then more,
    // one at a time, as a live account receives them (the first also collects the full rebuild's garbage).
    const blockMs = yield* newBlock(events, index + 1, builder)
    const later: Array<{ readonly ms: number; readonly cpuMs: number; readonly incremental: boolean }> = []
    for (let k = 1; k <= LATER_BLOCKS; k++) later.push(yield* newBlock(events + k, index + 1, builder))
    const laterMs = later.map((b) => b.ms).sort((a, b) => a - b)

    console.log(
      `${events.toLocaleString("en").padStart(9)} events: pure ledger ${seconds(pureMs)} ` +
        `(${Math.round(events / (pureMs / 1000)).toLocaleString("en")} events/s, CPU ${seconds(pureCpuMs)}); ` +
        `from the database ${seconds(computeMs)} ` +
        `(${(computeMs / pureMs).toFixed(1)}× the pure ledger); with the derived records stored ${
          seconds(rebuildMs)
        } ` +
        `(${(rebuildMs / pureMs).toFixed(1)}×, CPU ${seconds(rebuildCpuMs)} = ${
          (rebuildCpuMs / pureCpuMs).toFixed(1)
        }× the pure ledger's CPU, heap in use at most ${
          Math.max(...rebuilds.map((b) => b.heapMb))
        } MB, process RSS at most ${Math.max(...rebuilds.map((b) => b.rssMb))} MB, ${
          Number(stored?.n ?? 0).toLocaleString("en")
        } event rows${
          REPEAT > 1
            ? `; medians of ${REPEAT}: pure ${pures.map((p) => seconds(p.ms)).join(", ")}; stored ${
              rebuilds.map((b) => seconds(b.ms)).join(", ")
            }`
            : ""
        }); ` +
        `one new block ${blockMs.ms.toFixed(0)} ms, CPU ${blockMs.cpuMs.toFixed(0)} ms (${
          blockMs.incremental ? "incremental" : "FULL rebuild"
        }); the next ${later.length}: median ${laterMs[Math.floor(laterMs.length / 2)]!.toFixed(0)} ms, slowest ${
          laterMs[laterMs.length - 1]!.toFixed(0)
        } ms (${later.map((b) => b.ms.toFixed(0)).join(", ")} ms)${
          later.every((b) => b.incremental) ? "" : " (NOT all incremental)"
        }; the basis record of every token (GET /v1/basis) ${(basisBytes / 1e6).toFixed(1)} MB in ${
          seconds(basisMs)
        }, heap in use at most ${basisHeapMb} MB (${basisHeap.startMb} MB before), process RSS at most ${basisRssMb} MB; live heap at most ${basisLiveMb} MB (${basisLive.startMb} MB before; a second run, with full collections between); a sale estimate (GET /v1/estimates/sale) of one share ${
          oneShare.ms.toFixed(0)
        } ms (${oneShare.lots} lot, heap at most ${oneShare.heapMb} MB, ${oneShare.startMb} MB before), of the whole position ${
          wholePosition.ms.toFixed(0)
        } ms (${
          wholePosition.lots.toLocaleString("en")
        } lots, heap at most ${wholePosition.heapMb} MB, ${wholePosition.startMb} MB before)`
    )
  }
})

const main = Effect.gen(function*() {
  const url = yield* TestDatabase.postgresUrl
  const database = Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
  yield* bench.pipe(
    Effect.provide(
      Layer.mergeAll(
        AccountsRepo.Default,
        Backfills.Default,
        WalletsRepo.Default,
        LedgerInputs.Default,
        LedgerStore.Default,
        BasisBodies.Default,
        SaleEstimator.Default,
        FxRates.Default
      )
        .pipe(
          Layer.provideMerge(Layer.mergeAll(
            LedgerPricesLive,
            ChainConfig.layer({ rpcUrls: ["http://127.0.0.1:1"], chainId: CHAIN })
          )),
          Layer.provideMerge(database)
        )
    ),
    Effect.withConfigProvider(ConfigProvider.fromJson({ LEDGER_MIN_INTERVAL_MS: 0 }))
  )
}).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))

Effect.runPromise(main).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
