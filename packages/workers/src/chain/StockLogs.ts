/** Decoding of a `Stock` token's logs: both `UIMultiplierUpdated` variants, transfers and pause events. */
import { StockTopics } from "@scaledger/domain/chain/ChainClient"
import type { PauseKind, RawLog, StockEvent } from "@scaledger/domain/chain/ChainClient"
import { Option } from "effect"
import { decodeEventLog, type Hex } from "viem"
import { draftMultiplierEventAbi, stockAbi } from "./abi.js"
import { checksummed } from "./rpc/Checksum.js"

const PAUSE_KINDS: Readonly<Record<string, PauseKind>> = {
  [StockTopics.Paused]: "Paused",
  [StockTopics.Unpaused]: "Unpaused",
  [StockTopics.OraclePaused]: "OraclePaused",
  [StockTopics.OracleUnpaused]: "OracleUnpaused"
}

const isAddressTopic = (topic: string | undefined): topic is string =>
  topic !== undefined && /^0x0{24}[0-9a-fA-F]{40}$/.test(topic)

/** Decodes a `Stock` log: both `UIMultiplierUpdated` variants, transfers, pause events. */
export const decodeStockLog = (log: RawLog): Option.Option<StockEvent> => {
  const topic0 = log.topics[0]
  if (topic0 === undefined) return Option.none()
  const position = {
    token: log.address,
    block: log.blockNumber,
    blockHash: log.blockHash,
    logIndex: log.logIndex,
    txHash: log.transactionHash
  }
  const topics = log.topics as [Hex, ...Array<Hex>]
  const data = log.data as Hex
  try {
    switch (topic0) {
      case StockTopics.UIMultiplierUpdated: {
        const { args } = decodeEventLog({ abi: stockAbi, eventName: "UIMultiplierUpdated", topics, data })
        return Option.some({
          _tag: "MultiplierAnnouncement",
          ...position,
          oldMultiplier: args.oldMultiplier,
          newMultiplier: args.newMultiplier,
          effectiveAt: Number(args.effectiveAtTimestamp),
          variant: "erc8056"
        })
      }
      case StockTopics.UIMultiplierUpdatedDraft: {
        const { args } = decodeEventLog({ abi: draftMultiplierEventAbi, topics, data })
        return Option.some({
          _tag: "MultiplierAnnouncement",
          ...position,
          oldMultiplier: args.oldMultiplier,
          newMultiplier: args.newMultiplier,
          effectiveAt: Number(args.effectiveAtTimestamp),
          setAt: Number(args.setAtTimestamp),
          variant: "erc8056-draft"
        })
      }
      case StockTopics.Transfer: {
        // The commonest log by far, decoded by hand: two indexed addresses and one uint256.
        const [, from, to] = log.topics
        if (log.topics.length !== 3 || data.length !== 66 || !isAddressTopic(from) || !isAddressTopic(to)) {
          return Option.none()
        }
        return Option.some({
          _tag: "Transfer",
          ...position,
          from: checksummed(`0x${from.slice(26)}`),
          to: checksummed(`0x${to.slice(26)}`),
          value: BigInt(data)
        })
      }
      case StockTopics.TransferWithScaledUI: {
        const { args } = decodeEventLog({ abi: stockAbi, eventName: "TransferWithScaledUI", topics, data })
        return Option.some({
          _tag: "TransferWithScaledUI",
          ...position,
          from: args.from,
          to: args.to,
          value: args.value,
          uiValue: args.uiValue
        })
      }
      default: {
        const kind = PAUSE_KINDS[topic0]
        return kind === undefined ? Option.none() : Option.some({ _tag: "Pause", ...position, kind })
      }
    }
  } catch {
    return Option.none()
  }
}

/** Every topic0 a `Stock` token emits. */
export const STOCK_TOPICS: ReadonlyArray<string> = Object.values(StockTopics)
