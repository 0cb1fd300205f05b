import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Backfills } from "@scaledger/db/chain/Backfills"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { PauseReads } from "@scaledger/db/chain/PauseReads"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { ReadHealthStore } from "@scaledger/db/chain/ReadHealth"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { ChainConfig, type ChainConfigShape } from "@scaledger/workers/chain/ChainConfig"
import { ReadHealth } from "@scaledger/workers/chain/ReadHealth"
import { tokenRegistryLayer } from "@scaledger/workers/chain/TokenRegistry"
import { ViemChainClientLayer } from "@scaledger/workers/chain/ViemChainClient"
import { runBackfill } from "@scaledger/workers/ingest/Backfill"
import { BackfillRunnerLive } from "@scaledger/workers/ingest/BackfillRunner"
import { IngestConfig, type IngestConfigShape } from "@scaledger/workers/ingest/IngestConfig"
import { PauseChecks } from "@scaledger/workers/ingest/PauseChecks"
import { PriceRecorderLive } from "@scaledger/workers/ingest/PriceRecorder"
import { makeRecorder, RecorderLive } from "@scaledger/workers/ingest/Recorder"
import { TokenCatalog } from "@scaledger/workers/ingest/TokenCatalog"
import { LedgerBuilderLive, LedgerPricesLive } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Context, Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { encodeFunctionData, type Hex } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import type { TestNode } from "../chain/node.js"
import { type SeedResult, startSeededNode, toJson } from "../chain/seed.js"
import { restServer } from "./RestHarness.js"

/** The one harness for chain tests: the local node, the fault proxy, the seed, and the ingestion services on them. */
export { loadArtifact } from "../chain/artifacts.js"
export { type FaultProxy, type Faults, startFaultProxy } from "../chain/faultProxy.js"
export { startTestNode, type TestNode } from "../chain/node.js"
export { type SeedManifest, startSeededNode, toJson } from "../chain/seed.js"

export interface SeededChain extends SeedResult {
  readonly node: TestNode
  readonly tokenListPath: string
}

/** A seeded local chain for one test, closed (and its token-list file removed) with the scope. */
export const seededChain = Effect.acquireRelease(
  Effect.promise(async (): Promise<SeededChain> => {
    const seeded = await startSeededNode()
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-chain-"))
    const tokenListPath = Path.join(dir, "tokens.json")
    Fs.writeFileSync(tokenListPath, toJson(seeded.tokenList))
    return { ...seeded, tokenListPath }
  }),
  (chain) =>
    Effect.promise(async () => {
      await chain.node.close()
      Fs.rmSync(Path.dirname(chain.tokenListPath), { recursive: true, force: true })
    })
)

export interface IngestOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly tokenListPath: string
  readonly chain?: Partial<Omit<ChainConfigShape, "rpcUrls" | "chainId">>
  readonly ingest?: Partial<IngestConfigShape>
}

/** The ingestion services against a node (directly, or through a fault proxy), over the given database. */
export const ingestServices = (options: IngestOptions) =>
  PauseChecks.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(
      TokenCatalog.Default,
      ChainStore.Default,
      Backfills.Default,
      WalletsRepo.Default,
      AccountsRepo.Default,
      PriceRounds.Default,
      ReadHealth.Default
    )),
    Layer.provideMerge(Layer.mergeAll(PauseReads.Default, ReadHealthStore.Default))
  ).pipe(
    Layer.provideMerge(tokenRegistryLayer({ tokenList: options.tokenListPath })),
    Layer.provideMerge(ViemChainClientLayer),
    Layer.provideMerge(
      Layer.mergeAll(
        ChainConfig.layer({
          rpcUrls: [options.rpcUrl],
          chainId: options.chainId,
          finalityDepth: 10,
          pollIntervalMs: 50,
          retryBaseDelayMs: 5,
          retryMaxDelayMs: 50,
          retryAfterCapMs: 50,
          maxRetries: 25,
          timeoutMs: 2_000,
          ...options.chain
        }),
        IngestConfig.layer({
          recorderBatchMs: 50,
          backfillPollMs: 100,
          backfillRetryBaseMs: 100,
          backfillCheckpointBlocks: 500,
          ...options.ingest
        })
      )
    ),
    Layer.provideMerge(ChainStore.Default)
  )

/** Watches `address` for a new account and runs its backfill to the end, in this fiber. */
export const addAndBackfill = (address: string, chainId: number, account = `acct-${address.slice(2, 10)}`) =>
  Effect.gen(function*() {
    const { account: owner } = yield* (yield* AccountsRepo).findOrCreate(account)
    const { wallet } = yield* (yield* WalletsRepo).insert({
      accountId: owner.id,
      address,
      label: "",
      self: true,
      watchingFromBlock: null,
      watchingFromAt: null,
      chainId
    })
    const backfills = yield* Backfills
    const [job] = yield* backfills.claim(chainId, "test-worker", 10, 60)
    if (job === undefined || job.walletId !== wallet.id) return yield* Effect.dieMessage("backfill job not claimable")
    yield* runBackfill(job, "test-worker")
    return Option.getOrThrow(yield* (yield* WalletsRepo).find(owner.id, address))
  })

/** One recorder step up to the node's current head. */
export const recordToHead = Effect.gen(function*() {
  const recorder = yield* makeRecorder
  const chain = yield* ChainClient
  yield* recorder.step(yield* chain.head)
})

const stock = loadArtifact("Stock")

/** Sends a `Stock` call from the issuer (dev account 0), mined in its own block at `timestamp` if given. */
export const issuerCall = async (
  node: TestNode,
  token: string,
  functionName: string,
  args: ReadonlyArray<unknown>,
  timestamp?: number
) => {
  if (timestamp !== undefined) await node.setNextBlockTimestamp(timestamp)
  const data = encodeFunctionData({ abi: stock.abi as any, functionName, args: args as any })
  const hash = await node.request<Hex>("eth_sendTransaction", [{ from: node.accounts[0]!.address, to: token, data }])
  const receipt = await node.request<{ blockNumber: Hex; status: Hex }>("eth_getTransactionReceipt", [hash])
  if (receipt.status !== "0x1") throw new Error(`${functionName} reverted`)
  return { hash, block: Number(receipt.blockNumber) }
}

/** The chain record as plain, ordered rows: two runs that stored the same thing compare equal. */
export const recordSnapshot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const transfers =
    yield* sql`SELECT chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key, to_key, raw
                               FROM token_transfers ORDER BY block, log_index`
  const receipts =
    yield* sql`SELECT tx_hash, block, tx_from, tx_to, status, logs FROM tx_receipts ORDER BY block, tx_hash`
  const announcements =
    yield* sql`SELECT tx_hash, log_index, block, token_key, old_multiplier, new_multiplier, effective_at, variant
                                   FROM multiplier_announcements ORDER BY block, log_index`
  const changes =
    yield* sql`SELECT token_key, effective_at, old_multiplier, new_multiplier, kind, status, source, block, block_time, announced_at, announced_block
                             FROM multiplier_changes ORDER BY effective_at, token_key`
  const gaps =
    yield* sql`SELECT token_key, from_date, to_date, reason FROM coverage_gaps ORDER BY token_key, from_date, reason`
  return { transfers, receipts, announcements, changes, gaps }
})

/** The seeded chain a `serviceOnSeededChain` layer runs against. */
export class TestChain extends Context.Tag("TestChain")<TestChain, SeededChain>() {}

/**
 * REST, ingestion (recorder, backfill runner, price recorder) and the ledger builder as fibers on one PostgreSQL
 * database, against a seeded chain with 12 blocks on top (every seeded price round final), plus `extraWorkers`.
 */
export const serviceOnSeededChain = <E, R>(extraWorkers: Layer.Layer<never, E, R>) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const chain = yield* seededChain
    yield* Effect.promise(async () => {
      for (let i = 0; i < 12; i++) await chain.node.request("evm_mine", [])
    })
    const Db = TestDatabase.postgres
    const config = Layer.setConfigProvider(ConfigProvider.fromJson({
      CHAIN_ID: chain.node.chainId,
      LEDGER_POLL_MS: 100,
      LEDGER_MIN_INTERVAL_MS: 100
    }))
    const services = ingestServices({
      rpcUrl: chain.node.httpUrl,
      chainId: chain.node.chainId,
      tokenListPath: chain.tokenListPath,
      ingest: { pricePollMs: 200, priceHistoryFrom: Date.UTC(2026, 5, 1) / 1000 }
    })
    const workers = Layer.mergeAll(RecorderLive, BackfillRunnerLive, PriceRecorderLive, LedgerBuilderLive, extraWorkers)
      .pipe(
        Layer.provide(LedgerPricesLive),
        Layer.provideMerge(services),
        Layer.provide(Db)
      )
    return Layer.mergeAll(
      restServer(Db),
      workers,
      Layer.mergeAll(LedgerStore.Default, FxRates.Default).pipe(Layer.provideMerge(Db)),
      Layer.succeed(TestChain, chain)
    ).pipe(Layer.provide(config))
  }))
