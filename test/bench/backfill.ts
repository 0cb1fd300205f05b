/**
 * `npm run bench:backfill`: seeds a local chain with 50,000 stock-token transfers (`-- --big`: 100,000; or
 * `BENCH_TOTAL`), a tenth of them to one wallet, each of those in a transaction of its own: half mints, half
 * transfers from another holder, which need their receipts for classification (`-- --mints`: all mints, the
 * composition of the figures before issue 14). Prints (a) the wall time to backfill that wallet into the database
 * (transfers, their block times and receipts, the multiplier history, all stored), (b) the same `eth_getLogs` calls
 * made raw (the best of three) and (c) the needed receipts read raw in batches, so the ratios of ingestion to bare
 * fetching can be read off. Runs on PostgreSQL (`DATABASE_URL`, default the local server) and on the embedded PGlite
 * with the node as EDR is (no `blockTimestamp` in logs: block times are read in batches), then on PostgreSQL with
 * the node as geth 1.16+ is (times in the logs).
 */
import { SqlClient } from "@effect/sql"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { performance } from "node:perf_hooks"
import { encodeFunctionData, type Hex } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import { startSeededNode, toJson } from "../chain/seed.js"
import { addAndBackfill, ingestServices } from "../support/ChainHarness.js"

const TOTAL = Number(process.env.BENCH_TOTAL ?? (process.argv.includes("--big") ? 100_000 : 50_000))
const WALLET_SHARE = Math.floor(TOTAL / 10)
/** `--mints`: every wallet transfer a mint (the composition of the figures before issue 14): no receipts needed. */
const MINTS_ONLY = process.argv.includes("--mints")
const PER_TX = 250
const WALLET = "0x00000000000000000000000000000000000beef1"

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

const main = async () => {
  const { node, tokenList, manifest } = await startSeededNode()
  const seededTransfers = manifest.transfers.length
  const aapl = manifest.tokens.find((t) => t.symbol === "AAPL")!.address
  const issuer = node.accounts[0]!.address
  const stock = loadArtifact("Stock")

  // The wallet's transfers each in a transaction of its own, as real purchases are; the other 90 % of the history
  // in batches, so seeding stays quick. Both kinds are interleaved over the whole range.
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

  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-bench-"))
  const tokenListPath = Path.join(dir, "tokens.json")
  Fs.writeFileSync(tokenListPath, toJson(tokenList))

  // (b) The same eth_getLogs calls, raw: one per side of the transfer over the whole range; the best of three.
  const topic = `0x${WALLET.slice(2).toLowerCase().padStart(64, "0")}`
  const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
  let rawLogs = 0
  const rawGetLogs = async () => {
    let best = Infinity
    for (let round = 0; round < 3; round++) {
      const rawStart = performance.now()
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
        rawLogs += ((await response.json()) as { result: Array<unknown> }).result.length
      }
      best = Math.min(best, performance.now() - rawStart)
    }
    return best
  }
  let rawMs = await rawGetLogs()

  // (c) The receipts the backfill needs, read raw in batches of 100: what the node itself costs for them.
  let rawReceiptsMs = performance.now()
  for (let i = 0; i < walletTransfers.length; i += 100) {
    const batch = walletTransfers.slice(i, i + 100).map((hash, id) => ({
      jsonrpc: "2.0",
      id,
      method: "eth_getTransactionReceipt",
      params: [hash]
    }))
    await fetch(node.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch)
    })
      .then((r) => r.json())
  }
  rawReceiptsMs = performance.now() - rawReceiptsMs
  console.log(
    `(c) raw batched eth_getTransactionReceipt for the ${
      walletTransfers.length.toLocaleString("en")
    } receipts needed: ` +
      seconds(rawReceiptsMs)
  )

  const backfill = (name: string, database: Layer.Layer<any>) =>
    Effect.gen(function*() {
      const start = performance.now()
      const wallet = yield* addAndBackfill(WALLET, node.chainId)
      const ms = performance.now() - start
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM token_transfers`
      console.log(
        `(a) backfill on ${name}: ${seconds(ms)} for ${Number(row!.n).toLocaleString("en")} transfers ` +
          `(status ${wallet.backfillStatus}); ${(Number(row!.n) / (ms / 1000)).toFixed(0)} transfers/s; ` +
          `ratio to raw getLogs ${(ms / rawMs).toFixed(1)}×, to raw getLogs + receipts ${
            (ms / (rawMs + rawReceiptsMs)).toFixed(1)
          }×`
      )
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

  const onPostgres = (name: string) =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* TestDatabase.postgresUrl
      yield* backfill(name, Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie))
    })))

  console.log(`(b) raw eth_getLogs for the same filters: ${seconds(rawMs)} for ${rawLogs.toLocaleString("en")} logs`)
  await onPostgres("PostgreSQL, node without log timestamps")
  await Effect.runPromise(backfill("PGlite (in memory), node without log timestamps", TestDatabase.pglite))
  node.setLogTimestamps(true)
  rawMs = await rawGetLogs()
  console.log(`(b) raw eth_getLogs, node with log timestamps: ${seconds(rawMs)}`)
  await onPostgres("PostgreSQL, node with log timestamps (geth 1.16+)")

  Fs.rmSync(dir, { recursive: true, force: true })
  await node.close()
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
