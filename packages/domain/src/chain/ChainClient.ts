/**
 * The chain client: what the workers need from an EVM JSON-RPC endpoint, in plain types (no viem).
 * Addresses are EIP-55 checksummed strings, hashes 0x-prefixed lowercase hex, block numbers and unix-second
 * timestamps `number`, raw amounts and 18-decimal multipliers `bigint`.
 */
import type { Effect, Option, Stream } from "effect"
import { Context } from "effect"
import type {
  BlockNotFound,
  ReadError,
  ReceiptNotFound,
  RequestError,
  RpcRangeTooLarge,
  StateUnavailable
} from "./ChainErrors.js"

export type Address = string
export type Hash = string

/** topic0 of the events a `Stock` token emits. */
export const StockTopics = {
  /** `UIMultiplierUpdated(uint256 oldMultiplier, uint256 newMultiplier, uint256 effectiveAtTimestamp)` (ERC-8056) */
  UIMultiplierUpdated: "0x2205df4534432b2f60654a3fdb48737ffdaf3e9edb1a498bd985bc026b15b055",
  /** `UIMultiplierUpdated(uint256, uint256, uint256 setAtTimestamp, uint256 effectiveAtTimestamp)` (older draft) */
  UIMultiplierUpdatedDraft: "0x69cf817424dab3ffd3ee33ea83c0597f81c3f5a1e71a9007b18a99c8eee952d6",
  /** `Transfer(address indexed from, address indexed to, uint256 value)` */
  Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  /** `TransferWithScaledUI(address indexed from, address indexed to, uint256 value, uint256 uiValue)` */
  TransferWithScaledUI: "0x37e7f0db430edc9dd31bc66f25f8449353aa0818f503b906747dd8f286cd3802",
  /** `Paused()` */
  Paused: "0x9e87fac88ff661f02d44f95383c817fece4bce600a3dab7a54406878b965e752",
  /** `Unpaused()` */
  Unpaused: "0xa45f47fdea8a1efdd9029a5691c7f759c32b7c698632b563573e155625d16933",
  /** `OraclePaused()` */
  OraclePaused: "0xe28b7053f432ae5400c6168140cbe15638399715519a0a39b16b505fb9fc9d9a",
  /** `OracleUnpaused()` */
  OracleUnpaused: "0xa274116fec684497d55e11cc9516edaa8d206c8b5f84c4603e32572c37f8e6dd"
} as const

/** A token's own lifecycle events, without its transfers: multiplier announcements (both variants) and pauses. */
export const StockLifecycleTopics: ReadonlyArray<Hash> = [
  StockTopics.UIMultiplierUpdated,
  StockTopics.UIMultiplierUpdatedDraft,
  StockTopics.Paused,
  StockTopics.Unpaused,
  StockTopics.OraclePaused,
  StockTopics.OracleUnpaused
]

/** ERC-165 id that marks an ERC-8056 stock token. */
export const StockInterfaceId = "0xa60bf13d"

export interface BlockHeader {
  readonly number: number
  readonly hash: Hash
  readonly parentHash: Hash
  readonly timestamp: number
}

/** Per position: one topic, any of several, or any (`null`). */
export type TopicFilter = ReadonlyArray<Hash | ReadonlyArray<Hash> | null>

export interface LogFilter {
  /** Omitted: logs of any address. An empty list matches nothing. */
  readonly addresses?: ReadonlyArray<Address>
  readonly topics?: TopicFilter
  readonly fromBlock: number
  /** Inclusive. */
  readonly toBlock: number
}

export interface RawLog {
  readonly address: Address
  readonly topics: ReadonlyArray<Hash>
  readonly data: string
  readonly blockNumber: number
  readonly blockHash: Hash
  readonly transactionHash: Hash
  readonly transactionIndex: number
  readonly logIndex: number
  readonly removed: boolean
  /** Unix seconds of the log's block, when the node gives it with the log (geth 1.16+, Reth, some providers). */
  readonly blockTimestamp?: number
}

/** The logs of one block range `[fromBlock, toBlock]`; chunks of a stream cover the filter's range in order. */
export interface LogChunk {
  readonly fromBlock: number
  readonly toBlock: number
  readonly logs: ReadonlyArray<RawLog>
}

export interface LogPosition {
  /** The token (or feed) that emitted the log. */
  readonly token: Address
  readonly block: number
  readonly blockHash: Hash
  readonly logIndex: number
  readonly txHash: Hash
}

/** `erc8056`: the 3-argument event; `erc8056-draft`: the older 4-argument one (with `setAt`). */
export type MultiplierEventVariant = "erc8056" | "erc8056-draft"

/** A `UIMultiplierUpdated` log: announces `newMultiplier`, in force (silently) from `effectiveAt`. */
export interface MultiplierAnnouncement extends LogPosition {
  readonly _tag: "MultiplierAnnouncement"
  readonly oldMultiplier: bigint
  readonly newMultiplier: bigint
  /** Unix seconds. */
  readonly effectiveAt: number
  /** Unix seconds; only the draft variant carries it. */
  readonly setAt?: number
  readonly variant: MultiplierEventVariant
}

export interface TransferEvent extends LogPosition {
  readonly _tag: "Transfer"
  readonly from: Address
  readonly to: Address
  /** Raw amount. */
  readonly value: bigint
}

export interface ScaledTransferEvent extends LogPosition {
  readonly _tag: "TransferWithScaledUI"
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  /** value × multiplier in force, as the token computed it. */
  readonly uiValue: bigint
}

export type PauseKind = "Paused" | "Unpaused" | "OraclePaused" | "OracleUnpaused"

export interface PauseEvent extends LogPosition {
  readonly _tag: "Pause"
  readonly kind: PauseKind
}

export type StockEvent = MultiplierAnnouncement | TransferEvent | ScaledTransferEvent | PauseEvent

export interface StockEventChunk {
  readonly fromBlock: number
  readonly toBlock: number
  readonly events: ReadonlyArray<StockEvent>
}

/** The multiplier state of a token at a block (`eth_call`s at that block). */
export interface StockState {
  readonly token: Address
  readonly block: number
  /** In force at the block. */
  readonly uiMultiplier: bigint
  readonly newUIMultiplier: bigint
  /** Unix seconds; 0 when nothing was ever scheduled. */
  readonly effectiveAt: number
  readonly paused: boolean
  readonly tokenPaused: boolean
  readonly oraclePaused: boolean
}

/** AggregatorV3 round; `answer` has the feed's decimals (8 for Robinhood's stock feeds). */
export interface RoundData {
  readonly roundId: bigint
  readonly answer: bigint
  readonly startedAt: number
  readonly updatedAt: number
  readonly answeredInRound: bigint
}

export interface TransactionReceipt {
  readonly txHash: Hash
  readonly blockNumber: number
  readonly blockHash: Hash
  readonly transactionIndex: number
  readonly from: Address
  readonly to: Address | null
  readonly status: "success" | "reverted"
  readonly gasUsed: bigint
  readonly effectiveGasPrice: bigint
  readonly logs: ReadonlyArray<RawLog>
}

/** What a transaction says of itself: the same for its hash on every branch of a re-org. */
export interface TransactionFacts {
  readonly from: Address
  /** Null for a contract creation. */
  readonly to: Address | null
  /** The first four bytes of its input as lowercase 0x-hex; null for an input shorter than that. */
  readonly selector: string | null
}

/** A block to read state at; omitted means the latest block. */
export type BlockTag = number | undefined

export interface ChainClientService {
  readonly chainId: number
  /** The latest block. */
  readonly head: Effect.Effect<BlockHeader, RequestError | BlockNotFound>
  readonly headNumber: Effect.Effect<number, RequestError>
  /** The chain id the node says it serves (`eth_chainId`), which `chainId` (the configured one) should be. */
  readonly nodeChainId: Effect.Effect<number, RequestError>
  /**
   * New heads as they arrive: `eth_subscribe("newHeads")` when a ws(s) endpoint is configured, polling otherwise
   * (polling fills skipped numbers). After a re-org a number can come again with another hash.
   */
  readonly newHeads: Stream.Stream<BlockHeader, RequestError>
  readonly block: (number: number) => Effect.Effect<BlockHeader, RequestError | BlockNotFound>
  readonly blockByHash: (hash: Hash) => Effect.Effect<BlockHeader, RequestError | BlockNotFound>
  /** Cached once the block is final (deeper than the finality depth). */
  readonly blockTimestamp: (number: number) => Effect.Effect<number, RequestError | BlockNotFound>
  /** The timestamps of many blocks, by number: cached ones, the rest read in JSON-RPC batches. */
  readonly blockTimestamps: (
    numbers: ReadonlyArray<number>
  ) => Effect.Effect<ReadonlyMap<number, number>, RequestError | BlockNotFound>
  /**
   * `eth_getLogs` over `[fromBlock, toBlock]` in chunks, in block order. The chunk size adapts: it shrinks on the
   * provider's range and result-count errors (to the limit the error names, or by half) and grows again on success.
   */
  readonly logs: (filter: LogFilter) => Stream.Stream<LogChunk, RequestError | RpcRangeTooLarge>
  /**
   * The logs of `Stock` tokens, decoded; logs that are none of the known events are skipped. `topics` narrows the
   * events asked for (default: all of `StockTopics`; `StockLifecycleTopics` leaves the transfers out).
   */
  readonly stockEvents: (filter: {
    readonly tokens: ReadonlyArray<Address>
    readonly fromBlock: number
    readonly toBlock: number
    readonly topics?: ReadonlyArray<Hash>
  }) => Stream.Stream<StockEventChunk, RequestError | RpcRangeTooLarge>
  /** Decodes one log of a `Stock` token, if it is a known event. */
  readonly decodeStockLog: (log: RawLog) => Option.Option<StockEvent>
  readonly uiMultiplier: (token: Address, block?: BlockTag) => Effect.Effect<bigint, ReadError>
  readonly newUIMultiplier: (token: Address, block?: BlockTag) => Effect.Effect<bigint, ReadError>
  readonly effectiveAt: (token: Address, block?: BlockTag) => Effect.Effect<number, ReadError>
  readonly paused: (token: Address, block?: BlockTag) => Effect.Effect<boolean, ReadError>
  readonly tokenPaused: (token: Address, block?: BlockTag) => Effect.Effect<boolean, ReadError>
  readonly oraclePaused: (token: Address, block?: BlockTag) => Effect.Effect<boolean, ReadError>
  readonly balanceOf: (token: Address, holder: Address, block?: BlockTag) => Effect.Effect<bigint, ReadError>
  readonly decimals: (token: Address) => Effect.Effect<number, ReadError>
  /** All multiplier and pause fields at one block (read in parallel). */
  readonly stockState: (token: Address, block?: BlockTag) => Effect.Effect<StockState, ReadError>
  /** `supportsInterface(0xa60bf13d)`; false when the call reverts or the address has no code. */
  readonly isStockToken: (
    address: Address,
    block?: BlockTag
  ) => Effect.Effect<boolean, RequestError | StateUnavailable | BlockNotFound>
  readonly feedDecimals: (feed: Address) => Effect.Effect<number, ReadError>
  readonly latestRoundData: (feed: Address, block?: BlockTag) => Effect.Effect<RoundData, ReadError>
  /** Fails with `ContractReverted` for a round the feed does not have. */
  readonly getRoundData: (feed: Address, roundId: bigint, block?: BlockTag) => Effect.Effect<RoundData, ReadError>
  readonly receipt: (txHash: Hash) => Effect.Effect<TransactionReceipt, RequestError | ReceiptNotFound>
  /**
   * The receipts of many transactions, in the order given: `eth_getBlockReceipts` for a block that holds many of them
   * (when the node offers it), batched `eth_getTransactionReceipt` for the rest.
   */
  readonly receipts: (
    transactions: ReadonlyArray<{ readonly txHash: Hash; readonly block: number }>
  ) => Effect.Effect<ReadonlyArray<TransactionReceipt>, RequestError | ReceiptNotFound>
  /** Whether each address has code now (`eth_getCode` at the latest block, batched), by lowercase address. */
  readonly hasCode: (addresses: ReadonlyArray<Address>) => Effect.Effect<ReadonlyMap<string, boolean>, RequestError>
  /**
   * Sender, target and method selector of many transactions (`eth_getTransactionByHash`, batched), by lowercase
   * hash; a transaction the node does not know is absent.
   */
  readonly transactions: (
    txHashes: ReadonlyArray<Hash>
  ) => Effect.Effect<ReadonlyMap<Hash, TransactionFacts>, RequestError>
}

export class ChainClient extends Context.Tag("@scaledger/domain/chain/ChainClient")<
  ChainClient,
  ChainClientService
>() {}
