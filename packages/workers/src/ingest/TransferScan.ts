import type { BlockRow, TransferRow } from "@scaledger/db/chain/ChainRows"
import {
  ChainClient,
  type ChainClientService,
  type RawLog,
  StockTopics,
  type TransferEvent
} from "@scaledger/domain/chain/ChainClient"
import { Array as Arr, Effect, Option, Stream } from "effect"
import { TokenCatalog } from "./TokenCatalog.js"

/** Addresses per `eth_getLogs` topic filter: keeps requests small when many wallets are watched. */
const ADDRESSES_PER_FILTER = 100

const asTopic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`

export interface TransferScan {
  readonly transfers: ReadonlyArray<TransferRow>
  readonly blocks: ReadonlyArray<BlockRow>
}

/**
 * The `Transfer`s of one page of logs not seen before (two filters can return the same log), decoded; the block
 * times the logs carry (geth 1.16+, Reth) go into `times`, so those blocks are never read.
 */
const decodeTransfers = (
  chain: ChainClientService,
  logs: ReadonlyArray<RawLog>,
  seen: Set<string>,
  times: Map<number, number>
) => {
  const events: Array<TransferEvent> = []
  for (const log of logs) {
    const id = `${log.transactionHash}:${log.logIndex}`
    if (seen.has(id)) continue
    seen.add(id)
    const decoded = chain.decodeStockLog(log)
    if (Option.isSome(decoded) && decoded.value._tag === "Transfer") events.push(decoded.value)
    if (log.blockTimestamp !== undefined) times.set(log.blockNumber, log.blockTimestamp)
  }
  return events
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
    const seen = new Set<string>()
    const times = new Map<number, number>()
    /** Blocks whose time was asked for, by either filter: each is read once. */
    const asked = new Set<number>()
    const stockEvents: Array<TransferEvent> = []

    /** One page of logs: its stock-token transfers, and the times of their blocks that the logs did not give. */
    const page = (logs: ReadonlyArray<RawLog>) =>
      Effect.gen(function*() {
        const events = yield* Effect.sync(() => decodeTransfers(chain, logs, seen, times)).pipe(
          Effect.withSpan("TransferScan.decode")
        )
        const stock = new Set<string>()
        yield* Effect.forEach(new Set(events.map((event) => event.token)), (contract) =>
          Effect.map(catalog.isStock(contract), (isStock) => {
            if (isStock) {
              stock.add(contract)
            }
          }), { concurrency: 4 }).pipe(Effect.withSpan("TransferScan.tokens"))
        const untimed: Array<number> = []
        for (const event of events) {
          if (!stock.has(event.token)) {
            continue
          }
          stockEvents.push(event)
          if (!times.has(event.block) && !asked.has(event.block)) {
            asked.add(event.block)
            untimed.push(event.block)
          }
        }
        if (untimed.length === 0) {
          return
        }
        const read = yield* chain.blockTimestamps(untimed).pipe(Effect.withSpan("TransferScan.blockTimes"))
        for (const [block, time] of read) {
          times.set(block, time)
        }
      })

    // Pipelined: the next page of logs is fetched while this page's block times are read, and both sides of the
    // transfers at once.
    yield* Effect.forEach(filters, (topics) =>
      chain.logs({ topics, fromBlock, toBlock }).pipe(
        Stream.buffer({ capacity: 2 }),
        Stream.runForEach((chunk) => page(chunk.logs))
      ), { concurrency: 2, discard: true }).pipe(Effect.withSpan("TransferScan.fetch"))
    stockEvents.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex)

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
