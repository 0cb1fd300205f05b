/**
 * An HTTP JSON-RPC proxy in front of a node, injecting the faults real providers have, in the shapes they send them:
 *
 * - rate limits: HTTP 429 with `Retry-After` (at random, or above N requests per second);
 * - server errors: 500/502/503 at a given rate, some with a JSON-RPC body and some with plain text;
 * - time-outs: the request is held without an answer (until the client gives up or the proxy closes);
 * - a dead endpoint: the connection is reset;
 * - `eth_getLogs` block-range caps in several providers' words, and a matched-log cap;
 * - pruned state: `eth_call`, `eth_getBalance`, `eth_getStorageAt`, `eth_getCode`, `eth_getTransactionCount` at
 *   blocks more than N behind head fail like a non-archive node ("missing trie node", "header not found",
 *   Robinhood Chain's "metadata is not found").
 *
 * Random faults draw from a seeded generator, so a run with the same request sequence sees the same faults.
 * Batches are supported: HTTP-level faults hit the whole batch, JSON-RPC-level ones each element.
 * `counts()` tells how many requests per method reached the proxy (batch elements counted one by one).
 */
import { Agent, createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** Which provider's words a block-range cap uses. */
export type RangeCapStyle =
  /** `{"code":-32600,"message":"eth_getLogs is limited to a 1000 block range"}` (Arbitrum-style, Robinhood Chain) */
  | "arbitrum"
  /** `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range ... should work: [0x.., 0x..]` */
  | "alchemy"
  /** HTTP 413, `{"code":-32614,"message":"eth_getLogs is limited to a 10,000 range"}` */
  | "quicknode"
  /** `{"code":-32602,"message":"range 1000000 exceeds limit of 10000"}` */
  | "infura"
  /** `{"code":-32600,"message":"block range is too wide"}` (no number given) */
  | "ankr"

/** Which words a matched-log cap uses. */
export type ResultCapStyle =
  /** geth/Infura: `{"code":-32005,"message":"query returned more than 10000 results"}` */
  | "geth"
  /** Arbitrum Nitro: `logs matched by query exceeds limit of 10000` */
  | "arbitrum"

export type PrunedStyle = "missing-trie-node" | "header-not-found" | "metadata-not-found"

export interface Faults {
  /** Probability (0..1) of an HTTP 5xx. */
  readonly serverErrorRate?: number
  /** Probability of an HTTP 429. */
  readonly rateLimitRate?: number
  /** Above this many requests within one second, HTTP 429. */
  readonly rateLimitPerSecond?: number
  /** `Retry-After` on 429s, in seconds (default 1). */
  readonly retryAfterSeconds?: number
  /** Probability of holding a request without ever answering. */
  readonly timeoutRate?: number
  /** Reset every connection: the endpoint is down. */
  readonly down?: boolean
  /** Extra delay before forwarding, in ms. */
  readonly latencyMs?: number
  /** Random faults (5xx, 429, time-outs) only for these methods; default all. */
  readonly randomFaultMethods?: ReadonlyArray<string>
  /** Largest `eth_getLogs` block count (toBlock - fromBlock + 1) accepted. */
  readonly getLogsMaxRange?: number
  readonly getLogsRangeStyle?: RangeCapStyle
  /** Most logs an `eth_getLogs` may return. */
  readonly getLogsMaxResults?: number
  readonly getLogsResultStyle?: ResultCapStyle
  /** State reads at blocks more than this many behind head fail as pruned. */
  readonly prunedAfterBlocks?: number
  readonly prunedStyle?: PrunedStyle
  /**
   * Largest JSON-RPC batch accepted; a larger one is refused whole with one JSON-RPC error (HTTP 200, not an array),
   * as Alchemy and Infura do. 0: batches are not served at all.
   */
  readonly maxBatchSize?: number
}

export type FaultKind =
  | "rate_limited"
  | "server_error"
  | "timeout"
  | "reset"
  | "range_cap"
  | "result_cap"
  | "pruned"
  | "batch_refused"

export interface ProxyLogEntry {
  readonly method: string
  readonly params: ReadonlyArray<unknown>
  /** The fault injected, if any. */
  readonly fault?: FaultKind
}

export interface FaultProxy {
  readonly url: string
  /** Replaces the fault settings. */
  setFaults(faults: Faults): void
  /** Merges into the fault settings. */
  updateFaults(faults: Faults): void
  readonly faults: () => Faults
  /** Requests received per method (each batch element counted). */
  counts(): Readonly<Record<string, number>>
  /** Requests received in all. */
  total(): number
  /** HTTP requests received (a batch is one). */
  httpRequests(): number
  /** Faults injected per kind. */
  faultCounts(): Readonly<Partial<Record<FaultKind, number>>>
  /** Every request received, in order. */
  log(): ReadonlyArray<ProxyLogEntry>
  resetCounts(): void
  close(): Promise<void>
}

export interface FaultProxyOptions {
  /** The node's HTTP JSON-RPC URL. */
  readonly target: string
  readonly faults?: Faults
  /** Seed of the fault generator; default 1. */
  readonly seed?: number
  readonly port?: number
}

interface RpcRequest {
  readonly jsonrpc?: string
  readonly id?: unknown
  readonly method: string
  readonly params?: ReadonlyArray<unknown>
}

interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

interface RpcResponse {
  readonly jsonrpc: "2.0"
  readonly id: unknown
  readonly result?: unknown
  readonly error?: RpcError
}

/** mulberry32: small, fast, good enough for fault injection. */
const seededRandom = (seed: number): () => number => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const STATE_METHODS: Readonly<Record<string, number>> = {
  eth_call: 1,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
  eth_getProof: 2
}

const toHex = (n: number): string => `0x${n.toString(16)}`

const formatThousands = (n: number): string => n.toLocaleString("en-US")
const formatK = (n: number): string => (n % 1000 === 0 ? `${n / 1000}K` : String(n))

interface HttpAnswer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

export const startFaultProxy = async (options: FaultProxyOptions): Promise<FaultProxy> => {
  const target = new URL(options.target)
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const random = seededRandom(options.seed ?? 1)
  let faults: Faults = options.faults ?? {}
  let counts: Record<string, number> = {}
  let faultCounts: Partial<Record<FaultKind, number>> = {}
  let log: Array<ProxyLogEntry> = []
  let httpRequests = 0
  const recentRequests: Array<number> = []
  const hung = new Set<ServerResponse>()
  const sockets = new Set<Socket>()

  const countFault = (kind: FaultKind) => {
    faultCounts[kind] = (faultCounts[kind] ?? 0) + 1
  }

  const post = (body: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
        },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(body)
    })

  const upstream = async (request: RpcRequest): Promise<RpcResponse> => {
    const text = await post(JSON.stringify({
      jsonrpc: "2.0",
      id: request.id ?? null,
      method: request.method,
      params: request.params ?? []
    }))
    return JSON.parse(text) as RpcResponse
  }

  const upstreamResult = async <T>(method: string, params: ReadonlyArray<unknown>): Promise<T> => {
    const response = await upstream({ method, params, id: 0 })
    if (response.error !== undefined) throw new Error(`${method}: ${response.error.message}`)
    return response.result as T
  }

  const blockNumberOf = async (ref: unknown, head: number): Promise<number | undefined> => {
    if (typeof ref === "string") {
      if (ref === "earliest") return 0
      if (ref.startsWith("0x") && ref.length === 66) {
        const block = await upstreamResult<{ number: string } | null>("eth_getBlockByHash", [ref, false])
        return block === null ? undefined : Number(block.number)
      }
      if (ref.startsWith("0x")) return Number(ref)
      return head
    }
    if (typeof ref === "object" && ref !== null) {
      const r = ref as { blockNumber?: unknown; blockHash?: unknown }
      if (r.blockNumber !== undefined) return blockNumberOf(r.blockNumber, head)
      if (r.blockHash !== undefined) return blockNumberOf(r.blockHash, head)
    }
    return head
  }

  const prunedError = (style: PrunedStyle): RpcError => {
    switch (style) {
      case "header-not-found":
        return { code: -32000, message: "header not found" }
      case "metadata-not-found":
        return { code: -32000, message: "metadata is not found" }
      case "missing-trie-node": {
        const node = Array.from({ length: 64 }, () => Math.floor(random() * 16).toString(16)).join("")
        return { code: -32000, message: `missing trie node ${node} (path ) <nil>` }
      }
    }
  }

  const rangeError = (style: RangeCapStyle, max: number, from: number): { error: RpcError; status: number } => {
    switch (style) {
      case "arbitrum":
        return { status: 200, error: { code: -32600, message: `eth_getLogs is limited to a ${max} block range` } }
      case "alchemy":
        return {
          status: 200,
          error: {
            code: -32602,
            message: `Log response size exceeded. You can make eth_getLogs requests with up to a ${
              formatK(max)
            } block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [${
              toHex(from)
            }, ${toHex(from + max - 1)}]`
          }
        }
      case "quicknode":
        return {
          status: 413,
          error: { code: -32614, message: `eth_getLogs is limited to a ${formatThousands(max)} range` }
        }
      case "infura":
        return { status: 200, error: { code: -32602, message: `range RANGE exceeds limit of ${max}` } }
      case "ankr":
        return { status: 200, error: { code: -32600, message: "block range is too wide" } }
    }
  }

  /** JSON-RPC-level faults (range caps, pruned state) and forwarding, for one request. */
  const handleOne = async (request: RpcRequest): Promise<{ response: RpcResponse; status: number }> => {
    const id = request.id ?? null
    const params = request.params ?? []
    if (request.method === "eth_getLogs") {
      const filter = (params[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown }
      if (faults.getLogsMaxRange !== undefined && filter.blockHash === undefined) {
        const head = Number(await upstreamResult<string>("eth_blockNumber", []))
        const from = (await blockNumberOf(filter.fromBlock ?? "latest", head)) ?? head
        const to = (await blockNumberOf(filter.toBlock ?? "latest", head)) ?? head
        const span = to - from + 1
        if (span > faults.getLogsMaxRange) {
          countFault("range_cap")
          log.push({ method: request.method, params, fault: "range_cap" })
          const { error, status } = rangeError(faults.getLogsRangeStyle ?? "arbitrum", faults.getLogsMaxRange, from)
          const message = error.message.replace("RANGE", String(span))
          return { status, response: { jsonrpc: "2.0", id, error: { ...error, message } } }
        }
      }
      const response = await upstream({ ...request, params })
      const max = faults.getLogsMaxResults
      if (max !== undefined && Array.isArray(response.result) && response.result.length > max) {
        countFault("result_cap")
        log.push({ method: request.method, params, fault: "result_cap" })
        const message = (faults.getLogsResultStyle ?? "geth") === "geth"
          ? `query returned more than ${max} results`
          : `logs matched by query exceeds limit of ${max}`
        return { status: 200, response: { jsonrpc: "2.0", id, error: { code: -32005, message } } }
      }
      log.push({ method: request.method, params })
      return { status: 200, response: { ...response, id } }
    }
    const blockParamIndex = STATE_METHODS[request.method]
    if (faults.prunedAfterBlocks !== undefined && blockParamIndex !== undefined) {
      const head = Number(await upstreamResult<string>("eth_blockNumber", []))
      const at = await blockNumberOf(params[blockParamIndex] ?? "latest", head)
      if (at !== undefined && at < head - faults.prunedAfterBlocks) {
        countFault("pruned")
        log.push({ method: request.method, params, fault: "pruned" })
        return {
          status: 200,
          response: { jsonrpc: "2.0", id, error: prunedError(faults.prunedStyle ?? "missing-trie-node") }
        }
      }
    }
    log.push({ method: request.method, params })
    const response = await upstream({ ...request, params })
    return { status: 200, response: { ...response, id } }
  }

  /** An HTTP-level fault for the whole request (or batch), if one is drawn. */
  const httpFault = (methods: ReadonlyArray<string>, firstId: unknown): HttpAnswer | "timeout" | undefined => {
    const eligible = faults.randomFaultMethods === undefined ||
      methods.some((m) => faults.randomFaultMethods!.includes(m))
    const now = Date.now()
    recentRequests.push(now)
    while (recentRequests.length > 0 && recentRequests[0]! <= now - 1000) recentRequests.shift()
    const retryAfter = String(faults.retryAfterSeconds ?? 1)
    const tooMany: HttpAnswer = {
      status: 429,
      headers: { "content-type": "application/json", "retry-after": retryAfter },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: firstId,
        error: { code: 429, message: "Too Many Requests: compute units per second capacity exceeded" }
      })
    }
    if (faults.rateLimitPerSecond !== undefined && recentRequests.length > faults.rateLimitPerSecond) {
      countFault("rate_limited")
      return tooMany
    }
    if (!eligible) return undefined
    if (faults.rateLimitRate !== undefined && random() < faults.rateLimitRate) {
      countFault("rate_limited")
      return tooMany
    }
    if (faults.serverErrorRate !== undefined && random() < faults.serverErrorRate) {
      countFault("server_error")
      const pick = Math.floor(random() * 3)
      if (pick === 0) {
        return { status: 502, headers: { "content-type": "text/html" }, body: "<html>502 Bad Gateway</html>" }
      }
      if (pick === 1) {
        return {
          status: 503,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: firstId,
            error: { code: -32603, message: "upstream unavailable" }
          })
        }
      }
      return { status: 500, headers: { "content-type": "text/plain" }, body: "Internal Server Error" }
    }
    if (faults.timeoutRate !== undefined && random() < faults.timeoutRate) {
      countFault("timeout")
      return "timeout"
    }
    return undefined
  }

  const respond = (res: ServerResponse, status: number, headers: Record<string, string>, body: string) => {
    if (!res.destroyed) res.writeHead(status, headers).end(body)
  }

  const handleHttp = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    let parsed: RpcRequest | ReadonlyArray<RpcRequest>
    try {
      parsed = JSON.parse(text) as RpcRequest | ReadonlyArray<RpcRequest>
    } catch {
      respond(
        res,
        200,
        { "content-type": "application/json" },
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32700, message: "Parse error" }
        })
      )
      return
    }
    const batch = Array.isArray(parsed) ? (parsed as ReadonlyArray<RpcRequest>) : [parsed as RpcRequest]
    httpRequests++
    for (const r of batch) counts[r.method] = (counts[r.method] ?? 0) + 1
    if (Array.isArray(parsed) && faults.maxBatchSize !== undefined && batch.length > faults.maxBatchSize) {
      countFault("batch_refused")
      for (const r of batch) log.push({ method: r.method, params: r.params ?? [], fault: "batch_refused" })
      const message = faults.maxBatchSize === 0 ? "batch requests are not supported" : "batch size too large"
      respond(
        res,
        200,
        { "content-type": "application/json" },
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message } })
      )
      return
    }
    if (faults.down === true) {
      countFault("reset")
      for (const r of batch) log.push({ method: r.method, params: r.params ?? [], fault: "reset" })
      req.socket.destroy()
      return
    }
    const fault = httpFault(batch.map((r) => r.method), batch[0]?.id ?? null)
    if (fault !== undefined) {
      const kind: FaultKind = fault === "timeout" ? "timeout" : fault.status === 429 ? "rate_limited" : "server_error"
      for (const r of batch) log.push({ method: r.method, params: r.params ?? [], fault: kind })
      if (fault === "timeout") {
        hung.add(res)
        res.on("close", () => hung.delete(res))
        return
      }
      respond(res, fault.status, fault.headers, fault.body)
      return
    }
    if (faults.latencyMs !== undefined) await new Promise((r) => setTimeout(r, faults.latencyMs))
    const results = await Promise.all(batch.map(handleOne))
    const status = Array.isArray(parsed) ? 200 : results[0]!.status
    const body = Array.isArray(parsed) ? results.map((r) => r.response) : results[0]!.response
    respond(res, status, { "content-type": "application/json" }, JSON.stringify(body))
  }

  const server = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end()
      return
    }
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      handleHttp(req, res, Buffer.concat(chunks).toString("utf8")).catch((error: unknown) => {
        respond(res, 502, { "content-type": "text/plain" }, `proxy: ${String(error)}`)
      })
    })
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo

  let closed = false
  return {
    url: `http://127.0.0.1:${port}`,
    setFaults: (next) => {
      faults = next
      recentRequests.length = 0
    },
    updateFaults: (next) => {
      faults = { ...faults, ...next }
    },
    faults: () => faults,
    counts: () => ({ ...counts }),
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    httpRequests: () => httpRequests,
    faultCounts: () => ({ ...faultCounts }),
    log: () => [...log],
    resetCounts: () => {
      counts = {}
      faultCounts = {}
      log = []
      httpRequests = 0
    },
    close: async () => {
      if (closed) return
      closed = true
      for (const res of hung) res.destroy()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      agent.destroy()
    }
  }
}
