/**
 * The pure ledger on the `bench:ledger` trader account, generated in memory 100,000 events at a time:
 * `npm run bench:ledger:pure -- [events…] [--chunk=N] [--copy] [--warmup=N] [--repeat=N]` (default 10000 100000
 * 1000000, in one process; each size run `--warmup` times first, default 2, as a benchmark harness's warm-up
 * iterations let the JIT compile the code, then `--repeat` times, default 3, with the median of those runs printed
 * after them; every run is printed, the first, cold one marked).
 *
 * Prints the wall and CPU time of `Ledger.apply(…, { consume: true })` over chunks of 2,000 events (`--copy`: apply
 * to copies instead), each chunk's rows released once applied (a writer would format and store them), then
 * `Ledger.report(…, { rows: false, lots: false })`. Generating the events is not timed (see `BATCH`). Then the heap
 * after a forced collection with the state and report alive; then, timed apart, every open lot row with its
 * per-step basis components streamed with `Ledger.lotRows`.
 */
import { Either } from "effect"
import * as Ledger from "../src/ledger/Ledger.js"
import type { LedgerEvent } from "../src/ledger/LedgerInput.js"
import type { LedgerState } from "../src/ledger/LedgerState.js"
import { BASE_TIME, traderEvents, traderPrices, traderWallets } from "./trader.js"

const chunkArg = process.argv.find((arg) => arg.startsWith("--chunk="))
/** `--copy`: apply each chunk to a copy of the state (the default of `Ledger.apply`) instead of consuming it. */
const consume = !process.argv.includes("--copy")
const CHUNK = chunkArg === undefined ? 2_000 : Number(chunkArg.slice("--chunk=".length))
const repeatArg = process.argv.find((arg) => arg.startsWith("--repeat="))
const REPEAT = repeatArg === undefined ? 3 : Math.max(1, Number(repeatArg.slice("--repeat=".length)))
const warmupArg = process.argv.find((arg) => arg.startsWith("--warmup="))
/** Runs of each size made first and not counted in its median (the JIT compiles the ledger's code meanwhile). */
const WARMUP = warmupArg === undefined ? 2 : Math.max(0, Number(warmupArg.slice("--warmup=".length)))
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
/**
 * Events are generated this many at a time and collected (untimed) before they are applied, so the ledger is timed
 * on events already in memory, as `bench:ledger`'s pure row is: the generator's own garbage would otherwise fill
 * the young generation and start collections inside the timed applies. A batch bounds what the harness holds.
 */
const BATCH = 100_000
const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`

const run = (events: number, label = ""): { readonly ms: number; readonly cpu: number } => {
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  let state: LedgerState = Either.getOrThrow(Ledger.empty({
    wallets: traderWallets(1).map((address) => ({ address, self: true })),
    country: "US",
    prices: traderPrices(events)
  }))
  let ms = 0
  let cpu = 0
  let applied = 0
  let batch: Array<LedgerEvent> = []
  for (let from = 1; from <= events; from += BATCH) {
    batch = traderEvents(Math.min(events, from + BATCH - 1), 1, from)
    gc()
    for (let start = 0; start < batch.length; start += CHUNK) {
      const chunk = batch.slice(start, start + CHUNK)
      applied += chunk.length
      const t0 = performance.now()
      const c0 = process.cpuUsage()
      state = Ledger.release(Either.getOrThrow(Ledger.apply(state, chunk, { consume })))
      const c = process.cpuUsage(c0)
      cpu += (c.user + c.system) / 1000
      ms += performance.now() - t0
    }
  }
  batch = []
  let t0 = performance.now()
  let c0 = process.cpuUsage()
  const report = Ledger.report(state, BASE_TIME + events, { rows: false, lots: false })
  let c = process.cpuUsage(c0)
  cpu += (c.user + c.system) / 1000
  ms += performance.now() - t0
  t0 = performance.now()
  c0 = process.cpuUsage()
  let lots = 0
  let components = 0
  for (const lot of Ledger.lotRows(state)) {
    lots++
    components += lot.components.length
  }
  c = process.cpuUsage(c0)
  const lotsCpu = (c.user + c.system) / 1000
  const lotsMs = performance.now() - t0
  gc()
  const heap = process.memoryUsage().heapUsed - heapBefore
  const rate = (n: number, msOf: number) => Math.round(n / (msOf / 1000)).toLocaleString("en")
  console.log(
    `${events.toLocaleString("en").padStart(9)} events${label}: pure ledger ${(ms / 1000).toFixed(2)} s wall ` +
      `(${rate(events, ms)} events/s), CPU ${(cpu / 1000).toFixed(2)} s (${rate(events, cpu)} events/s of CPU); ` +
      `heap of state + report ${mb(heap)} (${report.positions.length} positions, ` +
      `${state.eventCount === applied ? applied.toLocaleString("en") : "?"} events applied); ` +
      `then the ${lots.toLocaleString("en")} open lot rows with their ${components.toLocaleString("en")} ` +
      `per-step components streamed: ${(lotsMs / 1000).toFixed(2)} s wall, CPU ${(lotsCpu / 1000).toFixed(2)} s; ` +
      `peak RSS ${mb(process.resourceUsage().maxRSS * 1024)}`
  )
  return { ms, cpu }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const sizes = process.argv.slice(2).filter((arg) => !arg.startsWith("--")).map(Number).filter((n) => n > 0)
for (const n of sizes.length > 0 ? sizes : [10_000, 100_000, 1_000_000]) {
  for (let w = 0; w < WARMUP; w++) run(n, w === 0 ? " (warm-up, the first run)" : " (warm-up)")
  const runs = Array.from({ length: REPEAT }, () => run(n))
  if (REPEAT > 1) {
    const ms = median(runs.map((r) => r.ms))
    const cpu = median(runs.map((r) => r.cpu))
    console.log(
      `${n.toLocaleString("en").padStart(9)} events, median of ${REPEAT} runs after ${WARMUP} warm-up: pure ledger ${
        (ms / 1000).toFixed(2)
      } s ` +
        `wall (${Math.round(n / (ms / 1000)).toLocaleString("en")} events/s), CPU ${(cpu / 1000).toFixed(2)} s ` +
        `(${Math.round(n / (cpu / 1000)).toLocaleString("en")} events/s of CPU)`
    )
  }
}
