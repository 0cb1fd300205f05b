/**
 * `ChainClient` over viem transports. viem only moves bytes (its own retries off); retries, fallback between
 * endpoints, the concurrency cap, time-outs and `eth_getLogs` chunking are done here, in Effect.
 */
import { ChainClient, StockInterfaceId, StockTopics } from "@scaledger/domain/chain/ChainClient"
import type {
  BlockHeader,
  ChainClientService,
  LogChunk,
  LogFilter,
  PauseKind,
  RawLog,
  RoundData,
  StockEvent,
  StockState,
  TransactionReceipt
} from "@scaledger/domain/chain/ChainClient"
import {
  AllEndpointsFailed,
  BlockNotFound,
  ChainDecodeError,
  ContractReverted,
  ReceiptNotFound,
  RpcError,
  RpcRangeTooLarge,
  RpcRateLimited,
  RpcTimeout,
  RpcTransportError,
  StateUnavailable
} from "@scaledger/domain/chain/ChainErrors"
import type { ReadError, RequestError, RetryableRpcError } from "@scaledger/domain/chain/ChainErrors"
import { Chunk, Duration, Effect, Layer, Option, Redacted, Schedule, Stream } from "effect"
import { decodeEventLog, decodeFunctionResult, encodeFunctionData, getAddress, type Hex, http, webSocket } from "viem"
import { aggregatorV3Abi, draftMultiplierEventAbi, stockAbi } from "./abi.js"
import { ChainConfig, type ChainConfigShape } from "./ChainConfig.js"

type Failure = RetryableRpcError | RpcError

const isRetryable = (error: { readonly _tag: string }): error is RetryableRpcError =>
  error._tag === "RpcRateLimited" || error._tag === "RpcTimeout" || error._tag === "RpcTransportError"

interface Subscription {
  readonly unsubscribe: () => Promise<unknown>
}

interface Endpoint {
  readonly label: string
  readonly kind: "http" | "ws"
  readonly request: (args: { readonly method: string; readonly params: ReadonlyArray<unknown> }) => Promise<unknown>
  readonly subscribe?: (args: {
    readonly params: ReadonlyArray<unknown>
    readonly onData: (data: { readonly result: unknown }) => void
    readonly onError: (error: unknown) => void
  }) => Promise<Subscription>
  readonly close: () => Promise<void>
}

/** Scheme and host only: provider URLs often carry an API key in the path or query. */
export const endpointLabel = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}`
  } catch {
    return "<invalid url>"
  }
}

const makeEndpoint = (url: string, config: ChainConfigShape): Endpoint => {
  const label = endpointLabel(url)
  if (/^wss?:/i.test(url)) {
    const transport = webSocket(url, { retryCount: 0, timeout: config.timeoutMs })({ retryCount: 0 })
    let opened = false
    return {
      label,
      kind: "ws",
      request: (args) => {
        opened = true
        return transport.request(args as never)
      },
      subscribe: (args) => {
        opened = true
        return transport.value!.subscribe(args as never) as Promise<Subscription>
      },
      close: async () => {
        if (opened) (await transport.value!.getRpcClient()).close()
      }
    }
  }
  const transport = http(url, { retryCount: 0, timeout: config.timeoutMs, batch: false })({ retryCount: 0 })
  return { label, kind: "http", request: (args) => transport.request(args as never), close: async () => {} }
}

interface ErrorFacts {
  readonly names: ReadonlyArray<string>
  readonly status: number | undefined
  readonly code: number | undefined
  readonly retryAfter: string | undefined
  /** The provider's own words where there are some; never viem's long message (it repeats URL and body). */
  readonly message: string
}

const errorFacts = (error: unknown): ErrorFacts => {
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

const RATE_LIMITED = /rate.?limit|too many requests|exceeded .*capacity|request limit|throughput|daily request count/i

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

const BLOCK_NOT_FOUND = /invalid block tag|unknown block|block not found|block .* not found|cannot query unfinalized/i
const PRUNED =
  /missing trie node|metadata is not found|header not found|historical state .*not available|required historical state unavailable|state (is )?not available|state histor(y|ies) .*(pruned|not available|unavailable)|pruned/i
const HEADER_NOT_FOUND = /header not found/i
const REVERTED = /revert|invalid opcode|execution error/i

export type RangeAdvice =
  /** The provider states its cap: never ask for more than `blocks` again. */
  | { readonly kind: "ceiling"; readonly blocks: number }
  /** The provider suggests a range that works for this query. */
  | { readonly kind: "suggested"; readonly blocks: number }
  /** Too many results, too large, too slow: halve. */
  | { readonly kind: "halve" }

const number = (text: string): number => Number(text.replace(/[,.]/g, ""))

const CEILINGS: ReadonlyArray<readonly [RegExp, (m: RegExpMatchArray) => number]> = [
  [/up to an? ([\d,.]+)(K?) block range/i, (m) => number(m[1]!) * (m[2] === "" ? 1 : 1000)],
  [/limited to an? ([\d,.]+) (?:block )?range/i, (m) => number(m[1]!)],
  [/range \d+ exceeds limit of ([\d,.]+)/i, (m) => number(m[1]!)],
  [/exceeds max block range ([\d,.]+)/i, (m) => number(m[1]!)],
  [/max(?:imum)? block range(?: =|:)? ([\d,.]+)/i, (m) => number(m[1]!)],
  [/block range is too wide \(maximum ([\d,.]+)\)/i, (m) => number(m[1]!)],
  [/maximum \[from, to\] blocks distance: (\d+)/i, (m) => Number(m[1]!)],
  [/(?:bigger|larger) than range limit ([\d,.]+)/i, (m) => number(m[1]!)],
  [/limit the query to at most ([\d,.]+) blocks/i, (m) => number(m[1]!)],
  [/requested too many blocks from \d+ to \d+, maximum is set to (\d+)/i, (m) => Number(m[1]!)]
]

const SUGGESTED = /(?:should work|Try with this block range):? \[0x([0-9a-f]+),\s*0x([0-9a-f]+)\]/i

const HALVE =
  /query returned more than \d+ results|logs matched by query exceeds limit|Log response size exceeded|response size|query exceeds max results|backend response too large|block range (?:is )?too (?:wide|large|high)|Block range limit exceeded|query timeout|query timed out|timeout exceeded|exceeds? (?:the )?max(?:imum)? (?:results|logs)|too many (?:logs|results)/i

/** How to shrink an `eth_getLogs` range after a provider error, if the error is about the range at all. */
export const rangeAdvice = (message: string): RangeAdvice | undefined => {
  for (const [pattern, extract] of CEILINGS) {
    const m = message.match(pattern)
    if (m !== null) {
      const blocks = extract(m)
      if (Number.isFinite(blocks) && blocks > 0) return { kind: "ceiling", blocks }
    }
  }
  const suggested = SUGGESTED.exec(message)
  if (suggested !== null) {
    const blocks = parseInt(suggested[2]!, 16) - parseInt(suggested[1]!, 16) + 1
    if (blocks > 0) return { kind: "suggested", blocks }
  }
  return HALVE.test(message) ? { kind: "halve" } : undefined
}

const toHex = (n: number | bigint): Hex => `0x${n.toString(16)}`
const blockTag = (block: number | undefined): string => (block === undefined ? "latest" : toHex(block))

interface RpcBlock {
  readonly number: Hex
  readonly hash: Hex
  readonly parentHash: Hex
  readonly timestamp: Hex
}

interface RpcLog {
  readonly address: Hex
  readonly topics: ReadonlyArray<Hex>
  readonly data: Hex
  readonly blockNumber: Hex
  readonly blockHash: Hex
  readonly transactionHash: Hex
  readonly transactionIndex: Hex
  readonly logIndex: Hex
  readonly removed?: boolean
}

interface RpcReceipt {
  readonly transactionHash: Hex
  readonly blockNumber: Hex
  readonly blockHash: Hex
  readonly transactionIndex: Hex
  readonly from: Hex
  readonly to: Hex | null
  readonly status: Hex
  readonly gasUsed: Hex
  readonly effectiveGasPrice?: Hex
  readonly logs: ReadonlyArray<RpcLog>
}

const toHeader = (b: RpcBlock): BlockHeader => ({
  number: Number(b.number),
  hash: b.hash.toLowerCase(),
  parentHash: b.parentHash.toLowerCase(),
  timestamp: Number(b.timestamp)
})

const toRawLog = (l: RpcLog): RawLog => ({
  address: getAddress(l.address),
  topics: l.topics.map((t) => t.toLowerCase()),
  data: l.data,
  blockNumber: Number(l.blockNumber),
  blockHash: l.blockHash.toLowerCase(),
  transactionHash: l.transactionHash.toLowerCase(),
  transactionIndex: Number(l.transactionIndex),
  logIndex: Number(l.logIndex),
  removed: l.removed === true
})

const PAUSE_KINDS: Readonly<Record<string, PauseKind>> = {
  [StockTopics.Paused]: "Paused",
  [StockTopics.Unpaused]: "Unpaused",
  [StockTopics.OraclePaused]: "OraclePaused",
  [StockTopics.OracleUnpaused]: "OracleUnpaused"
}

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
        const { args } = decodeEventLog({ abi: stockAbi, eventName: "Transfer", topics, data })
        return Option.some({ _tag: "Transfer", ...position, from: args.from, to: args.to, value: args.value })
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

const STOCK_TOPICS: ReadonlyArray<string> = Object.values(StockTopics)

const MAX_CACHED_TIMESTAMPS = 100_000
const MAX_POLL_BACKFILL = 256

export const make = Effect.gen(function*() {
  const config = yield* ChainConfig
  const endpoints = config.rpcUrls.map((u) => makeEndpoint(Redacted.value(u), config))
  const labels = endpoints.map((e) => e.label)
  yield* Effect.addFinalizer(() => Effect.promise(() => Promise.allSettled(endpoints.map((e) => e.close()))))
  const semaphore = yield* Effect.makeSemaphore(config.concurrency)

  let active = 0
  let knownHead = 0
  let logsCeiling = config.logsMaxChunk
  const timestamps = new Map<number, number>()

  const noteHead = (n: number) => {
    if (n > knownHead) knownHead = n
  }

  const retrySchedule = Schedule.exponential(Duration.millis(config.retryBaseDelayMs), 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(config.retryMaxDelayMs))),
    Schedule.zipRight(Schedule.identity<Failure>()),
    Schedule.modifyDelay((error, delay) =>
      error._tag === "RpcRateLimited" && error.retryAfterMs !== undefined
        ? Duration.max(delay, Duration.millis(Math.min(error.retryAfterMs, config.retryAfterCapMs)))
        : delay
    ),
    Schedule.intersect(Schedule.recurs(Math.max(config.maxRetries, endpoints.length - 1))),
    Schedule.whileInput((error: Failure) => isRetryable(error))
  )

  const attemptOn = (
    index: number,
    method: string,
    params: ReadonlyArray<unknown>
  ): Effect.Effect<unknown, Failure> => {
    const endpoint = endpoints[index]!
    return Effect.tryPromise({
      try: () => endpoint.request({ method, params }),
      catch: (error) => classifyRpcFailure(error, endpoint.label, method, config.timeoutMs)
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(config.timeoutMs + 1_000),
        onTimeout: () =>
          new RpcTimeout({
            endpoint: endpoint.label,
            method,
            timeoutMs: config.timeoutMs,
            message: `no answer within ${config.timeoutMs} ms`
          })
      }),
      semaphore.withPermits(1)
    )
  }

  type SendError = AllEndpointsFailed | RpcError | StateUnavailable | BlockNotFound

  const send = <T>(
    method: string,
    params: ReadonlyArray<unknown>,
    context: { readonly block?: number | undefined } = {}
  ): Effect.Effect<T, SendError> =>
    Effect.suspend(() => {
      let attempts = 0
      const once = Effect.suspend(() => {
        const index = active
        attempts++
        return attemptOn(index, method, params).pipe(
          Effect.tapError((error) =>
            Effect.sync(() => {
              if (isRetryable(error) && active === index) active = (index + 1) % endpoints.length
            })
          )
        )
      })
      return once.pipe(
        Effect.retry(retrySchedule),
        Effect.catchAll((error): Effect.Effect<unknown, SendError> =>
          isRetryable(error)
            ? Effect.fail(
              new AllEndpointsFailed({
                endpoints: labels,
                method,
                attempts,
                lastError: error,
                message: `${method} failed after ${attempts} attempt(s) on ${labels.join(", ")}: ${error.message}`
              })
            )
            : interpretRpcError(error, method, params, context)
        ),
        Effect.map((result) => result as T)
      )
    })

  const interpretRpcError = (
    error: RpcError,
    method: string,
    params: ReadonlyArray<unknown>,
    context: { readonly block?: number | undefined }
  ): Effect.Effect<unknown, SendError> => {
    const blockNotFound = () =>
      new BlockNotFound({ block: context.block ?? "latest", message: `${method}: ${error.message}` })
    if (BLOCK_NOT_FOUND.test(error.message)) return Effect.fail(blockNotFound())
    if (!PRUNED.test(error.message)) return Effect.fail(error)
    const unavailable = new StateUnavailable({
      method,
      block: context.block ?? knownHead,
      endpoint: error.endpoint,
      message: error.message
    })
    const beyondHead: Effect.Effect<boolean> =
      HEADER_NOT_FOUND.test(error.message) && context.block !== undefined && context.block > knownHead
        ? headNumber.pipe(Effect.map((head) => context.block! > head), Effect.orElseSucceed(() => false))
        : Effect.succeed(false)
    return beyondHead.pipe(
      Effect.flatMap((beyond): Effect.Effect<unknown, SendError> => {
        if (beyond) return Effect.fail(blockNotFound())
        const tries = endpoints.flatMap((endpoint, i) =>
          endpoint.label === error.endpoint ? [] : [attemptOn(i, method, params)]
        )
        if (tries.length === 0) return Effect.fail(unavailable)
        return Effect.firstSuccessOf(tries).pipe(Effect.mapError(() => unavailable))
      })
    )
  }

  const headNumber: Effect.Effect<number, RequestError> = send<Hex>("eth_blockNumber", []).pipe(
    Effect.map((hex) => Number(hex)),
    Effect.tap((n) => Effect.sync(() => noteHead(n))),
    Effect.catchTags({
      StateUnavailable: (e) =>
        Effect.fail(new RpcError({ endpoint: e.endpoint, method: e.method, code: -1, message: e.message })),
      BlockNotFound: (e) =>
        Effect.fail(new RpcError({ endpoint: "", method: "eth_blockNumber", code: -1, message: e.message }))
    })
  )

  const asRequestError = <A>(
    effect: Effect.Effect<A, SendError>
  ): Effect.Effect<A, RequestError | BlockNotFound> =>
    Effect.catchTag(
      effect,
      "StateUnavailable",
      (e) => Effect.fail(new RpcError({ endpoint: e.endpoint, method: e.method, code: -1, message: e.message }))
    )

  const getBlock = (tag: string, label: number | string): Effect.Effect<BlockHeader, RequestError | BlockNotFound> =>
    asRequestError(send<RpcBlock | null>("eth_getBlockByNumber", [tag, false])).pipe(
      Effect.flatMap((b) =>
        b === null
          ? Effect.fail(new BlockNotFound({ block: label, message: `block ${label} not found` }))
          : Effect.succeed(toHeader(b))
      ),
      Effect.tap((h) => Effect.sync(() => noteHead(h.number)))
    )

  const head = getBlock("latest", "latest")
  const block = (n: number) => getBlock(toHex(n), n)

  const blockByHash = (hash: string): Effect.Effect<BlockHeader, RequestError | BlockNotFound> =>
    asRequestError(send<RpcBlock | null>("eth_getBlockByHash", [hash, false])).pipe(
      Effect.flatMap((b) =>
        b === null
          ? Effect.fail(new BlockNotFound({ block: hash, message: `block ${hash} not found` }))
          : Effect.succeed(toHeader(b))
      )
    )

  const blockTimestamp = (n: number): Effect.Effect<number, RequestError | BlockNotFound> =>
    Effect.suspend(() => {
      const cached = timestamps.get(n)
      if (cached !== undefined) return Effect.succeed(cached)
      return block(n).pipe(
        Effect.map((h) => {
          if (h.number + config.finalityDepth <= knownHead) {
            if (timestamps.size >= MAX_CACHED_TIMESTAMPS) timestamps.delete(timestamps.keys().next().value!)
            timestamps.set(n, h.timestamp)
          }
          return h.timestamp
        })
      )
    })

  const fetchLogs = (
    filter: LogFilter,
    from: number,
    size: number
  ): Effect.Effect<readonly [LogChunk, number], RequestError | RpcRangeTooLarge> => {
    const to = Math.min(from + size - 1, filter.toBlock)
    const span = to - from + 1
    const rpcFilter = {
      ...(filter.addresses === undefined ? {} : { address: filter.addresses }),
      ...(filter.topics === undefined ? {} : { topics: filter.topics }),
      fromBlock: toHex(from),
      toBlock: toHex(to)
    }
    return asRequestError(send<ReadonlyArray<RpcLog>>("eth_getLogs", [rpcFilter])).pipe(
      Effect.map((logs) => {
        const sorted = logs.map(toRawLog).sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex)
        const grown = Math.min(span * 2, logsCeiling, config.logsMaxChunk)
        return [{ fromBlock: from, toBlock: to, logs: sorted }, Math.max(grown, 1)] as const
      }),
      Effect.catchTags({
        BlockNotFound: (e) =>
          Effect.fail(new RpcError({ endpoint: "", method: "eth_getLogs", code: -1, message: e.message })),
        RpcError: (error) => {
          const advice = rangeAdvice(error.message)
          if (advice === undefined) return Effect.fail(error)
          if (span <= 1) {
            return Effect.fail(new RpcRangeTooLarge({ fromBlock: from, toBlock: to, message: error.message }))
          }
          let next: number
          if (advice.kind === "ceiling") {
            logsCeiling = Math.max(1, Math.min(logsCeiling, advice.blocks))
            next = Math.min(advice.blocks, span - 1)
          } else if (advice.kind === "suggested") {
            next = Math.min(advice.blocks, span - 1)
          } else {
            next = Math.floor(span / 2)
          }
          return fetchLogs(filter, from, Math.max(1, next))
        }
      })
    )
  }

  const logs = (filter: LogFilter): Stream.Stream<LogChunk, RequestError | RpcRangeTooLarge> => {
    if (filter.fromBlock > filter.toBlock || (filter.addresses !== undefined && filter.addresses.length === 0)) {
      return Stream.empty
    }
    return Stream.unfoldEffect(
      { from: filter.fromBlock, size: Math.min(config.logsInitialChunk, logsCeiling) },
      (state) =>
        state.from > filter.toBlock
          ? Effect.succeed(Option.none())
          : fetchLogs(filter, state.from, state.size).pipe(
            Effect.map(([chunk, size]) => Option.some([chunk, { from: chunk.toBlock + 1, size }] as const))
          )
    )
  }

  const stockEvents: ChainClientService["stockEvents"] = (filter) =>
    logs({
      addresses: filter.tokens,
      topics: [filter.topics ?? STOCK_TOPICS],
      fromBlock: filter.fromBlock,
      toBlock: filter.toBlock
    }).pipe(
      Stream.map((chunk) => ({
        fromBlock: chunk.fromBlock,
        toBlock: chunk.toBlock,
        events: chunk.logs.flatMap((l) => Option.toArray(decodeStockLog(l)))
      }))
    )

  const call = <A>(
    address: string,
    functionName: string,
    data: Hex,
    decode: (result: Hex) => A,
    block: number | undefined
  ): Effect.Effect<A, ReadError> =>
    send<Hex>("eth_call", [{ to: address, data }, blockTag(block)], { block }).pipe(
      Effect.catchTag("RpcError", (error): Effect.Effect<never, RpcError | ContractReverted> =>
        REVERTED.test(error.message) || error.code === 3
          ? Effect.fail(
            new ContractReverted({
              address,
              functionName,
              message: error.message,
              ...(block === undefined ? {} : { block })
            })
          )
          : Effect.fail(error)),
      Effect.flatMap((result): Effect.Effect<A, ContractReverted | ChainDecodeError> =>
        result === "0x"
          ? Effect.fail(
            new ContractReverted({
              address,
              functionName,
              message: "empty return data (no contract at this address at that block?)",
              ...(block === undefined ? {} : { block })
            })
          )
          : Effect.try({
            try: () =>
              decode(result),
            catch: (e) =>
              new ChainDecodeError({ what: `${functionName} at ${address}`, message: errorFacts(e).message })
          })
      )
    )

  const stockRead = <A>(
    functionName: "uiMultiplier" | "newUIMultiplier" | "effectiveAt" | "paused" | "tokenPaused" | "oraclePaused",
    map: (value: bigint | boolean) => A
  ) =>
  (token: string, block?: number): Effect.Effect<A, ReadError> =>
    call(
      token,
      functionName,
      encodeFunctionData({ abi: stockAbi, functionName }),
      (data) => map(decodeFunctionResult({ abi: stockAbi, functionName, data }) as bigint | boolean),
      block
    )

  const asBigint = (v: bigint | boolean) => v as bigint
  const asBoolean = (v: bigint | boolean) => v as boolean
  const uiMultiplier = stockRead("uiMultiplier", asBigint)
  const newUIMultiplier = stockRead("newUIMultiplier", asBigint)
  const effectiveAt = stockRead("effectiveAt", (v) => Number(v as bigint))
  const paused = stockRead("paused", asBoolean)
  const tokenPaused = stockRead("tokenPaused", asBoolean)
  const oraclePaused = stockRead("oraclePaused", asBoolean)

  const resolveBlock = (block: number | undefined): Effect.Effect<number, RequestError> =>
    block === undefined ? headNumber : Effect.succeed(block)

  const stockState = (token: string, block?: number): Effect.Effect<StockState, ReadError> =>
    resolveBlock(block).pipe(
      Effect.flatMap((at) =>
        Effect.all({
          uiMultiplier: uiMultiplier(token, at),
          newUIMultiplier: newUIMultiplier(token, at),
          effectiveAt: effectiveAt(token, at),
          paused: paused(token, at),
          tokenPaused: tokenPaused(token, at),
          oraclePaused: oraclePaused(token, at)
        }, { concurrency: "unbounded" }).pipe(Effect.map((s) => ({ token: getAddress(token), block: at, ...s })))
      )
    )

  const balanceOf = (token: string, holder: string, block?: number) =>
    call(
      token,
      "balanceOf",
      encodeFunctionData({ abi: stockAbi, functionName: "balanceOf", args: [holder as Hex] }),
      (data) => decodeFunctionResult({ abi: stockAbi, functionName: "balanceOf", data }),
      block
    )

  const decimals = (token: string) =>
    call(
      token,
      "decimals",
      encodeFunctionData({ abi: stockAbi, functionName: "decimals" }),
      (data) => decodeFunctionResult({ abi: stockAbi, functionName: "decimals", data }),
      undefined
    )

  const isStockToken = (address: string, block?: number) =>
    call(
      address,
      "supportsInterface",
      encodeFunctionData({ abi: stockAbi, functionName: "supportsInterface", args: [StockInterfaceId as Hex] }),
      (data) => decodeFunctionResult({ abi: stockAbi, functionName: "supportsInterface", data }),
      block
    ).pipe(
      Effect.catchTags({
        ContractReverted: () => Effect.succeed(false),
        ChainDecodeError: () => Effect.succeed(false)
      })
    )

  const toRound = (r: readonly [bigint, bigint, bigint, bigint, bigint]): RoundData => ({
    roundId: r[0],
    answer: r[1],
    startedAt: Number(r[2]),
    updatedAt: Number(r[3]),
    answeredInRound: r[4]
  })

  const feedDecimals = (feed: string) =>
    call(
      feed,
      "decimals",
      encodeFunctionData({ abi: aggregatorV3Abi, functionName: "decimals" }),
      (data) => decodeFunctionResult({ abi: aggregatorV3Abi, functionName: "decimals", data }),
      undefined
    )

  const latestRoundData = (feed: string, block?: number) =>
    call(
      feed,
      "latestRoundData",
      encodeFunctionData({ abi: aggregatorV3Abi, functionName: "latestRoundData" }),
      (data) => toRound(decodeFunctionResult({ abi: aggregatorV3Abi, functionName: "latestRoundData", data })),
      block
    )

  const getRoundData = (feed: string, roundId: bigint, block?: number) =>
    call(
      feed,
      "getRoundData",
      encodeFunctionData({ abi: aggregatorV3Abi, functionName: "getRoundData", args: [roundId] }),
      (data) => toRound(decodeFunctionResult({ abi: aggregatorV3Abi, functionName: "getRoundData", data })),
      block
    )

  const receipt = (txHash: string): Effect.Effect<TransactionReceipt, RequestError | ReceiptNotFound> =>
    send<RpcReceipt | null>("eth_getTransactionReceipt", [txHash]).pipe(
      Effect.catchTags({
        StateUnavailable: (e) =>
          Effect.fail(new RpcError({ endpoint: e.endpoint, method: e.method, code: -1, message: e.message })),
        BlockNotFound: () => Effect.succeed(null)
      }),
      Effect.flatMap((r) =>
        r === null
          ? Effect.fail(new ReceiptNotFound({ txHash, message: `no receipt for ${txHash}` }))
          : Effect.succeed<TransactionReceipt>({
            txHash: r.transactionHash.toLowerCase(),
            blockNumber: Number(r.blockNumber),
            blockHash: r.blockHash.toLowerCase(),
            transactionIndex: Number(r.transactionIndex),
            from: getAddress(r.from),
            to: r.to === null ? null : getAddress(r.to),
            status: Number(r.status) === 1 ? "success" : "reverted",
            gasUsed: BigInt(r.gasUsed),
            effectiveGasPrice: BigInt(r.effectiveGasPrice ?? "0x0"),
            logs: r.logs.map(toRawLog)
          })
      )
    )

  const pollHeads: Stream.Stream<BlockHeader, RequestError> = Stream.unfoldChunkEffect(
    { last: undefined as BlockHeader | undefined, first: true },
    (state) =>
      Effect.gen(function*() {
        if (!state.first) yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
        const latest = yield* head
        const last = state.last
        const out: Array<BlockHeader> = []
        if (last === undefined || latest.number < last.number) {
          out.push(latest)
        } else if (latest.number === last.number) {
          if (latest.hash !== last.hash) out.push(latest)
        } else {
          const from = Math.max(last.number + 1, latest.number - MAX_POLL_BACKFILL + 1)
          for (let n = from; n < latest.number; n++) out.push(yield* block(n))
          out.push(latest)
        }
        return Option.some([Chunk.fromIterable(out), { last: out.at(-1) ?? last, first: false }] as const)
      }).pipe(
        Effect.catchTag("BlockNotFound", () =>
          Effect.succeed(Option.some([Chunk.empty<BlockHeader>(), { ...state, first: false }] as const)))
      )
  )

  const wsEndpoint = endpoints.find((e) => e.kind === "ws")

  const subscribedHeads = (endpoint: Endpoint): Stream.Stream<BlockHeader, RpcTransportError> =>
    Stream.asyncScoped<BlockHeader, RpcTransportError>((emit) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            endpoint.subscribe!({
              params: ["newHeads"],
              onData: (data) => {
                const header = toHeader(data.result as RpcBlock)
                noteHead(header.number)
                void emit.single(header)
              },
              onError: (error) => {
                void emit.fail(
                  new RpcTransportError({
                    endpoint: endpoint.label,
                    method: "eth_subscribe",
                    message: errorFacts(error).message
                  })
                )
              }
            }),
          catch: (error) =>
            new RpcTransportError({
              endpoint: endpoint.label,
              method: "eth_subscribe",
              message: errorFacts(error).message
            })
        }),
        (subscription) =>
          Effect.promise(() => subscription.unsubscribe()).pipe(Effect.timeout(Duration.seconds(1)), Effect.ignore)
      )
    )

  const newHeads: Stream.Stream<BlockHeader, RequestError> = wsEndpoint === undefined
    ? pollHeads
    : subscribedHeads(wsEndpoint).pipe(
      Stream.retry(
        Schedule.exponential(Duration.millis(config.retryBaseDelayMs)).pipe(
          Schedule.jittered,
          Schedule.intersect(Schedule.recurs(config.maxRetries))
        )
      ),
      Stream.orElse(() => pollHeads)
    )

  const service: ChainClientService = {
    chainId: config.chainId,
    head,
    headNumber,
    newHeads,
    block,
    blockByHash,
    blockTimestamp,
    logs,
    stockEvents,
    decodeStockLog,
    uiMultiplier,
    newUIMultiplier,
    effectiveAt,
    paused,
    tokenPaused,
    oraclePaused,
    balanceOf,
    decimals,
    stockState,
    isStockToken,
    feedDecimals,
    latestRoundData,
    getRoundData,
    receipt
  }
  return service
})

/** The client over `ChainConfig`. */
export const ViemChainClientLayer: Layer.Layer<ChainClient, never, ChainConfig> = Layer.scoped(ChainClient, make)

/** The client configured from the environment (`RPC_URL`, `CHAIN_ID`, ...). */
export const ViemChainClientLive = ViemChainClientLayer.pipe(Layer.provide(ChainConfig.Live))
