import type { BlockRow, TransferRow } from "@scaledger/db"
import {
  ChainClient,
  type ChainClientService,
  type RawLog,
  StockTopics,
  type TransferEvent
} from "@scaledger/domain/chain/ChainClient"
import { Array as Arr, Chunk, Effect, Option, Stream } from "effect"
import { TokenCatalog } from "./TokenCatalog.js"

/** Addresses per `eth_getLogs` topic filter: keeps requests small when many wallets are watched. */
const ADDRESSES_PER_FILTER = 100

const asTopic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`

export interface TransferScan {
  readonly transfers: ReadonlyArray<TransferRow>
  readonly blocks: ReadonlyArray<BlockRow>
}

/** Each `Transfer` log once (two filters can return the same log), decoded, with the block times logs carry. */
const decodeTransfers = (chain: ChainClientService, logs: ReadonlyArray<RawLog>) => {
  const seen = new Set<string>()
  const events: Array<TransferEvent> = []
  // Block times the node gave with the logs (geth 1.16+, Reth): no block reads for those.
  const times = new Map<number, number>()
  for (const log of logs) {
    const id = `${log.transactionHash}:${log.logIndex}`
    if (seen.has(id)) continue
    seen.add(id)
    const decoded = chain.decodeStockLog(log)
    if (Option.isSome(decoded) && decoded.value._tag === "Transfer") events.push(decoded.value)
    if (log.blockTimestamp !== undefined) times.set(log.blockNumber, log.blockTimestamp)
  }
  return { events, times }
}

/**
 * The stock-token `Transfer`s in `[fromBlock, toBlock]` that send to or from any of `addresses` (any contract:
 * tokens no list names are recognised by their ERC-8056 interface), with their blocks' times. No receipts: what
 * classification needs of a transaction beyond its transfers, the classification worker reads itself, only for the
 * movements the rules leave to the model.
 */
export const scanTransfers = (addresses: ReadonlyArray<string>, fromBlock: number, toBlock: number) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    const catalog = yield* TokenCatalog
    if (addresses.length === 0 || fromBlock > toBlock) {
      return { transfers: [], blocks: [] } satisfies TransferScan
    }
    const filters = Arr.chunksOf(addresses.map(asTopic), ADDRESSES_PER_FILTER).flatMap((group) => [
      [StockTopics.Transfer, group],
      [StockTopics.Transfer, null, group]
    ])
    const logs = yield* Effect.forEach(filters, (topics) =>
      chain.logs({ topics, fromBlock, toBlock }).pipe(
        Stream.runCollect,
        Effect.map((chunks) => Chunk.toReadonlyArray(chunks).flatMap((chunk) => chunk.logs))
      )).pipe(Effect.withSpan("TransferScan.logs"))
    const { events, times } = yield* Effect.sync(() => decodeTransfers(chain, logs.flat())).pipe(
      Effect.withSpan("TransferScan.decode")
    )
    const contracts = [...new Set(events.map((event) => event.token))]
    const stock = new Set<string>()
    yield* Effect.forEach(contracts, (contract) =>
      Effect.map(catalog.isStock(contract), (isStock) => {
        if (isStock) stock.add(contract)
      }), { concurrency: 4 }).pipe(Effect.withSpan("TransferScan.tokens"))
    const stockEvents = events.filter((event) => stock.has(event.token))
    stockEvents.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex)

    // The other blocks' times in batched reads (cached once final).
    const untimed = [...new Set(stockEvents.map((event) => event.block))].filter((block) => !times.has(block))
    if (untimed.length > 0) {
      const read = yield* chain.blockTimestamps(untimed).pipe(Effect.withSpan("TransferScan.blockTimes"))
      for (const [block, time] of read) times.set(block, time)
    }

    const transfers = stockEvents.map((event): TransferRow => ({
      txHash: event.txHash,
      logIndex: event.logIndex,
      block: event.block,
      blockHash: event.blockHash,
      time: new Date(times.get(event.block)! * 1000),
      token: event.token,
      from: event.from,
      to: event.to,
      raw: event.value
    }))
    const blockHashes = new Map(stockEvents.map((event) => [event.block, event.blockHash]))
    return {
      transfers,
      blocks: [...blockHashes.entries()].map(([number, hash]): BlockRow => ({
        number,
        hash,
        parentHash: null,
        time: new Date(times.get(number)! * 1000)
      }))
    } satisfies TransferScan
  })
