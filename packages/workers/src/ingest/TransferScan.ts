import type { BlockRow, ReceiptRow, TransferRow } from "@scaledger/db/chain/ChainRows"
import { ChainClient, StockTopics, type TransferEvent } from "@scaledger/domain/chain/ChainClient"
import { Array as Arr, Chunk, Effect, Option, Stream } from "effect"
import { TokenCatalog } from "./TokenCatalog.js"

/** Addresses per `eth_getLogs` topic filter: keeps requests small when many wallets are watched. */
const ADDRESSES_PER_FILTER = 100

const asTopic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

/**
 * A mint or a burn (the zero address on one side) is classified by that alone; any other transfer may be one leg of
 * a swap or a contract interaction, whose other legs and sender are in its transaction's receipt.
 */
const needsReceipt = (event: TransferEvent) =>
  event.from.toLowerCase() !== ZERO_ADDRESS && event.to.toLowerCase() !== ZERO_ADDRESS

export interface TransferScan {
  readonly transfers: ReadonlyArray<TransferRow>
  readonly receipts: ReadonlyArray<ReceiptRow>
  readonly blocks: ReadonlyArray<BlockRow>
}

/**
 * The stock-token `Transfer`s in `[fromBlock, toBlock]` that send to or from any of `addresses` (any contract:
 * tokens no list names are recognised by their ERC-8056 interface), with their blocks' times and the receipts of
 * their transactions (the other legs and the sender, for classification), except for mints and burns.
 */
export const scanTransfers = (addresses: ReadonlyArray<string>, fromBlock: number, toBlock: number) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    const catalog = yield* TokenCatalog
    if (addresses.length === 0 || fromBlock > toBlock) {
      return { transfers: [], receipts: [], blocks: [] } satisfies TransferScan
    }
    const filters = Arr.chunksOf(addresses.map(asTopic), ADDRESSES_PER_FILTER).flatMap((group) => [
      [StockTopics.Transfer, group],
      [StockTopics.Transfer, null, group]
    ])
    const logs = yield* Effect.forEach(filters, (topics) =>
      chain.logs({ topics, fromBlock, toBlock }).pipe(
        Stream.runCollect,
        Effect.map((chunks) => Chunk.toReadonlyArray(chunks).flatMap((chunk) => chunk.logs))
      ))
    const seen = new Set<string>()
    const events: Array<TransferEvent> = []
    // Block times the node gave with the logs (geth 1.16+, Reth): no block reads for those.
    const times = new Map<number, number>()
    for (const log of logs.flat()) {
      const id = `${log.transactionHash}:${log.logIndex}`
      if (seen.has(id)) continue
      seen.add(id)
      const decoded = chain.decodeStockLog(log)
      if (Option.isSome(decoded) && decoded.value._tag === "Transfer") events.push(decoded.value)
      if (log.blockTimestamp !== undefined) times.set(log.blockNumber, log.blockTimestamp)
    }
    const contracts = [...new Set(events.map((event) => event.token))]
    const stock = new Set<string>()
    yield* Effect.forEach(contracts, (contract) =>
      Effect.map(catalog.isStock(contract), (isStock) => {
        if (isStock) stock.add(contract)
      }), { concurrency: 4 })
    const stockEvents = events.filter((event) => stock.has(event.token))
    stockEvents.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex)

    // The other blocks' times in batched reads; the receipts (the other legs, for classification) likewise, a
    // block's all at once where it holds many of them.
    const untimed = [...new Set(stockEvents.map((event) => event.block))].filter((block) => !times.has(block))
    for (const [block, time] of yield* chain.blockTimestamps(untimed)) times.set(block, time)
    const transactions = new Map(
      stockEvents.filter(needsReceipt).map((event) => [event.txHash, { txHash: event.txHash, block: event.block }])
    )
    const receipts = yield* chain.receipts([...transactions.values()])

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
      receipts: receipts.map((receipt): ReceiptRow => ({
        txHash: receipt.txHash,
        block: receipt.blockNumber,
        blockHash: receipt.blockHash,
        from: receipt.from,
        to: receipt.to,
        status: receipt.status,
        logs: receipt.logs
      })),
      blocks: [...blockHashes.entries()].map(([number, hash]): BlockRow => ({
        number,
        hash,
        parentHash: null,
        time: new Date(times.get(number)! * 1000)
      }))
    } satisfies TransferScan
  })
