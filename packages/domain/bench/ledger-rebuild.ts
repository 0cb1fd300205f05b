/**
 * Rebuild throughput: `npx tsx packages/domain/bench/ledger-rebuild.ts [operations] [seed]`.
 * Random valid histories over 3 own wallets and 3 tokens (test/ledger/generate.ts: about 100 s between
 * movements, a dividend step per token every 30 days, a split a year), under US (wallet scope) and DE (account
 * scope). Times `Ledger.build` (every event applied), `Ledger.report` without the per-event lists, and streaming
 * those lists through the row functions (what a writer to the database would do); best of 3.
 */
import { Either } from "effect"
import { Ledger } from "../src/ledger/index.js"
import { interpret, randomOps, settingsFor } from "../test/ledger/generate.js"

const count = Number(process.argv[2] ?? 100_000)
const seed = Number(process.argv[3] ?? 42)
const history = interpret(randomOps(count, seed))
const events = history.events.length
const perSecond = (ms: number) => Math.round(events / (ms / 1000)).toLocaleString("en")

for (const country of ["US", "DE"] as const) {
  const settings = settingsFor(history, country)
  let build = Number.POSITIVE_INFINITY
  let report = Number.POSITIVE_INFINITY
  let stream = Number.POSITIVE_INFINITY
  let rows = ""
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now()
    const state = Either.getOrThrow(Ledger.build({ ...settings, events: history.events }))
    const t1 = performance.now()
    const result = Ledger.report(state, history.end, { rows: false })
    const t2 = performance.now()
    const counts = { movements: 0, disposals: 0, income: 0, splits: 0 }
    for (const _ of Ledger.movementRows(state)) counts.movements++
    for (const _ of Ledger.disposalRows(state)) counts.disposals++
    for (const _ of Ledger.incomeRows(state)) counts.income++
    for (const _ of Ledger.splitRows(state)) counts.splits++
    const t3 = performance.now()
    build = Math.min(build, t1 - t0)
    report = Math.min(report, t2 - t1)
    stream = Math.min(stream, t3 - t2)
    rows = `${counts.movements} movements, ${counts.disposals} disposal rows, ${counts.income} income rows, ` +
      `${counts.splits} split rows, ${result.lots.length} open lots`
  }
  console.log(
    `${country}: ${events.toLocaleString("en")} events (${rows}); ` +
      `build ${build.toFixed(0)} ms = ${perSecond(build)} events/s; report ${report.toFixed(0)} ms; ` +
      `rows streamed in ${stream.toFixed(0)} ms; all three ${perSecond(build + report + stream)} events/s`
  )
}
