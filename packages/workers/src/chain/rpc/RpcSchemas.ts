/**
 * The shapes of the JSON-RPC answers the client reads (blocks, logs, receipts), decoded with Schema into the
 * domain's plain types: quantities to numbers (or bigints), hashes to lowercase, addresses to EIP-55. An answer
 * that does not have the shape is a `ChainDecodeError`, never a half-filled object.
 */
import type { BlockHeader, RawLog, TransactionFacts, TransactionReceipt } from "@scaledger/domain/chain/ChainClient"
import { ChainDecodeError } from "@scaledger/domain/chain/ChainErrors"
import { Either, ParseResult, Schema } from "effect"
import { checksummed } from "./Checksum.js"

const HexString = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]*$/))

/** A hex quantity as a number (block numbers, indexes, timestamps: all far below 2^53). */
export const Quantity = Schema.transform(HexString, Schema.Number, {
  strict: true,
  decode: (hex) => Number(hex),
  encode: (n) => `0x${n.toString(16)}`
})

/** A hex quantity as a bigint (gas, prices). */
const BigQuantity = Schema.transform(HexString, Schema.BigIntFromSelf, {
  strict: true,
  decode: (hex) => BigInt(hex),
  encode: (n) => `0x${n.toString(16)}`
})

/** A 32-byte hash, lowercase. */
const Hash = Schema.transform(Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{64}$/)), Schema.String, {
  strict: true,
  decode: (hex) => hex.toLowerCase(),
  encode: (hex) => hex
})

/** A 20-byte address, EIP-55 checksummed. */
const Address = Schema.transformOrFail(Schema.String, Schema.String, {
  strict: true,
  decode: (s, _, ast) =>
    /^0x[0-9a-fA-F]{40}$/.test(s)
      ? ParseResult.succeed(checksummed(s))
      : ParseResult.fail(new ParseResult.Type(ast, s, `not an address: ${s}`)),
  encode: ParseResult.succeed
})

export const RpcBlock = Schema.Struct({
  number: Quantity,
  hash: Hash,
  parentHash: Hash,
  timestamp: Quantity
})

export const RpcLog = Schema.Struct({
  address: Address,
  topics: Schema.Array(Hash),
  data: HexString,
  blockNumber: Quantity,
  blockHash: Hash,
  transactionHash: Hash,
  transactionIndex: Quantity,
  logIndex: Quantity,
  removed: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** geth 1.16+, Reth and some providers give the block's time with each log. */
  blockTimestamp: Schema.optionalWith(Quantity, { exact: true })
})

export const RpcReceipt = Schema.Struct({
  transactionHash: Hash,
  blockNumber: Quantity,
  blockHash: Hash,
  transactionIndex: Quantity,
  from: Address,
  to: Schema.NullOr(Address),
  status: Quantity,
  gasUsed: BigQuantity,
  effectiveGasPrice: Schema.optionalWith(BigQuantity, { default: () => 0n }),
  logs: Schema.Array(RpcLog)
})

export const RpcTransaction = Schema.Struct({
  hash: Hash,
  from: Address,
  to: Schema.NullOr(Address),
  input: HexString
})

export const toHeader = (b: typeof RpcBlock.Type): BlockHeader => b

export const toRawLog = (l: typeof RpcLog.Type): RawLog => l

export const toReceipt = (r: typeof RpcReceipt.Type): TransactionReceipt => ({
  txHash: r.transactionHash,
  blockNumber: r.blockNumber,
  blockHash: r.blockHash,
  transactionIndex: r.transactionIndex,
  from: r.from,
  to: r.to,
  status: r.status === 1 ? "success" : "reverted",
  gasUsed: r.gasUsed,
  effectiveGasPrice: r.effectiveGasPrice,
  logs: r.logs.map(toRawLog)
})

export const toTransactionFacts = (t: typeof RpcTransaction.Type): TransactionFacts => ({
  from: t.from,
  to: t.to,
  selector: t.input.length >= 10 ? t.input.slice(0, 10).toLowerCase() : null
})

/**
 * Decodes an answer of `method` with `schema`; a mismatch is a `ChainDecodeError` naming the method. Synchronous
 * underneath (`decodeUnknownEither`): a backfill decodes thousands of answers.
 */
export const decodeAnswer = <A, I>(schema: Schema.Schema<A, I>, method: string) => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })
  return (answer: unknown): Either.Either<A, ChainDecodeError> =>
    Either.mapLeft(
      decode(answer),
      (error) =>
        new ChainDecodeError({ what: `${method} answer`, message: ParseResult.TreeFormatter.formatErrorSync(error) })
    )
}
