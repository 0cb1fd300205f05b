import { describe, expect, it } from "@effect/vitest"
import { ChainClient, StockTopics } from "@scaledger/domain/chain/ChainClient"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { ViemChainClientLayer } from "@scaledger/workers/chain/ViemChainClient"
import { Chunk, Effect, Layer, Stream } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const TOKEN = "0x00000000000000000000000000000000000000aa"
const topicOf = (address: string) => `0x${address.slice(2).padStart(64, "0")}`
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`

const transferLog = (block: number, logIndex: number, removed?: boolean) => ({
  address: TOKEN,
  topics: [StockTopics.Transfer, topicOf("0x" + "11".repeat(20)), topicOf("0x" + "22".repeat(20))],
  data: `0x${(1000 + logIndex).toString(16).padStart(64, "0")}`,
  blockNumber: `0x${block.toString(16)}`,
  blockHash: hash(block),
  transactionHash: hash(1_000 + block * 10 + logIndex),
  transactionIndex: "0x0",
  logIndex: `0x${logIndex.toString(16)}`,
  ...(removed === undefined ? {} : { removed })
})

/** A JSON-RPC server answering `eth_getLogs` with `logs`, and `eth_chainId` with `chainId`. */
const stubNode = (answers: Record<string, unknown>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
        const server = createServer((req, res) => {
          let body = ""
          req.on("data", (chunk) => (body += chunk))
          req.on("end", () => {
            const one = (r: { id: number; method: string }) =>
              r.method in answers
                ? { jsonrpc: "2.0", id: r.id, result: answers[r.method] }
                : { jsonrpc: "2.0", id: r.id, error: { code: -32601, message: "method not found" } }
            const parsed = JSON.parse(body)
            res.setHeader("content-type", "application/json")
            res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(one) : one(parsed)))
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) })
        })
      })
    ),
    (server) => Effect.promise(() => server.close())
  )

const client = (url: string, chainId = 31337) =>
  ViemChainClientLayer.pipe(Layer.provide(ChainConfig.layer({
    rpcUrls: [url],
    chainId,
    retryBaseDelayMs: 5,
    retryMaxDelayMs: 20,
    maxRetries: 2,
    timeoutMs: 1_000,
    pollIntervalMs: 50
  })))

describe("ViemChainClient: logs a node should not have given", () => {
  it.live("drops logs marked removed (a re-org took them back) and orders the rest", () =>
    Effect.gen(function*() {
      const node = yield* stubNode({
        eth_chainId: "0x7a69",
        eth_blockNumber: "0x10",
        eth_getLogs: [transferLog(9, 0), transferLog(7, 1, true), transferLog(5, 0, false)]
      })
      const logs = yield* Effect.flatMap(ChainClient, (chain) =>
        chain.logs({ topics: [StockTopics.Transfer], fromBlock: 0, toBlock: 16 }).pipe(
          Stream.runCollect,
          Effect.map((chunks) =>
            Chunk.toReadonlyArray(chunks).flatMap((chunk) => chunk.logs)
          )
        )).pipe(Effect.provide(client(node.url)))
      expect(logs.map((log) => [log.blockNumber, log.logIndex])).toEqual([[5, 0], [9, 0]])
    }).pipe(Effect.scoped))
})
