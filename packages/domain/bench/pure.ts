/**
 * The pure ledger on the `bench:ledger` trader account, generated in memory a chunk at a time:
 * `node --expose-gc --import tsx packages/domain/bench/pure.ts [events…]` (default 100000 1000000). Prints wall
 * and CPU time of `Ledger.apply` over the chunks of 10,000 events, each chunk's rows released once applied (a
 * writer would format and store them), then `Ledger.report(…, { rows: false, lots: false })` and every open lot
 * row streamed with `Ledger.lotRows` (generation of the events not timed), and the heap after a forced
 * collection with the state and report alive.
 */
import { Either } from "effect"
import * as Ledger from "../src/ledger/Ledger.js"
import type { LedgerState } from "../src/ledger/LedgerState.js"
import { BASE_TIME, traderEvents, traderPrices, traderWallets } from "./trader.js"

const CHUNK = 10_000
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`

const run = (events: number) => {
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
  for (let from = 1; from <= events; from += CHUNK) {
    const chunk = traderEvents(Math.min(events, from + CHUNK - 1), 1, from)
    applied += chunk.length
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    state = Ledger.release(Either.getOrThrow(Ledger.apply(state, chunk)))
    const c = process.cpuUsage(c0)
    cpu += (c.user + c.system) / 1000
    ms += performance.now() - t0
  }
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  const report = Ledger.report(state, BASE_TIME + events, { rows: false, lots: false })
  let lots = 0
  for (const lot of Ledger.lotRows(state)) if (lot.components.length > 0) lots++
  const c = process.cpuUsage(c0)
  cpu += (c.user + c.system) / 1000
  ms += performance.now() - t0
  gc()
  const heap = process.memoryUsage().heapUsed - heapBefore
  console.log(
    `${events.toLocaleString("en").padStart(9)} events (${applied.toLocaleString("en")} with the dividend steps): ` +
      `pure ledger ${(ms / 1000).toFixed(2)} s wall (${
        Math.round(events / (ms / 1000)).toLocaleString("en")
      } events/s), ` +
      `CPU ${(cpu / 1000).toFixed(2)} s (${Math.round(events / (cpu / 1000)).toLocaleString("en")} events/s of CPU); ` +
      `heap of state + report ${mb(heap)}, peak RSS ${mb(process.resourceUsage().maxRSS * 1024)}; ` +
      `${state.eventCount === applied ? "" : "?"}${
        lots.toLocaleString("en")
      } open lots streamed, ${report.positions.length} positions`
  )
}

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
for (const n of sizes.length > 0 ? sizes : [100_000, 1_000_000]) run(n)
