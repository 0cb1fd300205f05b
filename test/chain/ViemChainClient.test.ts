import { describe, expect, it } from "@effect/vitest"
import { ChainClient, StockTopics } from "@scaledger/domain/chain/ChainClient"
import type { BlockHeader, LogChunk, MultiplierAnnouncement, RawLog } from "@scaledger/domain/chain/ChainClient"
import { ChainConfig, type ChainConfigShape } from "@scaledger/workers/chain/ChainConfig"
import { rangeAdvice, ViemChainClientLayer } from "@scaledger/workers/chain/ViemChainClient"
import { Chunk, Duration, Effect, Fiber, Layer, Option, Queue, Stream } from "effect"
import { type Abi, encodeDeployData, encodeFunctionData, getAddress, type Hex } from "viem"
import { afterAll, beforeAll } from "vitest"
import { type WebSocket, WebSocketServer } from "ws"
import {
  type FaultProxy,
  loadArtifact,
  type SeedManifest,
  startFaultProxy,
  startSeededNode,
  type TestNode
} from "../support/ChainHarness.js"

let node: TestNode
let manifest: SeedManifest
let head: number
const proxies: Array<FaultProxy> = []

const proxy = async (faults: Parameters<FaultProxy["setFaults"]>[0] = {}, seed = 1) => {
  const p = await startFaultProxy({ target: node.httpUrl, seed, faults })
  proxies.push(p)
  return p
}

const send = (from: string, to: string | undefined, data: Hex) =>
  node.request<Hex>("eth_sendTransaction", [{ from, ...(to === undefined ? {} : { to }), data, gas: "0x2dc6c0" }])

beforeAll(async () => {
  const seeded = await startSeededNode()
  node = seeded.node
  manifest = seeded.manifest
  const stockAbi = loadArtifact("Stock").abi as Abi
  const aapl = manifest.tokens.find((t) => t.symbol === "AAPL")!.address
  const holder = (label: string) => manifest.holders.find((x) => x.label === label)!.address
  for (let round = 0; round < 3; round++) {
    await node.mine(1_500)
    for (const [from, to] of [["alice", "bob"], ["bob", "carol"]] as const) {
      await send(
        holder(from),
        aapl,
        encodeFunctionData({ abi: stockAbi, functionName: "transfer", args: [holder(to), 10n ** 15n] })
      )
    }
  }
  await node.mine(100)
  head = await node.blockNumber()
})

afterAll(async () => {
  for (const p of proxies) await p.close()
  await node?.close()
})

const settings = (rpcUrls: ReadonlyArray<string>, overrides: Partial<Omit<ChainConfigShape, "rpcUrls">> = {}) => ({
  rpcUrls,
  chainId: 31337,
  retryBaseDelayMs: 5,
  retryMaxDelayMs: 40,
  retryAfterCapMs: 5_000,
  maxRetries: 12,
  timeoutMs: 2_000,
  pollIntervalMs: 50,
  logsInitialChunk: 2_048,
  logsMaxChunk: 4_096,
  concurrency: 4,
  ...overrides
})

const clientLayer = (rpcUrls: ReadonlyArray<string>, overrides: Partial<Omit<ChainConfigShape, "rpcUrls">> = {}) =>
  ViemChainClientLayer.pipe(Layer.provide(ChainConfig.layer(settings(rpcUrls, overrides))))

const withClient = <A, E>(
  rpcUrls: ReadonlyArray<string>,
  effect: Effect.Effect<A, E, ChainClient>,
  overrides: Partial<Omit<ChainConfigShape, "rpcUrls">> = {}
) => Effect.provide(effect, clientLayer(rpcUrls, overrides))

const tokens = () => manifest.tokens.map((t) => t.address)

const collectLogs = (
  filter: { addresses?: ReadonlyArray<string>; topics?: ReadonlyArray<string | ReadonlyArray<string> | null> }
) =>
  Effect.flatMap(
    ChainClient,
    (chain) =>
      chain.logs({ ...filter, fromBlock: 0, toBlock: head }).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
  )

const flatten = (chunks: ReadonlyArray<LogChunk>): ReadonlyArray<RawLog> => chunks.flatMap((c) => c.logs)

const expectContiguous = (chunks: ReadonlyArray<LogChunk>, from: number, to: number) => {
  expect(chunks[0]!.fromBlock).toBe(from)
  expect(chunks.at(-1)!.toBlock).toBe(to)
  chunks.slice(1).forEach((c, i) => expect(c.fromBlock).toBe(chunks[i]!.toBlock + 1))
}

describe("ViemChainClient: logs", () => {
  it.live("20 % server errors, 429s and a 1,000-block cap give exactly the logs and reads of a clean run", () =>
    Effect.gen(function*() {
      const reads = Effect.flatMap(ChainClient, (chain) =>
        Effect.forEach(
          manifest.multiplierChanges.flatMap((c) =>
            [[c.token, c.lastBlockBefore], [c.token, c.firstBlockAtOrAfter]] as const
          ),
          ([token, block]) => chain.stockState(token, block),
          { concurrency: 4 }
        ))
      const clean = yield* withClient([node.httpUrl], collectLogs({ addresses: tokens() }))
      const cleanReads = yield* withClient([node.httpUrl], reads)
      expect(flatten(clean).length).toBeGreaterThan(50)
      expectContiguous(clean, 0, head)

      const faulty = yield* Effect.promise(() =>
        proxy({ serverErrorRate: 0.2, rateLimitRate: 0.1, retryAfterSeconds: 0, getLogsMaxRange: 1_000 }, 11)
      )
      const chunks = yield* withClient([faulty.url], collectLogs({ addresses: tokens() }))
      expect(yield* withClient([faulty.url], reads)).toEqual(cleanReads)
      expect(flatten(chunks)).toEqual(flatten(clean))
      expectContiguous(chunks, 0, head)
      for (const c of chunks) expect(c.toBlock - c.fromBlock + 1).toBeLessThanOrEqual(1_000)
      const faults = faulty.faultCounts()
      expect(faults.server_error).toBeGreaterThan(0)
      expect(faults.rate_limited).toBeGreaterThan(0)
      expect(faults.range_cap).toBe(1)
    }))

  it.live("shrinks the range on a result cap where logs are dense and grows it again where they are sparse", () =>
    Effect.gen(function*() {
      const filter = { addresses: tokens(), topics: [StockTopics.Transfer] }
      const clean = yield* withClient([node.httpUrl], collectLogs(filter))
      const capped = yield* Effect.promise(() => proxy({ getLogsMaxResults: 8 }))
      const chunks = yield* withClient([capped.url], collectLogs(filter), { logsInitialChunk: 1_024 })
      expect(flatten(chunks)).toEqual(flatten(clean))
      expectContiguous(chunks, 0, head)
      const spans = chunks.map((c) => c.toBlock - c.fromBlock + 1)
      expect(Math.min(...spans)).toBeLessThan(64)
      expect(Math.max(...spans.slice(spans.indexOf(Math.min(...spans))))).toBeGreaterThanOrEqual(1_024)
      for (const c of chunks) expect(c.logs.length).toBeLessThanOrEqual(8)
      expect(capped.faultCounts().result_cap).toBeGreaterThan(0)
    }))

  it.live("learns the cap Alchemy, QuickNode and Infura state, with one refused request each", () =>
    Effect.gen(function*() {
      const clean = yield* withClient([node.httpUrl], collectLogs({ addresses: tokens() }))
      for (const style of ["alchemy", "quicknode", "infura"] as const) {
        const p = yield* Effect.promise(() => proxy({ getLogsMaxRange: 700, getLogsRangeStyle: style }))
        const chunks = yield* withClient([p.url], collectLogs({ addresses: tokens() }))
        expect(flatten(chunks)).toEqual(flatten(clean))
        expect(Math.max(...chunks.map((c) => c.toBlock - c.fromBlock + 1))).toBe(700)
        expect(p.faultCounts().range_cap).toBe(1)
      }
    }))

  it.live("fails with RpcRangeTooLarge when a single block is still too much", () =>
    Effect.gen(function*() {
      const p = yield* Effect.promise(() => proxy({ getLogsMaxResults: 0 }))
      const error = yield* withClient([p.url], collectLogs({ addresses: tokens() })).pipe(Effect.flip)
      expect(error._tag).toBe("RpcRangeTooLarge")
    }))

  it.live("decodes both UIMultiplierUpdated variants, transfers and pauses", () =>
    Effect.gen(function*() {
      const events = yield* withClient(
        [node.httpUrl],
        Effect.flatMap(ChainClient, (chain) =>
          chain.stockEvents({ tokens: tokens(), fromBlock: 0, toBlock: manifest.headBlock }).pipe(
            Stream.runCollect,
            Effect.map((chunks) =>
              Chunk.toReadonlyArray(chunks).flatMap((c) => c.events)
            )
          ))
      )
      const announcements = events.filter((e): e is MultiplierAnnouncement => e._tag === "MultiplierAnnouncement")
      expect(announcements.map((a) => ({
        token: a.token,
        oldMultiplier: a.oldMultiplier,
        newMultiplier: a.newMultiplier,
        effectiveAt: a.effectiveAt,
        block: a.block,
        logIndex: a.logIndex,
        txHash: a.txHash,
        variant: a.variant
      }))).toEqual(manifest.multiplierChanges.map((c) => ({
        token: c.token,
        oldMultiplier: c.oldMultiplier,
        newMultiplier: c.newMultiplier,
        effectiveAt: c.effectiveAt,
        block: c.announcementBlock,
        logIndex: c.logIndex,
        txHash: c.txHash,
        variant: "erc8056"
      })))
      const transfers = events.filter((e) => e._tag === "Transfer")
      expect(transfers.map((t) => [t.block, t.logIndex])).toEqual(manifest.transfers.map((t) => [t.block, t.logIndex]))
      expect(events.filter((e) => e._tag === "TransferWithScaledUI")).toHaveLength(manifest.transfers.length)
      expect(events.flatMap((e) => (e._tag === "Pause" ? [e.kind] : []))).toEqual(manifest.pauses.map((p) => p.kind))

      const legacy = loadArtifact("LegacyStock")
      const issuer = manifest.issuer
      const deployed = yield* Effect.promise(() =>
        send(
          issuer,
          undefined,
          encodeDeployData({ abi: legacy.abi as Abi, bytecode: legacy.bytecode, args: ["L", "L", issuer] })
        )
      )
      const address = (yield* Effect.promise(() =>
        node.request<{ contractAddress: string }>("eth_getTransactionReceipt", [deployed])
      )).contractAddress
      const effectiveAt = manifest.multiplierChanges.at(-1)!.effectiveAt + 86_400 * 365
      yield* Effect.promise(() =>
        send(
          issuer,
          address,
          encodeFunctionData({
            abi: legacy.abi as Abi,
            functionName: "updateMultiplier",
            args: [2n * 10n ** 18n, BigInt(effectiveAt)]
          })
        )
      )
      const latest = yield* Effect.promise(() => node.blockNumber())
      const draft = yield* withClient(
        [node.httpUrl],
        Effect.flatMap(ChainClient, (chain) =>
          Effect.gen(function*() {
            const chunks = yield* chain.stockEvents({ tokens: [address], fromBlock: latest, toBlock: latest }).pipe(
              Stream.runCollect
            )
            const block = yield* chain.block(latest)
            return { events: Chunk.toReadonlyArray(chunks).flatMap((c) => c.events), block }
          }))
      )
      expect(draft.events).toHaveLength(1)
      expect(draft.events[0]).toMatchObject({
        _tag: "MultiplierAnnouncement",
        variant: "erc8056-draft",
        oldMultiplier: 10n ** 18n,
        newMultiplier: 2n * 10n ** 18n,
        effectiveAt,
        setAt: draft.block.timestamp,
        block: latest
      })
    }))
})

describe("ViemChainClient: reads", () => {
  it.live("reads multiplier state, balances and feeds at past blocks", () =>
    withClient(
      [node.httpUrl],
      Effect.gen(function*() {
        const chain = yield* ChainClient
        const aapl = manifest.multiplierChanges.find((c) => c.symbol === "AAPL")!
        const before = yield* chain.stockState(aapl.token, aapl.lastBlockBefore)
        const after = yield* chain.stockState(aapl.token, aapl.firstBlockAtOrAfter)
        expect(before).toMatchObject({
          uiMultiplier: aapl.oldMultiplier,
          newUIMultiplier: aapl.newMultiplier,
          effectiveAt: aapl.effectiveAt,
          paused: false,
          tokenPaused: false,
          oraclePaused: false,
          block: aapl.lastBlockBefore
        })
        expect(after.uiMultiplier).toBe(aapl.newMultiplier)
        expect(yield* chain.nodeChainId).toBe(node.chainId)
        expect(yield* chain.effectiveAt(manifest.tokens.find((t) => t.symbol === "TSLA")!.address)).toBe(0)

        const crwd = manifest.tokens.find((t) => t.symbol === "CRWD")!.address
        const paused = manifest.pauses.find((p) => p.kind === "Paused")!
        expect(yield* chain.paused(crwd, paused.block)).toBe(true)
        expect(yield* chain.tokenPaused(crwd, paused.block)).toBe(true)
        expect(yield* chain.paused(crwd, paused.block - 1)).toBe(false)
        const oracle = manifest.pauses.find((p) => p.kind === "OraclePaused")!
        expect(yield* chain.oraclePaused(crwd, oracle.block)).toBe(true)

        const sgov = manifest.tokens.find((t) => t.symbol === "SGOV")!.address
        for (const [holder, raw] of Object.entries(manifest.finalBalances.SGOV!)) {
          expect(yield* chain.balanceOf(sgov, holder)).toBe(raw)
        }
        expect(yield* chain.decimals(sgov)).toBe(18)

        expect(yield* chain.isStockToken(manifest.unlistedToken.address)).toBe(true)
        expect(yield* chain.isStockToken(manifest.holders[0]!.address)).toBe(false)
        const aaplFeed = manifest.tokens.find((t) => t.symbol === "AAPL")!.feedAddress!
        expect(yield* chain.isStockToken(aaplFeed)).toBe(false)
        expect(yield* chain.isStockToken(aapl.token, manifest.tokens[0]!.deployBlock - 1)).toBe(false)

        expect(yield* chain.feedDecimals(aaplFeed)).toBe(8)
        const rounds = manifest.prices.filter((p) => p.symbol === "AAPL")
        expect(yield* chain.latestRoundData(aaplFeed)).toMatchObject({
          roundId: rounds.at(-1)!.roundId,
          answer: rounds.at(-1)!.answer,
          updatedAt: rounds.at(-1)!.updatedAt
        })
        expect((yield* chain.getRoundData(aaplFeed, rounds[0]!.roundId)).answer).toBe(rounds[0]!.answer)
        const missing = yield* Effect.flip(chain.getRoundData(aaplFeed, rounds.at(-1)!.roundId + 1n))
        expect(missing._tag).toBe("ContractReverted")
        expect(missing.message).toMatch(/No data present/)
      })
    ))

  it.live("transactions' sender, target and selector, in one batch; an unknown hash is absent", () =>
    withClient(
      [node.httpUrl],
      Effect.gen(function*() {
        const chain = yield* ChainClient
        const wanted = manifest.transfers.slice(-3)
        const unknown = `0x${"ab".repeat(32)}`
        const facts = yield* chain.transactions([
          ...wanted.map((t) => t.txHash.toUpperCase().replace("0X", "0x")),
          unknown
        ])
        expect([...facts.keys()].sort()).toEqual(wanted.map((t) => t.txHash.toLowerCase()).sort())
        for (const t of wanted) {
          const tx = yield* Effect.promise(() =>
            node.request<{ from: string; to: string | null; input: string }>("eth_getTransactionByHash", [t.txHash])
          )
          expect(facts.get(t.txHash.toLowerCase())).toEqual({
            from: getAddress(tx.from),
            to: tx.to === null ? null : getAddress(tx.to),
            selector: tx.input.slice(0, 10).toLowerCase()
          })
        }
      })
    ))

  it.live("receipts, blocks and cached timestamps", () =>
    Effect.gen(function*() {
      const counter = yield* Effect.promise(() => proxy())
      yield* withClient(
        [counter.url],
        Effect.gen(function*() {
          const chain = yield* ChainClient
          const transfer = manifest.transfers.at(-1)!
          const receipt = yield* chain.receipt(transfer.txHash)
          expect(receipt).toMatchObject({ blockNumber: transfer.block, status: "success", txHash: transfer.txHash })
          expect(receipt.logs.map((l) => l.logIndex)).toContain(transfer.logIndex)
          expect((yield* Effect.flip(chain.receipt(`0x${"ab".repeat(32)}`)))._tag).toBe("ReceiptNotFound")
          expect((yield* Effect.flip(chain.block(head + 1_000)))._tag).toBe("BlockNotFound")

          const latest = yield* chain.head
          expect(latest.number).toBeGreaterThanOrEqual(head)
          const b = yield* chain.block(10)
          expect(yield* chain.blockByHash(b.hash)).toEqual(b)
          expect((yield* chain.block(11)).parentHash).toBe(b.hash)

          counter.resetCounts()
          const first = yield* chain.blockTimestamp(20)
          expect(yield* chain.blockTimestamp(20)).toBe(first)
          expect(counter.counts().eth_getBlockByNumber).toBe(1)
          const recent = latest.number - 5
          yield* chain.blockTimestamp(recent)
          yield* chain.blockTimestamp(recent)
          expect(counter.counts().eth_getBlockByNumber).toBe(3)
        }),
        { finalityDepth: 240 }
      )
    }))
})

describe("ViemChainClient: failures", () => {
  it.live("a pruned read is a StateUnavailable error; an archive endpoint behind it answers instead", () =>
    Effect.gen(function*() {
      const pruned = yield* Effect.promise(() => proxy({ prunedAfterBlocks: 100, prunedStyle: "metadata-not-found" }))
      const aapl = manifest.multiplierChanges.find((c) => c.symbol === "AAPL")!
      const error = yield* withClient(
        [pruned.url],
        Effect.flatMap(ChainClient, (c) => c.uiMultiplier(aapl.token, aapl.lastBlockBefore))
      )
        .pipe(Effect.flip)
      expect(error._tag).toBe("StateUnavailable")
      if (error._tag === "StateUnavailable") {
        expect(error.block).toBe(aapl.lastBlockBefore)
        expect(error.message).toBe("metadata is not found")
      }
      expect(pruned.counts().eth_call).toBe(1)

      const recent = yield* withClient([pruned.url], Effect.flatMap(ChainClient, (c) => c.uiMultiplier(aapl.token)))
      expect(recent).toBe(manifest.finalMultipliers.AAPL)

      for (const style of ["missing-trie-node", "header-not-found"] as const) {
        pruned.setFaults({ prunedAfterBlocks: 100, prunedStyle: style })
        const e = yield* withClient(
          [pruned.url],
          Effect.flatMap(ChainClient, (c) => c.balanceOf(aapl.token, manifest.issuer, 5))
        )
          .pipe(Effect.flip)
        expect(e._tag).toBe("StateUnavailable")
      }

      const value = yield* withClient(
        [pruned.url, node.httpUrl],
        Effect.flatMap(ChainClient, (c) => c.uiMultiplier(aapl.token, aapl.lastBlockBefore))
      )
      expect(value).toBe(aapl.oldMultiplier)
    }))

  it.live("falls back to the next URL when the first is down, and stays there", () =>
    Effect.gen(function*() {
      const down = yield* Effect.promise(() => proxy({ down: true }))
      const good = yield* Effect.promise(() => proxy())
      yield* withClient(
        [down.url, good.url],
        Effect.gen(function*() {
          const chain = yield* ChainClient
          expect(yield* chain.headNumber).toBeGreaterThanOrEqual(head)
          for (let i = 0; i < 5; i++) yield* chain.headNumber
        })
      )
      expect(down.total()).toBe(1)
      expect(good.counts().eth_blockNumber).toBe(6)

      const error = yield* withClient([down.url], Effect.flatMap(ChainClient, (c) => c.headNumber), { maxRetries: 3 })
        .pipe(Effect.flip)
      expect(error._tag).toBe("AllEndpointsFailed")
      if (error._tag === "AllEndpointsFailed") {
        expect(error.attempts).toBe(4)
        expect(error.lastError._tag).toBe("RpcTransportError")
      }
    }))

  it.live("honours Retry-After on 429", () =>
    Effect.gen(function*() {
      const limited = yield* Effect.promise(() => proxy({ rateLimitPerSecond: 1, retryAfterSeconds: 1 }))
      const started = Date.now()
      yield* withClient([limited.url], Effect.flatMap(ChainClient, (c) => Effect.zip(c.headNumber, c.headNumber)))
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
      expect(limited.faultCounts().rate_limited).toBeGreaterThanOrEqual(1)
    }))

  it.live("gives up on a hanging endpoint after its time-outs", () =>
    Effect.gen(function*() {
      const hanging = yield* Effect.promise(() => proxy({ timeoutRate: 1 }))
      const error = yield* withClient([hanging.url], Effect.flatMap(ChainClient, (c) => c.headNumber), {
        timeoutMs: 150,
        maxRetries: 1
      }).pipe(Effect.flip)
      expect(error._tag).toBe("AllEndpointsFailed")
      if (error._tag === "AllEndpointsFailed") expect(error.lastError._tag).toBe("RpcTimeout")
      expect(hanging.total()).toBe(2)
    }))

  it.live("does not retry reverts or invalid requests", () =>
    Effect.gen(function*() {
      const counter = yield* Effect.promise(() => proxy())
      const feed = manifest.tokens.find((t) => t.symbol === "AAPL")!.feedAddress!
      yield* withClient([counter.url], Effect.flatMap(ChainClient, (c) => Effect.flip(c.getRoundData(feed, 1n))))
      expect(counter.counts().eth_call).toBe(1)
    }))
})

/**
 * A WebSocket JSON-RPC endpoint whose `eth_subscribe` is accepted and then never fed, as a server that dropped the
 * subscription without a word (or, with `answerSubscribe` false, never answered); every other request is answered
 * by the node over HTTP.
 */
const startSilentSubscriptions = async (target: string, answerSubscribe: boolean) => {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 })
  await new Promise<void>((resolve) => server.once("listening", () => resolve()))
  let subscriptions = 0
  server.on("connection", (socket: WebSocket) => {
    socket.on("message", async (data) => {
      const request = JSON.parse(String(data)) as { id: number; method: string; params?: Array<unknown> }
      if (request.method === "eth_subscribe") {
        subscriptions++
        if (!answerSubscribe) return
        socket.send(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: `0x${subscriptions.toString(16)}` }))
        return
      }
      if (request.method === "eth_unsubscribe") {
        socket.send(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: true }))
        return
      }
      const response = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...request, params: request.params ?? [] })
      })
      socket.send(JSON.stringify({ ...(await response.json() as object), id: request.id }))
    })
  })
  const { port } = server.address() as { port: number }
  return {
    url: `ws://127.0.0.1:${port}`,
    subscriptions: () => subscriptions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate()
        server.close(() => resolve())
      })
  }
}

describe("ViemChainClient: new heads", () => {
  /** Mines one block at a time until three new heads have arrived (a subscription may start a little late). */
  const nextHeads = (rpcUrls: ReadonlyArray<string>) =>
    withClient(
      rpcUrls,
      Effect.gen(function*() {
        const chain = yield* ChainClient
        const start = yield* chain.headNumber
        const fiber = yield* chain.newHeads.pipe(
          Stream.filter((h) => h.number > start),
          Stream.take(3),
          Stream.runCollect,
          Effect.fork
        )
        const deadline = Date.now() + 5_000
        while (Option.isNone(yield* Fiber.poll(fiber)) && Date.now() < deadline) {
          yield* Effect.promise(() => node.mine(1))
          yield* Effect.sleep(Duration.millis(60))
        }
        const heads = Chunk.toReadonlyArray(yield* Fiber.join(fiber).pipe(Effect.timeout(Duration.seconds(1))))
        expect(heads).toHaveLength(3)
        expect(heads[1]!.number).toBe(heads[0]!.number + 1)
        expect(heads[2]!.number).toBe(heads[1]!.number + 1)
        expect(heads[1]!.parentHash).toBe(heads[0]!.hash)
        expect(heads[2]!.parentHash).toBe(heads[1]!.hash)
      })
    )

  it.live("arrive over a WebSocket subscription, which is closed with the layer", () =>
    Effect.gen(function*() {
      yield* nextHeads([node.wsUrl])
      yield* Effect.promise(async () => {
        const end = Date.now() + 2_000
        while (node.webSocketClients() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10))
      })
      expect(node.webSocketClients()).toBe(0)
    }))

  /** Heads from an endpoint whose subscriptions never deliver one: each arrives from a head check. */
  const headsWithoutNotifications = (answerSubscribe: boolean) =>
    Effect.gen(function*() {
      const silent = yield* Effect.acquireRelease(
        Effect.promise(() => startSilentSubscriptions(node.httpUrl, answerSubscribe)),
        (server) => Effect.promise(() => server.close())
      )
      yield* withClient(
        [silent.url],
        Effect.gen(function*() {
          const chain = yield* ChainClient
          const start = yield* chain.headNumber
          const queue = yield* Queue.unbounded<BlockHeader>()
          const heads = yield* chain.newHeads.pipe(Stream.runForEach((h) => Queue.offer(queue, h)), Effect.fork)
          /** The next head at or past `n` (one emitted again after a new subscription may come first). */
          const headFrom = (n: number) =>
            Queue.take(queue).pipe(
              Effect.repeat({ until: (h) => h.number >= n }),
              Effect.timeout(Duration.seconds(3))
            )
          yield* Effect.sleep(Duration.millis(300))
          yield* Effect.promise(() => node.mine(1))
          expect((yield* headFrom(start + 1)).number).toBe(start + 1)
          yield* Effect.promise(() => node.mine(2))
          expect((yield* headFrom(start + 3)).number).toBe(start + 3)
          // Behind at a second check: subscribed again.
          expect(silent.subscriptions()).toBeGreaterThanOrEqual(2)
          yield* Fiber.interrupt(heads)
        }),
        { headCheckMs: 100 }
      )
    }).pipe(Effect.scoped)

  it.live("arrive when the subscription falls silent: from the head check, and the subscription made again", () =>
    headsWithoutNotifications(true))

  it.live("arrive when a subscription request is never answered", () => headsWithoutNotifications(false))

  it.live("arrive by polling over HTTP, skipped numbers filled in", () =>
    Effect.gen(function*() {
      yield* nextHeads([node.httpUrl])
      yield* withClient(
        [node.httpUrl],
        Effect.gen(function*() {
          const chain = yield* ChainClient
          const queue = yield* Queue.unbounded<BlockHeader>()
          yield* chain.newHeads.pipe(Stream.runForEach((h) => Queue.offer(queue, h)), Effect.fork)
          const first = yield* Queue.take(queue)
          yield* Effect.promise(() => node.mine(5))
          const next = yield* Effect.forEach([1, 2, 3, 4, 5], () => Queue.take(queue))
          expect(next.map((h) => h.number)).toEqual([1, 2, 3, 4, 5].map((i) => first.number + i))
        })
      )
    }))

  it.live("polling reports a re-org at the same height", () =>
    withClient(
      [node.httpUrl],
      Effect.gen(function*() {
        const chain = yield* ChainClient
        const fork = yield* Effect.promise(() => node.snapshot())
        yield* Effect.promise(() => node.mine(2))
        const queue = yield* Queue.unbounded<BlockHeader>()
        yield* chain.newHeads.pipe(Stream.runForEach((h) => Queue.offer(queue, h)), Effect.fork)
        const before = yield* Queue.take(queue)
        yield* Effect.promise(() => node.reorg(fork))
        const after = yield* Queue.take(queue).pipe(Effect.timeout(Duration.seconds(5)))
        expect(after.number).toBe(before.number)
        expect(after.hash).not.toBe(before.hash)
      })
    ))
})

describe("rangeAdvice", () => {
  it("recognises the providers' range and result-count errors", () => {
    expect(rangeAdvice("eth_getLogs is limited to a 1000 block range")).toEqual({ kind: "ceiling", blocks: 1000 })
    expect(rangeAdvice("eth_getLogs is limited to a 10,000 range")).toEqual({ kind: "ceiling", blocks: 10_000 })
    expect(rangeAdvice("range 1000000 exceeds limit of 10000")).toEqual({ kind: "ceiling", blocks: 10_000 })
    expect(rangeAdvice("query exceeds max block range 5000")).toEqual({ kind: "ceiling", blocks: 5000 })
    expect(rangeAdvice("block range is too wide (maximum 1024)")).toEqual({ kind: "ceiling", blocks: 1024 })
    expect(rangeAdvice("maximum [from, to] blocks distance: 10000")).toEqual({ kind: "ceiling", blocks: 10_000 })
    expect(rangeAdvice("block range is larger than max block range, block range = 5120, max block range = 5000"))
      .toEqual({ kind: "ceiling", blocks: 5000 })
    expect(
      rangeAdvice(
        "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]"
      )
    ).toEqual({ kind: "ceiling", blocks: 2000 })
    expect(
      rangeAdvice(
        "You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]"
      )
    ).toEqual({ kind: "ceiling", blocks: 500 })
    expect(rangeAdvice("query returned more than 10000 results. Try with this block range [0x10, 0x1f].")).toEqual({
      kind: "suggested",
      blocks: 16
    })
    for (
      const message of [
        "query returned more than 10000 results",
        "logs matched by query exceeds limit of 10000",
        "block range is too wide",
        "query timeout exceeded",
        "backend response too large"
      ]
    ) {
      expect(rangeAdvice(message)).toEqual({ kind: "halve" })
    }
    expect(rangeAdvice("invalid argument 0: hex string without 0x prefix")).toBeUndefined()
    expect(Option.isNone(Option.fromNullable(rangeAdvice("execution reverted")))).toBe(true)
  })
})
