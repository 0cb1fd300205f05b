/**
 * `npm run bench:export`: stores a settled ledger of 1,000,000 activity rows for one account (straight into the
 * ledger's tables, written by the ledger worker's own page writer as a build writes them: compact rows, see
 * `seedStoredLedger`; `BENCH_ROWS_WHOLE=1`: each row stored whole, as the figures before 2026-11-29 were taken),
 * then exports it through the REST server over real HTTP,
 * reading the stream as it arrives, and prints the time, the rows per second and the peak RSS increase of the
 * process during the export (server and client both run in it). Then it checks that the stored export has the
 * SHA-256 of the bytes received. PostgreSQL (`DATABASE_URL`, default the local server); `BENCH_ROWS` changes the
 * size, `BENCH_DB=pglite` runs on the embedded database instead. The npm script runs it under the service's own heap
 * flags (`npm start`'s): with Node's defaults the old generation holds the export's garbage until it is collected,
 * which the service's flags do sooner (+210–250 MB of RSS there, against +33 MB under the service's flags).
 */
import { HttpServer } from "@effect/platform"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { createHash } from "node:crypto"
import * as Http from "node:http"
import * as Os from "node:os"
import { performance } from "node:perf_hooks"
import { seedStoredLedger, seedSyntheticLedger } from "../exports/syntheticLedger.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const ON_PGLITE = process.env.BENCH_DB === "pglite"
/** `BENCH_ROWS_WHOLE=1`: every row stored whole with its keys (`seedSyntheticLedger`) instead of compact. */
const WHOLE_ROWS = process.env.BENCH_ROWS_WHOLE === "1"
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const MB = 1024 * 1024

const gc = (): void => (globalThis as { gc?: () => void }).gc?.()

interface Received {
  readonly status: number
  readonly exportId: string
  readonly bytes: number
  readonly lines: number
  readonly sha256: string
}

/** POSTs the export and consumes the body chunk by chunk, keeping only counts and a running hash. */
const download = (port: number, key: string) =>
  new Promise<Received>((resolve, reject) => {
    const request = Http.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/v1/exports",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
    }, (response) => {
      const hash = createHash("sha256")
      let bytes = 0
      let lines = 0
      response.on("data", (chunk: Buffer) => {
        hash.update(chunk)
        bytes += chunk.length
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
      })
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          exportId: String(response.headers["scaledger-export-id"]),
          bytes,
          lines,
          sha256: hash.digest("hex")
        }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(JSON.stringify({ format: "activity" }))
  })

const program = Effect.gen(function*() {
  const { key } = yield* newKey("bench-exports")
  const { id } = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("bench-exports")))
  const seedStart = performance.now()
  yield* (WHOLE_ROWS ? seedSyntheticLedger : seedStoredLedger)(id, WALLET, ROWS).pipe(Effect.orDie)
  console.log(
    `stored ${ROWS.toLocaleString("en")} ledger events in ${((performance.now() - seedStart) / 1000).toFixed(1)} s ` +
      `(${ON_PGLITE ? "PGlite" : "PostgreSQL"})`
  )
  const server = yield* HttpServer.HttpServer
  const port = (server.address as HttpServer.TcpAddress).port

  gc()
  const baseline = process.memoryUsage().rss
  let peak = baseline
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 10)
  const start = performance.now()
  const cpuStart = process.cpuUsage()
  const received = yield* Effect.promise(() => download(port, key))
  const ms = performance.now() - start
  const cpu = process.cpuUsage(cpuStart)
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)

  const rows = received.lines - 1
  if (received.status !== 200 || rows !== ROWS) {
    return yield* Effect.dieMessage(`export answered ${received.status} with ${rows} rows, expected ${ROWS}`)
  }
  const listed = yield* call("GET", "/v1/exports", { key })
  const stored = listed.body.exports.find((e: { id: string }) => e.id === received.exportId)
  const ok = stored?.sha256 === received.sha256 && stored?.rows === ROWS && stored?.bytes === received.bytes
  const rate = rows / (ms / 1000)
  const increase = (peak - baseline) / MB
  console.log(
    `exported ${rows.toLocaleString("en")} activity rows (${(received.bytes / MB).toFixed(1)} MiB) in ` +
      `${(ms / 1000).toFixed(2)} s: ${Math.round(rate).toLocaleString("en")} rows/s`
  )
  console.log(
    `CPU of this process (server and client) during the export: ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s; ` +
      `load average ${Os.loadavg()[0]!.toFixed(1)} on ${Os.cpus().length} cores`
  )
  console.log(
    `peak RSS increase during the export: ${increase.toFixed(1)} MB (baseline ${(baseline / MB).toFixed(0)} MB)`
  )
  console.log(`stored export ${received.exportId}: SHA-256 ${ok ? "matches" : "DOES NOT match"} the bytes received`)
  const verdicts = [
    `memory ${increase < 100 ? "OK" : "OVER"} (< 100 MB)`,
    `speed ${rate >= 50_000 ? "OK" : "UNDER"} (>= 50,000 rows/s${ON_PGLITE ? ", a PostgreSQL target" : ""})`
  ]
  console.log(verdicts.join("; "))
  if (!ok) return yield* Effect.dieMessage("the stored export does not match the bytes received")
})

const database = ON_PGLITE ? TestDatabase.pglite : TestDatabase.postgres

Effect.runPromise(
  program.pipe(
    Effect.provide(restServer(database)),
    Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)),
    Effect.provide(Layer.empty),
    Effect.scoped
  )
).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
