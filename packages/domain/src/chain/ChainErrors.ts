import { Schema } from "effect"

/** HTTP 429 (or a provider's rate-limit error); `retryAfterMs` from `Retry-After` when given. Retryable. */
export class RpcRateLimited extends Schema.TaggedError<RpcRateLimited>()("RpcRateLimited", {
  endpoint: Schema.String,
  method: Schema.String,
  retryAfterMs: Schema.optional(Schema.Number),
  message: Schema.String
}) {}

/** No answer within the time-out. Retryable. */
export class RpcTimeout extends Schema.TaggedError<RpcTimeout>()("RpcTimeout", {
  endpoint: Schema.String,
  method: Schema.String,
  timeoutMs: Schema.Number,
  message: Schema.String
}) {}

/** HTTP 5xx, a refused or reset connection, a closed WebSocket, an unreadable answer. Retryable. */
export class RpcTransportError extends Schema.TaggedError<RpcTransportError>()("RpcTransportError", {
  endpoint: Schema.String,
  method: Schema.String,
  status: Schema.optional(Schema.Number),
  message: Schema.String
}) {}

/** Every attempt on every endpoint failed with a retryable error; `lastError` is the last of them. */
export class AllEndpointsFailed extends Schema.TaggedError<AllEndpointsFailed>()("AllEndpointsFailed", {
  endpoints: Schema.Array(Schema.String),
  method: Schema.String,
  attempts: Schema.Number,
  lastError: Schema.Union(RpcRateLimited, RpcTimeout, RpcTransportError),
  message: Schema.String
}) {}

/** A JSON-RPC error that is none of the kinds below (invalid params, method not found, ...). Not retried. */
export class RpcError extends Schema.TaggedError<RpcError>()("RpcError", {
  endpoint: Schema.String,
  method: Schema.String,
  code: Schema.Number,
  message: Schema.String
}) {}

/**
 * An `eth_getLogs` range the provider refuses (block-range cap, too many results, query time-out) even at the
 * smallest range the client will try. Ordinary range errors are handled by chunking and never surface.
 */
export class RpcRangeTooLarge extends Schema.TaggedError<RpcRangeTooLarge>()("RpcRangeTooLarge", {
  fromBlock: Schema.Number,
  toBlock: Schema.Number,
  message: Schema.String
}) {}

/**
 * State at `block` is not available on any endpoint: a pruned / non-archive node ("missing trie node",
 * "header not found" for a past block, Robinhood Chain's "metadata is not found"). Callers record a coverage gap.
 */
export class StateUnavailable extends Schema.TaggedError<StateUnavailable>()("StateUnavailable", {
  method: Schema.String,
  block: Schema.Number,
  endpoint: Schema.String,
  message: Schema.String
}) {}

/** A contract call reverted (or the address has no code). */
export class ContractReverted extends Schema.TaggedError<ContractReverted>()("ContractReverted", {
  address: Schema.String,
  functionName: Schema.String,
  block: Schema.optional(Schema.Number),
  message: Schema.String
}) {}

/** The block does not exist (yet) on the chain. */
export class BlockNotFound extends Schema.TaggedError<BlockNotFound>()("BlockNotFound", {
  block: Schema.Union(Schema.Number, Schema.String),
  message: Schema.String
}) {}

/** No receipt for the transaction (unknown or not mined). */
export class ReceiptNotFound extends Schema.TaggedError<ReceiptNotFound>()("ReceiptNotFound", {
  txHash: Schema.String,
  message: Schema.String
}) {}

/** An answer that does not decode as expected (bad ABI data, malformed log). */
export class ChainDecodeError extends Schema.TaggedError<ChainDecodeError>()("ChainDecodeError", {
  what: Schema.String,
  message: Schema.String
}) {}

export type RetryableRpcError = RpcRateLimited | RpcTimeout | RpcTransportError

/** What any request can end in after retries and fallbacks. */
export type RequestError = AllEndpointsFailed | RpcError | ChainDecodeError

/** A contract read at a block. */
export type ReadError = RequestError | StateUnavailable | ContractReverted | BlockNotFound

export type ChainError =
  | RequestError
  | RpcRangeTooLarge
  | StateUnavailable
  | ContractReverted
  | BlockNotFound
  | ReceiptNotFound
