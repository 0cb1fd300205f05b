import { describe, expect, it } from "@effect/vitest"
import { ChainClient, StockTopics } from "@scaledger/domain/chain/ChainClient"
import { ChainConfig, type ChainConfigShape } from "@scaledger/workers/chain/ChainConfig"
import { ViemChainClientLayer } from "@scaledger/workers/chain/ViemChainClient"
import { Chunk, Effect, Layer, Stream } from "effect"
import { encodeFunctionData, type Hex } from "viem"
import { afterAll, beforeAll } from "vitest"
import {
  type FaultProxy,
  type Faults,
  loadArtifact,
  type SeedManifest,
  startFaultProxy,
  startSeededNode,
  type TestNode
} from "../support/ChainHarness.js"

let node: TestNode
let manifest: SeedManifest
let head: number
/** Ten transfers mined together in one block. */
let busyBlock: { readonly number: number; readonly txHashes: ReadonlyArray<string> }
const proxies: Array<FaultProxy> = []

const proxy = (faults: Faults = {}, seed = 1) =>
  Effect.promise(async () => {
    const p = await startFaultProxy({ target: node.httpUrl, seed, faults })
    proxies.push(p)
    return p
  })

beforeAll(async () => {
  const seeded = await startSeededNode({ blockReceipts: true })
  node = seeded.node
  manifest = seeded.manifest
  const aapl = manifest.tokens.find((t) => t.symbol === "AAPL")!.address
  const abi = loadArtifact("Stock").abi as any
  await node.request("evm_setAutomine", [false])
  const txHashes: Array<string> = []
  for (let i = 0; i < 10; i++) {
    const data = encodeFunctionData({ abi, functionName: "mint", args: [node.accounts[1]!.address, 10n ** 18n] })
    txHashes.push(
      await node.request<Hex>("eth_sendTransaction", [{ from: node.accounts[0]!.address, to: aapl, data }])
    )
  }
  await node.mine(1)
  await node.request("evm_setAutomine", [true])
  head = await node.blockNumber()
  busyBlock = { number: head, txHashes }
})

afterAll(async () => {
  for (const p of proxies) await p.close()
  await node?.close()
})

const withClient = <A, E>(
  url: string,
  effect: Effect.Effect<A, E, ChainClient>,
  overrides: Partial<Omit<ChainConfigShape, "rpcUrls">> = {}
) =>
  Effect.provide(
    effect,
    ViemChainClientLayer.pipe(Layer.provide(ChainConfig.layer({
      rpcUrls: [url],
      chainId: 31337,
      retryBaseDelayMs: 5,
      retryMaxDelayMs: 40,
      retryAfterCapMs: 50,
      maxRetries: 25,
      timeoutMs: 2_000,
      finalityDepth: 10,
      batchSize: 20,
      ...overrides
    })))
  )

const allBlocks = () => Array.from({ length: head }, (_, i) => i + 1)

const readAll = Effect.gen(function*() {
  const chain = yield* ChainClient
  const times = yield* chain.blockTimestamps(allBlocks())
  const receipts = yield* chain.receipts(manifest.transfers.map((t) => ({ txHash: t.txHash, block: t.block })))
  return { times: [...times].sort(([a], [b]) => a - b), receipts }
})

describe("ViemChainClient: batched reads", () => {
  it.live("reads block times and receipts in JSON-RPC batches, the same as one by one", () =>
    Effect.gen(function*() {
      const batched = yield* proxy()
      const one = yield* proxy()
      const viaBatches = yield* withClient(batched.url, readAll)
      const single = yield* withClient(one.url, readAll, { batchSize: 1 })
      expect(viaBatches).toEqual(single)
      expect(viaBatches.times).toHaveLength(head)
      for (const [n, time] of viaBatches.times.slice(0, 5)) {
        expect(time).toBe((yield* Effect.promise(() => node.block(n))).timestamp)
      }
      expect(viaBatches.receipts.map((r) => r.txHash)).toEqual(manifest.transfers.map((t) => t.txHash))
      // One HTTP request per 20 reads (and the odd head read) instead of one each.
      const reads = head + new Set(manifest.transfers.map((t) => t.txHash)).size
      expect(one.httpRequests()).toBeGreaterThanOrEqual(reads)
      expect(batched.httpRequests()).toBeLessThanOrEqual(Math.ceil(head / 20) + Math.ceil(reads / 20) + 4)
    }))

  it.live("through 20 % server errors, 429s and time-outs, answers exactly what a clean run answers", () =>
    Effect.gen(function*() {
      const clean = yield* withClient((yield* proxy()).url, readAll)
      const faulty = yield* proxy({ serverErrorRate: 0.2, rateLimitRate: 0.1, timeoutRate: 0.05, retryAfterSeconds: 0 })
      expect(yield* withClient(faulty.url, readAll, { timeoutMs: 300 })).toEqual(clean)
      const faults = faulty.faultCounts()
      expect((faults.server_error ?? 0) + (faults.rate_limited ?? 0) + (faults.timeout ?? 0)).toBeGreaterThan(0)
    }))

  it.live("a server that refuses batches (or large ones) gets smaller ones, then single requests", () =>
    Effect.gen(function*() {
      const clean = yield* withClient((yield* proxy()).url, readAll)
      const small = yield* proxy({ maxBatchSize: 7 })
      expect(yield* withClient(small.url, readAll)).toEqual(clean)
      expect(small.faultCounts().batch_refused).toBeGreaterThan(0)
      const none = yield* proxy({ maxBatchSize: 0 })
      expect(yield* withClient(none.url, readAll)).toEqual(clean)
    }))

  it.live("a missing block in a batch is BlockNotFound; a missing receipt is ReceiptNotFound", () =>
    Effect.gen(function*() {
      const p = yield* proxy()
      yield* withClient(
        p.url,
        Effect.gen(function*() {
          const chain = yield* ChainClient
          const error = yield* Effect.flip(chain.blockTimestamps([1, 2, head + 1_000]))
          expect(error._tag).toBe("BlockNotFound")
          const missing = `0x${"ab".repeat(32)}`
          const notFound = yield* Effect.flip(
            chain.receipts([{ txHash: manifest.transfers[0]!.txHash, block: 1 }, { txHash: missing, block: 1 }])
          )
          expect(notFound).toMatchObject({ _tag: "ReceiptNotFound", txHash: missing })
        })
      )
    }))

  it.live("reads a busy block's receipts with eth_getBlockReceipts, and falls back where the node lacks it", () =>
    Effect.gen(function*() {
      const p = yield* proxy()
      const wanted = busyBlock.txHashes.map((txHash) => ({ txHash, block: busyBlock.number }))
      const receipts = yield* withClient(p.url, Effect.flatMap(ChainClient, (c) => c.receipts(wanted)))
      expect(receipts.map((r) => r.txHash)).toEqual(busyBlock.txHashes)
      expect(receipts.every((r) => r.blockNumber === busyBlock.number && r.status === "success")).toBe(true)
      expect(p.counts().eth_getBlockReceipts).toBe(1)
      expect(p.counts().eth_getTransactionReceipt).toBeUndefined()

      // A node without the method (EDR itself): asked once, then per transaction, with the same answers.
      const bare = yield* Effect.promise(() => startSeededNode())
      yield* Effect.addFinalizer(() => Effect.promise(() => bare.node.close()))
      const q = yield* Effect.promise(() => startFaultProxy({ target: bare.node.httpUrl }))
      proxies.push(q)
      const transfers = bare.manifest.transfers.map((t) => ({ txHash: t.txHash, block: t.block }))
      // How many block requests go out before the first refusal is known depends on the transport's batching and
      // timing (25 blocks: 28 to 32 requests seen); what the client does after it is exact.
      const [first, firstAsked, second] = yield* withClient(
        q.url,
        Effect.flatMap(ChainClient, (c) =>
          Effect.gen(function*() {
            const first = yield* c.receipts(transfers)
            const asked = q.counts().eth_getBlockReceipts ?? 0
            return [first, asked, yield* c.receipts(transfers)] as const
          })),
        { blockReceiptsMin: 1 }
      )
      expect(second).toEqual(first)
      expect(first.map((r) => r.txHash)).toEqual(transfers.map((t) => t.txHash))
      expect(firstAsked).toBeGreaterThan(0)
      // The client remembers the refusal: its second pass asks per transaction only.
      expect(q.counts().eth_getBlockReceipts).toBe(firstAsked)
      // Another client does not know yet: it asks again, then answers the same.
      q.resetCounts()
      const fresh = yield* withClient(q.url, Effect.flatMap(ChainClient, (c) => c.receipts(transfers)), {
        blockReceiptsMin: 1
      })
      expect(q.counts().eth_getBlockReceipts).toBeGreaterThan(0)
      expect(fresh).toEqual(first)
    }).pipe(Effect.scoped))

  it.live("takes block times from the logs when the node gives them", () =>
    Effect.gen(function*() {
      const p = yield* proxy()
      const logsOf = withClient(
        p.url,
        Effect.flatMap(ChainClient, (c) =>
          c.logs({ topics: [StockTopics.Transfer], fromBlock: 0, toBlock: head }).pipe(
            Stream.runCollect,
            Effect.map((chunks) => Chunk.toReadonlyArray(chunks).flatMap((chunk) => chunk.logs))
          ))
      )
      const without = yield* logsOf
      expect(without.every((l) => l.blockTimestamp === undefined)).toBe(true)
      node.setLogTimestamps(true)
      const withTimes = yield* logsOf.pipe(Effect.ensuring(Effect.sync(() => node.setLogTimestamps(false))))
      expect(withTimes.map(({ blockTimestamp: _, ...rest }) => rest)).toEqual(without)
      for (const log of withTimes.slice(0, 5)) {
        expect(log.blockTimestamp).toBe((yield* Effect.promise(() => node.block(log.blockNumber))).timestamp)
      }
    }))
})
