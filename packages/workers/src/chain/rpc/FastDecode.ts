/**
 * Hand-written checks for the two answers a backfill reads by the thousand (logs and block headers). They accept
 * exactly what the Schemas of `RpcSchemas` accept and give the same values, about ten times faster; anything they do
 * not accept goes to the Schema, so a malformed answer fails with the same `ChainDecodeError` as before.
 */
import type { BlockHeader, RawLog } from "@scaledger/domain/chain/ChainClient"
import type { ChainDecodeError } from "@scaledger/domain/chain/ChainErrors"
import { Either } from "effect"
import { checksummed } from "./Checksum.js"

const HEX = /^0x[0-9a-fA-F]*$/
const HASH = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

const isHex = (value: unknown): value is string => typeof value === "string" && HEX.test(value)
const isHash = (value: unknown): value is string => typeof value === "string" && HASH.test(value)

/** A log as `RpcLog` decodes it, or undefined where the Schema must say what is wrong. */
const fastLog = (value: unknown): RawLog | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const log = value as Record<string, unknown>
  const { address, blockTimestamp, removed, topics } = log
  if (typeof address !== "string" || !ADDRESS.test(address) || !Array.isArray(topics) || !topics.every(isHash)) {
    return undefined
  }
  if (
    !isHex(log.data) || !isHex(log.blockNumber) || !isHash(log.blockHash) || !isHash(log.transactionHash) ||
    !isHex(log.transactionIndex) || !isHex(log.logIndex)
  ) return undefined
  if (removed !== undefined && typeof removed !== "boolean") return undefined
  if (blockTimestamp !== undefined && !isHex(blockTimestamp)) return undefined
  const decoded: RawLog = {
    address: checksummed(address),
    topics: topics.map((t: string) => t.toLowerCase()),
    data: log.data,
    blockNumber: Number(log.blockNumber),
    blockHash: log.blockHash.toLowerCase(),
    transactionHash: log.transactionHash.toLowerCase(),
    transactionIndex: Number(log.transactionIndex),
    logIndex: Number(log.logIndex),
    removed: removed ?? false
  }
  return blockTimestamp === undefined ? decoded : { ...decoded, blockTimestamp: Number(blockTimestamp) }
}

/** An `eth_getLogs` answer: every log checked by hand, or the whole answer through `bySchema`. */
export const fastLogs = (
  bySchema: (answer: unknown) => Either.Either<ReadonlyArray<RawLog>, ChainDecodeError>
) =>
(answer: unknown): Either.Either<ReadonlyArray<RawLog>, ChainDecodeError> => {
  if (!Array.isArray(answer)) return bySchema(answer)
  const logs: Array<RawLog> = []
  for (const value of answer) {
    const log = fastLog(value)
    if (log === undefined) return bySchema(answer)
    logs.push(log)
  }
  return Either.right(logs)
}

/** A block header answer (`null` for a block the node does not have), or through `bySchema`. */
export const fastBlock = (
  bySchema: (answer: unknown) => Either.Either<BlockHeader | null, ChainDecodeError>
) =>
(answer: unknown): Either.Either<BlockHeader | null, ChainDecodeError> => {
  if (answer === null) return Either.right(null)
  if (typeof answer !== "object") return bySchema(answer)
  const { hash, number, parentHash, timestamp } = answer as Record<string, unknown>
  if (!isHex(number) || !isHash(hash) || !isHash(parentHash) || !isHex(timestamp)) return bySchema(answer)
  return Either.right({
    number: Number(number),
    hash: hash.toLowerCase(),
    parentHash: parentHash.toLowerCase(),
    timestamp: Number(timestamp)
  })
}
