/**
 * What went wrong with one JSON-RPC request, in the chain client's error vocabulary: a transport failure (retryable:
 * time-out, 429, 5xx, connection) or the node's own JSON-RPC error, and the patterns that say what a node's error
 * message means (a block it does not know, state it no longer keeps, a revert, a method it does not offer).
 */
import { RpcError, RpcRateLimited, RpcTimeout, RpcTransportError } from "@scaledger/domain/chain/ChainErrors"
import type { RetryableRpcError } from "@scaledger/domain/chain/ChainErrors"

export type Failure = RetryableRpcError | RpcError

export const isRetryable = (error: { readonly _tag: string }): error is RetryableRpcError =>
  error._tag === "RpcRateLimited" || error._tag === "RpcTimeout" || error._tag === "RpcTransportError"

interface ErrorFacts {
  readonly names: ReadonlyArray<string>
  readonly status: number | undefined
  readonly code: number | undefined
  readonly retryAfter: string | undefined
  /** The provider's own words where there are some; never viem's long message (it repeats URL and body). */
  readonly message: string
}

/** Walks a (viem) error and its causes for the HTTP status, JSON-RPC code, `Retry-After` and the provider's words. */
export const errorFacts = (error: unknown): ErrorFacts => {
  const names: Array<string> = []
  const messages: Array<string> = []
  let status: number | undefined
  let code: number | undefined
  let retryAfter: string | undefined
  let providerMessage: string | undefined
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const e = current as {
      name?: unknown
      status?: unknown
      code?: unknown
      headers?: unknown
      details?: unknown
      shortMessage?: unknown
      message?: unknown
      cause?: unknown
    }
    const name = typeof e.name === "string" ? e.name : ""
    names.push(name)
    if (status === undefined && typeof e.status === "number") status = e.status
    if (code === undefined && typeof e.code === "number") code = e.code
    if (retryAfter === undefined && e.headers instanceof Headers) retryAfter = e.headers.get("retry-after") ?? undefined
    if (name === "RpcRequestError" && typeof e.details === "string" && providerMessage === undefined) {
      providerMessage = e.details
    } else if (typeof e.shortMessage === "string") messages.push(e.shortMessage)
    else if (typeof e.message === "string") messages.push(e.message)
    current = e.cause
  }
  const message = providerMessage ?? (messages.filter((m) => m.length > 0).join(": ") || String(error))
  return { names, status, code, retryAfter, message }
}

const parseRetryAfter = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** Rate limits said in words (with a JSON-RPC code other than 429): Alchemy, Infura, QuickNode, Ankr, dRPC. */
const RATE_LIMITED = /rate.?limit|too many requests|exceeded .*capacity|request limit|throughput|daily request count/i

/** A thrown request failure (from viem) as the client's error. */
export const classifyRpcFailure = (error: unknown, endpoint: string, method: string, timeoutMs: number): Failure => {
  const f = errorFacts(error)
  if (f.names.includes("TimeoutError")) {
    return new RpcTimeout({ endpoint, method, timeoutMs, message: `no answer within ${timeoutMs} ms` })
  }
  if (f.status === 429 || f.code === 429 || (f.code !== undefined && RATE_LIMITED.test(f.message))) {
    const retryAfterMs = parseRetryAfter(f.retryAfter)
    return new RpcRateLimited({
      endpoint,
      method,
      message: f.message,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs })
    })
  }
  if (f.status !== undefined && (f.status >= 500 || f.status === 408)) {
    return new RpcTransportError({ endpoint, method, status: f.status, message: f.message })
  }
  if (f.code !== undefined) return new RpcError({ endpoint, method, code: f.code, message: f.message })
  return new RpcTransportError({
    endpoint,
    method,
    message: f.message,
    ...(f.status === undefined ? {} : { status: f.status })
  })
}

/** geth, Erigon, Nethermind, Arbitrum: a block the node does not have (yet). */
export const BLOCK_NOT_FOUND =
  /invalid block tag|unknown block|block not found|block .* not found|cannot query unfinalized/i
/** State the node no longer keeps: geth/Erigon (`missing trie node`, `header not found`), Arbitrum Nitro and
 * Robinhood Chain (`metadata is not found`), Reth, Nethermind, and providers' own words. */
export const PRUNED =
  /missing trie node|metadata is not found|header not found|historical state .*not available|required historical state unavailable|state (is )?not available|state histor(y|ies) .*(pruned|not available|unavailable)|pruned/i
/** geth's answer both for pruned state and for a block beyond the head. */
export const HEADER_NOT_FOUND = /header not found/i
export const REVERTED = /revert|invalid opcode|execution error/i
/** The node does not offer the method (EDR, Hardhat, older nodes for `eth_getBlockReceipts`). */
export const UNSUPPORTED_METHOD = /not supported|does not exist|not available|method not found|unsupported method/i
