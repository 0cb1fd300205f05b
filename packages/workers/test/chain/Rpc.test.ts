import { describe, expect, it } from "@effect/vitest"
import { StockTopics } from "@scaledger/domain/chain/ChainClient"
import { Effect, Option, Schema } from "effect"
import { classifyRpcFailure } from "../../src/chain/rpc/Failures.js"
import { RANGE_PATTERNS, rangeAdvice } from "../../src/chain/rpc/RangeAdvice.js"
import { decodeAnswer, RpcBlock, RpcLog, RpcReceipt } from "../../src/chain/rpc/RpcSchemas.js"
import { decodeStockLog } from "../../src/chain/StockLogs.js"

/** One message per provider pattern, in that provider's words, and the advice it must give. */
const providerMessages: ReadonlyArray<readonly [string, ReturnType<typeof rangeAdvice>]> = [
  [
    "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]",
    { kind: "ceiling", blocks: 2000 }
  ],
  ["eth_getLogs is limited to a 1000 block range", { kind: "ceiling", blocks: 1000 }],
  ["eth_getLogs is limited to a 10,000 range", { kind: "ceiling", blocks: 10_000 }],
  ["range 1000000 exceeds limit of 10000", { kind: "ceiling", blocks: 10_000 }],
  ["query exceeds max block range 5000", { kind: "ceiling", blocks: 5000 }],
  ["block range is larger than max block range, block range = 5120, max block range = 5000", {
    kind: "ceiling",
    blocks: 5000
  }],
  ["block range is too wide (maximum 1024)", { kind: "ceiling", blocks: 1024 }],
  ["maximum [from, to] blocks distance: 10000", { kind: "ceiling", blocks: 10_000 }],
  ["block range 20000 is bigger than range limit 5000", { kind: "ceiling", blocks: 5000 }],
  ["please limit the query to at most 1000 blocks", { kind: "ceiling", blocks: 1000 }],
  ["requested too many blocks from 1 to 5000, maximum is set to 2048", { kind: "ceiling", blocks: 2048 }],
  ["Maximum allowed number of requested blocks is 1000", { kind: "ceiling", blocks: 1000 }],
  ["eth_getLogs range exceeds the range allowed for your plan (10000 > 5000)", { kind: "ceiling", blocks: 5000 }],
  ["query returned more than 10000 results. Try with this block range [0x10, 0x1f].", {
    kind: "suggested",
    blocks: 16
  }],
  ["query returned more than 10000 results", { kind: "halve" }],
  ["logs matched by query exceeds limit of 10000", { kind: "halve" }],
  ["Log response size exceeded.", { kind: "halve" }],
  ["query exceeds max results 20000", { kind: "halve" }],
  ["backend response too large", { kind: "halve" }],
  ["block range is too wide", { kind: "halve" }],
  ["Block range limit exceeded.", { kind: "halve" }],
  ["query timeout exceeded", { kind: "halve" }]
]

describe("rangeAdvice", () => {
  it("gives each provider's cap, suggestion or a halving", () => {
    for (const [message, advice] of providerMessages) expect(rangeAdvice(message), message).toEqual(advice)
  })

  it("every pattern names its provider and is matched by one of their messages", () => {
    for (const { pattern, provider } of RANGE_PATTERNS) {
      expect(provider.length).toBeGreaterThan(0)
      expect(providerMessages.some(([message]) => pattern.test(message)), provider).toBe(true)
    }
  })

  it("ignores errors that are not about the range", () => {
    for (
      const message of ["invalid argument 0: hex string without 0x prefix", "execution reverted", "header not found"]
    ) {
      expect(rangeAdvice(message)).toBeUndefined()
    }
    expect(rangeAdvice("eth_getLogs is limited to a 0 block range")).toBeUndefined()
  })
})

describe("classifyRpcFailure", () => {
  const viemError = (fields: Record<string, unknown>) => Object.assign(new Error("long viem message"), fields)

  it("tells time-outs, rate limits, server errors and a node's own errors apart", () => {
    expect(classifyRpcFailure(viemError({ name: "TimeoutError" }), "http://a", "eth_call", 100)._tag).toBe("RpcTimeout")
    const limited = classifyRpcFailure(
      viemError({ name: "HttpRequestError", status: 429, headers: new Headers({ "retry-after": "2" }) }),
      "http://a",
      "eth_call",
      100
    )
    expect(limited).toMatchObject({ _tag: "RpcRateLimited", retryAfterMs: 2000 })
    expect(
      classifyRpcFailure(
        viemError({ name: "RpcRequestError", code: -32005, details: "daily request count exceeded" }),
        "a",
        "m",
        1
      )._tag
    ).toBe("RpcRateLimited")
    expect(classifyRpcFailure(viemError({ name: "HttpRequestError", status: 502 }), "a", "m", 1)._tag).toBe(
      "RpcTransportError"
    )
    expect(
      classifyRpcFailure(viemError({ name: "RpcRequestError", code: -32602, details: "invalid params" }), "a", "m", 1)
    ).toMatchObject({ _tag: "RpcError", code: -32602, message: "invalid params" })
    expect(classifyRpcFailure(new TypeError("fetch failed"), "a", "m", 1)._tag).toBe("RpcTransportError")
  })
})

describe("RPC answers are decoded, not trusted", () => {
  const hash = (c: string) => `0x${c.repeat(64)}`
  const log = {
    address: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    topics: [StockTopics.Transfer.toUpperCase().replace("0X", "0x"), hash("0"), hash("0").replace(/0$/, "1")],
    data: `0x${(10n ** 18n).toString(16).padStart(64, "0")}`,
    blockNumber: "0x10",
    blockHash: hash("A"),
    transactionHash: hash("b"),
    transactionIndex: "0x0",
    logIndex: "0x2",
    removed: false,
    extra: "ignored"
  }

  it.effect("a log: numbers, lowercase hashes, a checksummed address, and its time when given", () =>
    Effect.gen(function*() {
      const decoded = yield* decodeAnswer(RpcLog, "eth_getLogs")(log)
      expect(decoded).toEqual({
        address: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        topics: [StockTopics.Transfer, hash("0"), hash("0").replace(/0$/, "1")],
        data: `0x${(10n ** 18n).toString(16).padStart(64, "0")}`,
        blockNumber: 16,
        blockHash: hash("a"),
        transactionHash: hash("b"),
        transactionIndex: 0,
        logIndex: 2,
        removed: false
      })
      expect((yield* decodeAnswer(RpcLog, "eth_getLogs")({ ...log, blockTimestamp: "0x64" })).blockTimestamp).toBe(100)
      const event = decodeStockLog(decoded)
      expect(Option.getOrThrow(event)).toMatchObject({ _tag: "Transfer", value: 10n ** 18n, block: 16, logIndex: 2 })
    }))

  it.effect("a malformed block, log or receipt is a ChainDecodeError naming the method", () =>
    Effect.gen(function*() {
      const block = { number: "0x1", hash: hash("c"), parentHash: hash("d"), timestamp: "0x5" }
      expect(yield* decodeAnswer(Schema.NullOr(RpcBlock), "eth_getBlockByNumber")(null)).toBeNull()
      expect(yield* decodeAnswer(RpcBlock, "eth_getBlockByNumber")(block)).toEqual({
        number: 1,
        hash: hash("c"),
        parentHash: hash("d"),
        timestamp: 5
      })
      for (
        const [schema, bad] of [
          [RpcBlock, { ...block, timestamp: 5 }],
          [RpcBlock, { ...block, hash: "0x1234" }],
          [RpcLog, { ...log, address: "0x1234" }],
          [RpcLog, { ...log, blockNumber: "sixteen" }],
          [RpcReceipt, { transactionHash: hash("e") }]
        ] as const
      ) {
        const error = yield* Effect.flip(decodeAnswer(schema as Schema.Schema<unknown, unknown>, "eth_method")(bad))
        expect(error).toMatchObject({ _tag: "ChainDecodeError", what: "eth_method answer" })
      }
    }))
})
