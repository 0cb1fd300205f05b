import { Config, Context, Layer, Redacted } from "effect"

export interface ChainConfigShape {
  /** In order of preference; http(s) or ws(s). Secret: provider URLs often carry API keys. */
  readonly rpcUrls: ReadonlyArray<Redacted.Redacted<string>>
  readonly chainId: number
  /** Blocks newer than this many behind head are provisional (a re-org may rewrite them). */
  readonly finalityDepth: number
  /** Requests in flight at once, over all endpoints. */
  readonly concurrency: number
  readonly timeoutMs: number
  /** Retries after the first attempt, over all endpoints together. */
  readonly maxRetries: number
  readonly retryBaseDelayMs: number
  readonly retryMaxDelayMs: number
  /** The longest `Retry-After` honoured. */
  readonly retryAfterCapMs: number
  /** Head polling interval when no WebSocket endpoint is configured. */
  readonly pollIntervalMs: number
  /** With a WebSocket subscription, how often the head is also read (a head it did not deliver still arrives). */
  readonly headCheckMs: number
  /** First `eth_getLogs` block span tried, and the largest it grows to. */
  readonly logsInitialChunk: number
  readonly logsMaxChunk: number
  /** Requests per JSON-RPC batch on HTTP endpoints (block and receipt reads); 1 turns batching off. */
  readonly batchSize: number
  /** A block holding at least this many of the transactions whose receipts are wanted is read whole. */
  readonly blockReceiptsMin: number
}

export const ROBINHOOD_CHAIN_ID = 4663
export const ROBINHOOD_PUBLIC_RPC = "https://rpc.mainnet.chain.robinhood.com"

export const chainConfigDefaults: Omit<ChainConfigShape, "rpcUrls"> = {
  chainId: ROBINHOOD_CHAIN_ID,
  finalityDepth: 240,
  concurrency: 4,
  timeoutMs: 10_000,
  maxRetries: 6,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 10_000,
  retryAfterCapMs: 30_000,
  pollIntervalMs: 1_000,
  headCheckMs: 5_000,
  logsInitialChunk: 10_000,
  logsMaxChunk: 100_000,
  batchSize: 100,
  blockReceiptsMin: 8
}

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

const nonNegativeInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be zero or more`, validation: (n) => n >= 0 })
  )

export const splitRpcUrls = (value: string): ReadonlyArray<string> =>
  value.split(",").map((u) => u.trim()).filter((u) => u.length > 0)

/**
 * `RPC_URL` (comma-separated fallbacks), `CHAIN_ID`, `FINALITY_DEPTH`, `RPC_CONCURRENCY`, `RPC_TIMEOUT_MS`,
 * `RPC_MAX_RETRIES`, `RPC_RETRY_BASE_MS`, `RPC_RETRY_MAX_MS`, `RPC_RETRY_AFTER_CAP_MS`, `RPC_POLL_INTERVAL_MS`, `RPC_HEAD_CHECK_MS`,
 * `RPC_LOGS_CHUNK_BLOCKS`, `RPC_LOGS_MAX_CHUNK_BLOCKS`, `RPC_BATCH_SIZE`, `RPC_BLOCK_RECEIPTS_MIN`.
 */
export const chainConfig: Config.Config<ChainConfigShape> = Config.all({
  rpcUrls: Config.redacted("RPC_URL").pipe(
    Config.withDefault(Redacted.make(ROBINHOOD_PUBLIC_RPC)),
    Config.map((value) => splitRpcUrls(Redacted.value(value)).map((u) => Redacted.make(u))),
    Config.validate({
      message: "RPC_URL must hold at least one http(s) or ws(s) URL",
      validation: (urls) => urls.length > 0 && urls.every((u) => /^(https?|wss?):\/\//i.test(Redacted.value(u)))
    })
  ),
  chainId: positiveInt("CHAIN_ID", chainConfigDefaults.chainId),
  finalityDepth: nonNegativeInt("FINALITY_DEPTH", chainConfigDefaults.finalityDepth),
  concurrency: positiveInt("RPC_CONCURRENCY", chainConfigDefaults.concurrency),
  timeoutMs: positiveInt("RPC_TIMEOUT_MS", chainConfigDefaults.timeoutMs),
  maxRetries: nonNegativeInt("RPC_MAX_RETRIES", chainConfigDefaults.maxRetries),
  retryBaseDelayMs: positiveInt("RPC_RETRY_BASE_MS", chainConfigDefaults.retryBaseDelayMs),
  retryMaxDelayMs: positiveInt("RPC_RETRY_MAX_MS", chainConfigDefaults.retryMaxDelayMs),
  retryAfterCapMs: nonNegativeInt("RPC_RETRY_AFTER_CAP_MS", chainConfigDefaults.retryAfterCapMs),
  pollIntervalMs: positiveInt("RPC_POLL_INTERVAL_MS", chainConfigDefaults.pollIntervalMs),
  headCheckMs: positiveInt("RPC_HEAD_CHECK_MS", chainConfigDefaults.headCheckMs),
  logsInitialChunk: positiveInt("RPC_LOGS_CHUNK_BLOCKS", chainConfigDefaults.logsInitialChunk),
  logsMaxChunk: positiveInt("RPC_LOGS_MAX_CHUNK_BLOCKS", chainConfigDefaults.logsMaxChunk),
  batchSize: positiveInt("RPC_BATCH_SIZE", chainConfigDefaults.batchSize),
  blockReceiptsMin: positiveInt("RPC_BLOCK_RECEIPTS_MIN", chainConfigDefaults.blockReceiptsMin)
})

export class ChainConfig extends Context.Tag("@scaledger/workers/chain/ChainConfig")<ChainConfig, ChainConfigShape>() {
  /** From the environment (through `ConfigProvider`). */
  static readonly Live = Layer.effect(ChainConfig, chainConfig)

  /** Explicit settings (tests, embedders); unspecified fields take the defaults. */
  static readonly layer = (
    settings: Partial<Omit<ChainConfigShape, "rpcUrls">> & { readonly rpcUrls: ReadonlyArray<string> }
  ): Layer.Layer<ChainConfig> =>
    Layer.succeed(ChainConfig, {
      ...chainConfigDefaults,
      ...settings,
      rpcUrls: settings.rpcUrls.map((u) => Redacted.make(u))
    })
}
