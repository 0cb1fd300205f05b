/**
 * `ChainClient` over viem transports, composed of: `rpc/Endpoint` (bytes over HTTP or WebSocket), `rpc/Transport`
 * (concurrency cap, time-outs, retries, fallback, batching, what a node's error means), `rpc/Failures` and
 * `rpc/RangeAdvice` (reading providers' errors), `rpc/RpcSchemas` (decoding answers), `StockLogs` (event decoding),
 * `ContractRead` (one generic `eth_call`) and `NewHeads`. This module adds the chain's vocabulary on top: blocks
 * and their timestamps (cached when final), `eth_getLogs` in adaptive chunks, receipts, and the contract reads.
 */
import { ChainClient, StockInterfaceId } from "@scaledger/domain/chain/ChainClient"
import type {
  BlockHeader,
  ChainClientService,
  LogChunk,
  LogFilter,
  RoundData,
  StockState,
  TransactionFacts,
  TransactionReceipt
} from "@scaledger/domain/chain/ChainClient"
import { BlockNotFound, ReceiptNotFound, RpcRangeTooLarge } from "@scaledger/domain/chain/ChainErrors"
import type { ReadError, RequestError, RpcError } from "@scaledger/domain/chain/ChainErrors"
import { Effect, Either, Layer, Option, Schema, Stream } from "effect"
import { getAddress } from "viem"
import { aggregatorV3Abi, stockAbi } from "./abi.js"
import { ChainConfig } from "./ChainConfig.js"
import { makeContractRead } from "./ContractRead.js"
import { makeNewHeads } from "./NewHeads.js"
import { BLOCK_NOT_FOUND, UNSUPPORTED_METHOD } from "./rpc/Failures.js"
import { fastBlock, fastLogs } from "./rpc/FastDecode.js"
import { rangeAdvice } from "./rpc/RangeAdvice.js"
import {
  decodeAnswer,
  Quantity,
  RpcBlock,
  RpcLog,
  RpcReceipt,
  RpcTransaction,
  toReceipt,
  toTransactionFacts
} from "./rpc/RpcSchemas.js"
import { makeTransport } from "./rpc/Transport.js"
import { decodeStockLog, STOCK_TOPICS } from "./StockLogs.js"

export { endpointLabel } from "./rpc/Endpoint.js"
export { classifyRpcFailure } from "./rpc/Failures.js"
export { type RangeAdvice, rangeAdvice } from "./rpc/RangeAdvice.js"
export { decodeStockLog } from "./StockLogs.js"

const MAX_CACHED_TIMESTAMPS = 100_000

const toHex = (n: number | bigint) => `0x${n.toString(16)}`

const decodeBlock = fastBlock(decodeAnswer(Schema.NullOr(RpcBlock), "eth_getBlockByNumber"))
const decodeBlockByHash = fastBlock(decodeAnswer(Schema.NullOr(RpcBlock), "eth_getBlockByHash"))
const decodeLogs = fastLogs(decodeAnswer(Schema.Array(RpcLog), "eth_getLogs"))
const decodeChainId = decodeAnswer(Quantity, "eth_chainId")
const decodeReceipt = decodeAnswer(Schema.NullOr(RpcReceipt), "eth_getTransactionReceipt")
const decodeTransaction = decodeAnswer(Schema.NullOr(RpcTransaction), "eth_getTransactionByHash")
const decodeBlockReceipts = decodeAnswer(Schema.NullOr(Schema.Array(RpcReceipt)), "eth_getBlockReceipts")

const Uint = Schema.BigIntFromSelf
const RoundTuple = Schema.Tuple(Uint, Uint, Uint, Uint, Uint)
const toRound = ([roundId, answer, startedAt, updatedAt, answeredInRound]: typeof RoundTuple.Type): RoundData => ({
  roundId,
  answer,
  startedAt: Number(startedAt),
  updatedAt: Number(updatedAt),
  answeredInRound
})

export const make = Effect.gen(function*() {
  const config = yield* ChainConfig
  const transport = yield* makeTransport(config)
  const read = makeContractRead(transport)
  const { headNumber, noteHead } = transport

  let logsCeiling = config.logsMaxChunk
  let blockReceiptsServed = true
  const timestamps = new Map<number, number>()

  /** A block's header; a node's "unknown block" is `BlockNotFound`, like a `null` answer. */
  const header = (
    answer: Effect.Effect<unknown, RequestError>,
    label: number | string,
    decode: typeof decodeBlock
  ): Effect.Effect<BlockHeader, RequestError | BlockNotFound> =>
    answer.pipe(
      Effect.catchTag("RpcError", (error): Effect.Effect<never, RpcError | BlockNotFound> =>
        Effect.fail(
          BLOCK_NOT_FOUND.test(error.message) ? new BlockNotFound({ block: label, message: error.message }) : error
        )),
      Effect.flatMap(decode),
      Effect.flatMap((b) =>
        b === null
          ? Effect.fail(new BlockNotFound({ block: label, message: `block ${label} not found` }))
          : Effect.succeed(b)
      )
    )

  const getBlock = (tag: string, label: number | string) =>
    header(transport.send("eth_getBlockByNumber", [tag, false]), label, decodeBlock).pipe(
      Effect.tap((h) => Effect.sync(() => noteHead(h.number)))
    )

  const head = getBlock("latest", "latest")
  const block = (n: number) => getBlock(toHex(n), n)
  const blockByHash = (hash: string) =>
    header(transport.send("eth_getBlockByHash", [hash, false]), hash, decodeBlockByHash)

  /** Keeps a final block's time (from its header, or from a log that carries it). */
  const rememberTime = (number: number, timestamp: number) => {
    if (number + config.finalityDepth <= transport.knownHead() && !timestamps.has(number)) {
      if (timestamps.size >= MAX_CACHED_TIMESTAMPS) timestamps.delete(timestamps.keys().next().value!)
      timestamps.set(number, timestamp)
    }
  }

  const remember = (h: BlockHeader) => {
    rememberTime(h.number, h.timestamp)
    return h.timestamp
  }

  const blockTimestamp = (n: number): Effect.Effect<number, RequestError | BlockNotFound> =>
    Effect.suspend(() => {
      const cached = timestamps.get(n)
      return cached !== undefined ? Effect.succeed(cached) : Effect.map(block(n), remember)
    })

  const blockTimestamps = (numbers: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const out = new Map<number, number>()
      const missing: Array<number> = []
      for (const n of new Set(numbers)) {
        const cached = timestamps.get(n)
        if (cached !== undefined) out.set(n, cached)
        else missing.push(n)
      }
      const answers = yield* transport.sendAll("eth_getBlockByNumber", missing.map((n) => [toHex(n), false]))
      for (let i = 0; i < missing.length; i++) {
        const n = missing[i]!
        const h = yield* decodeBlock(answers[i])
        if (h === null) return yield* new BlockNotFound({ block: n, message: `block ${n} not found` })
        noteHead(h.number)
        out.set(n, remember(h))
      }
      return out as ReadonlyMap<number, number>
    })

  const fetchLogs = (
    filter: LogFilter,
    from: number,
    size: number
  ): Effect.Effect<readonly [LogChunk, number], RequestError | RpcRangeTooLarge> => {
    const to = Math.min(from + size - 1, filter.toBlock)
    const span = to - from + 1
    const rpcFilter = {
      ...(filter.addresses === undefined ? {} : { address: filter.addresses }),
      ...(filter.topics === undefined ? {} : { topics: filter.topics }),
      fromBlock: toHex(from),
      toBlock: toHex(to)
    }
    return transport.send("eth_getLogs", [rpcFilter]).pipe(
      Effect.withSpan("ChainClient.getLogs"),
      Effect.flatMap((answer) => Effect.withSpan(Effect.suspend(() => decodeLogs(answer)), "ChainClient.decodeLogs")),
      Effect.map((logs) => {
        for (const log of logs) {
          if (log.blockTimestamp !== undefined) rememberTime(log.blockNumber, log.blockTimestamp)
        }
        // A log marked `removed` belongs to a block a re-org took back: it never happened on the chain now.
        const sorted = logs.filter((log) => !log.removed).sort((a, b) =>
          a.blockNumber - b.blockNumber || a.logIndex - b.logIndex
        )
        const grown = Math.min(span * 2, logsCeiling, config.logsMaxChunk)
        return [{ fromBlock: from, toBlock: to, logs: sorted }, Math.max(grown, 1)] as const
      }),
      Effect.catchTag("RpcError", (error) => {
        const advice = rangeAdvice(error.message)
        if (advice === undefined) return Effect.fail(error)
        if (span <= 1) {
          return Effect.fail(new RpcRangeTooLarge({ fromBlock: from, toBlock: to, message: error.message }))
        }
        if (advice.kind === "ceiling") logsCeiling = Math.max(1, Math.min(logsCeiling, advice.blocks))
        const next = advice.kind === "halve" ? Math.floor(span / 2) : Math.min(advice.blocks, span - 1)
        return fetchLogs(filter, from, Math.max(1, next))
      })
    )
  }

  const logs = (filter: LogFilter): Stream.Stream<LogChunk, RequestError | RpcRangeTooLarge> => {
    if (filter.fromBlock > filter.toBlock || (filter.addresses !== undefined && filter.addresses.length === 0)) {
      return Stream.empty
    }
    return Stream.unfoldEffect(
      { from: filter.fromBlock, size: Math.min(config.logsInitialChunk, logsCeiling) },
      (state) =>
        state.from > filter.toBlock
          ? Effect.succeed(Option.none())
          : fetchLogs(filter, state.from, state.size).pipe(
            Effect.map(([chunk, size]) => Option.some([chunk, { from: chunk.toBlock + 1, size }] as const))
          )
    )
  }

  const stockEvents: ChainClientService["stockEvents"] = (filter) =>
    logs({
      addresses: filter.tokens,
      topics: [filter.topics ?? STOCK_TOPICS],
      fromBlock: filter.fromBlock,
      toBlock: filter.toBlock
    }).pipe(
      Stream.map((chunk) => ({
        fromBlock: chunk.fromBlock,
        toBlock: chunk.toBlock,
        events: chunk.logs.flatMap((l) => Option.toArray(decodeStockLog(l)))
      }))
    )

  const stockRead = <A, I>(
    functionName: "uiMultiplier" | "newUIMultiplier" | "effectiveAt" | "paused" | "tokenPaused" | "oraclePaused",
    result: Schema.Schema<A, I>
  ) =>
  (token: string, block?: number) => read({ address: token, abi: stockAbi, functionName, block, result })

  const uiMultiplier = stockRead("uiMultiplier", Uint)
  const newUIMultiplier = stockRead("newUIMultiplier", Uint)
  const effectiveAt = (token: string, block?: number) =>
    Effect.map(stockRead("effectiveAt", Uint)(token, block), Number)
  const paused = stockRead("paused", Schema.Boolean)
  const tokenPaused = stockRead("tokenPaused", Schema.Boolean)
  const oraclePaused = stockRead("oraclePaused", Schema.Boolean)

  const stockState = (token: string, block?: number): Effect.Effect<StockState, ReadError> =>
    Effect.flatMap(block === undefined ? headNumber : Effect.succeed(block), (at) =>
      Effect.all({
        uiMultiplier: uiMultiplier(token, at),
        newUIMultiplier: newUIMultiplier(token, at),
        effectiveAt: effectiveAt(token, at),
        paused: paused(token, at),
        tokenPaused: tokenPaused(token, at),
        oraclePaused: oraclePaused(token, at)
      }, { concurrency: "unbounded" }).pipe(Effect.map((s) => ({ token: getAddress(token), block: at, ...s }))))

  const balanceOf = (token: string, holder: string, block?: number) =>
    read({ address: token, abi: stockAbi, functionName: "balanceOf", args: [holder], block, result: Uint })

  const decimals = (token: string) =>
    read({ address: token, abi: stockAbi, functionName: "decimals", result: Schema.Number })

  const isStockToken = (address: string, block?: number) =>
    read({
      address,
      abi: stockAbi,
      functionName: "supportsInterface",
      args: [StockInterfaceId],
      block,
      result: Schema.Boolean
    }).pipe(
      Effect.catchTags({
        ContractReverted: () => Effect.succeed(false),
        ChainDecodeError: () => Effect.succeed(false)
      })
    )

  const feedDecimals = (feed: string) =>
    read({ address: feed, abi: aggregatorV3Abi, functionName: "decimals", result: Schema.Number })

  const latestRoundData = (feed: string, block?: number) =>
    read({ address: feed, abi: aggregatorV3Abi, functionName: "latestRoundData", block, result: RoundTuple })
      .pipe(Effect.map(toRound))

  const getRoundData = (feed: string, roundId: bigint, block?: number) =>
    read({
      address: feed,
      abi: aggregatorV3Abi,
      functionName: "getRoundData",
      args: [roundId],
      block,
      result: RoundTuple
    }).pipe(Effect.map(toRound))

  const notFound = (txHash: string) => new ReceiptNotFound({ txHash, message: `no receipt for ${txHash}` })

  const receipt = (txHash: string): Effect.Effect<TransactionReceipt, RequestError | ReceiptNotFound> =>
    transport.send("eth_getTransactionReceipt", [txHash]).pipe(
      Effect.flatMap(decodeReceipt),
      Effect.flatMap((r) => (r === null ? Effect.fail(notFound(txHash)) : Effect.succeed(toReceipt(r))))
    )

  /** Whole blocks' receipts, or none when the node does not offer `eth_getBlockReceipts` (remembered). */
  const blockReceipts = (blocks: ReadonlyArray<number>) =>
    transport.sendAll("eth_getBlockReceipts", blocks.map((n) => [toHex(n)])).pipe(
      Effect.flatMap(Effect.forEach(decodeBlockReceipts)),
      Effect.map((lists) => lists.flatMap((list) => (list ?? []).map(toReceipt))),
      Effect.catchTag("RpcError", (error) => {
        if (!(error.code === -32601 || UNSUPPORTED_METHOD.test(error.message))) return Effect.fail(error)
        blockReceiptsServed = false
        return Effect.succeed([])
      })
    )

  const receipts: ChainClientService["receipts"] = (transactions) =>
    Effect.gen(function*() {
      const perBlock = new Map<number, number>()
      for (const { block } of transactions) perBlock.set(block, (perBlock.get(block) ?? 0) + 1)
      const found = new Map<string, TransactionReceipt>()
      if (blockReceiptsServed) {
        const busy = [...perBlock].flatMap(([block, count]) => (count >= config.blockReceiptsMin ? [block] : []))
        if (busy.length > 0) { for (const r of yield* blockReceipts(busy)) found.set(r.txHash, r) }
      }
      const rest = [...new Set(transactions.map((t) => t.txHash.toLowerCase()))].filter((h) => !found.has(h))
      const answers = yield* transport.sendAll("eth_getTransactionReceipt", rest.map((h) => [h]))
      for (let i = 0; i < rest.length; i++) {
        const r = yield* decodeReceipt(answers[i])
        if (r === null) return yield* notFound(rest[i]!)
        found.set(r.transactionHash, toReceipt(r))
      }
      return transactions.map((t) => found.get(t.txHash.toLowerCase())!)
    })

  const hasCode: ChainClientService["hasCode"] = (addresses) =>
    Effect.gen(function*() {
      const keys = [...new Set(addresses.map((a) => a.toLowerCase()))]
      if (keys.length === 0) return new Map<string, boolean>()
      const answers = yield* transport.sendAll("eth_getCode", keys.map((a) => [a, "latest"]))
      return new Map(keys.map((key, i) => {
        const code = answers[i]
        return [key, typeof code === "string" && code !== "0x" && code !== "0x0" && code.length > 2] as const
      }))
    })

  const transactions: ChainClientService["transactions"] = (txHashes) =>
    Effect.gen(function*() {
      const keys = [...new Set(txHashes.map((h) => h.toLowerCase()))]
      const answers = yield* transport.sendAll("eth_getTransactionByHash", keys.map((h) => [h]))
      const found = new Map<string, TransactionFacts>()
      // An answer of another shape (some chains' system transactions) is as good as none: the facts are optional.
      for (let i = 0; i < keys.length; i++) {
        const tx = decodeTransaction(answers[i])
        if (Either.isRight(tx) && tx.right !== null) found.set(keys[i]!, toTransactionFacts(tx.right))
      }
      return found as ReadonlyMap<string, TransactionFacts>
    })

  const service: ChainClientService = {
    chainId: config.chainId,
    head,
    headNumber,
    nodeChainId: Effect.flatMap(transport.send("eth_chainId", []), decodeChainId),
    newHeads: makeNewHeads({ config, transport, head, block }),
    block,
    blockByHash,
    blockTimestamp,
    blockTimestamps,
    logs,
    stockEvents,
    decodeStockLog,
    uiMultiplier,
    newUIMultiplier,
    effectiveAt,
    paused,
    tokenPaused,
    oraclePaused,
    balanceOf,
    decimals,
    stockState,
    isStockToken,
    feedDecimals,
    latestRoundData,
    getRoundData,
    receipt,
    receipts,
    hasCode,
    transactions
  }
  return service
})

/** The client over `ChainConfig`. */
export const ViemChainClientLayer: Layer.Layer<ChainClient, never, ChainConfig> = Layer.scoped(ChainClient, make)

/** The client configured from the environment (`RPC_URL`, `CHAIN_ID`, ...). */
export const ViemChainClientLive = ViemChainClientLayer.pipe(Layer.provide(ChainConfig.Live))
