import { nonNegativeInteger, positiveInteger } from "@scaledger/domain/ConfigValues"
import { Config, ConfigError, Context, Either, Layer } from "effect"

/** A duration list such as `5s,5m` or `200ms,1s` (units ms, s, m, h) as milliseconds. */
export const parseDelays = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(",").map((part) => part.trim())
  const out: Array<number> = []
  for (const part of parts) {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(part)
    if (match === null) return undefined
    const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[match[2] as "ms" | "s" | "m" | "h"]
    out.push(Math.round(Number(match[1]) * unit))
  }
  return out
}

/** Attempts of a delivery: the first, then one after each retry delay. */
const MAX_ATTEMPTS = 3

/** The waits before attempts 2 and 3: one or two durations (one: the same wait before both). */
export const Delays = Config.string("WEBHOOK_RETRY_DELAYS").pipe(
  Config.withDefault("5s,5m"),
  Config.mapOrFail((text) => {
    const delays = parseDelays(text)
    if (delays === undefined || delays.length === 0) {
      return Either.left(
        ConfigError.InvalidData(["WEBHOOK_RETRY_DELAYS"], `expected durations such as "5s,5m", got "${text}"`)
      )
    }
    return delays.length > MAX_ATTEMPTS - 1
      ? Either.left(
        ConfigError.InvalidData(
          ["WEBHOOK_RETRY_DELAYS"],
          `expected at most ${MAX_ATTEMPTS - 1} durations (the waits before attempts 2 and 3), got ${delays.length}`
        )
      )
      : Either.right(delays)
  })
)

export interface WebhookConfigShape {
  /** `WEBHOOK_ALLOW_PRIVATE_TARGETS`: lets deliveries reach loopback and private addresses (tests, local use). */
  readonly allowPrivateTargets: boolean
  /** Waits before attempts 2 and 3 (±20 % jitter). */
  readonly retryDelaysMs: ReadonlyArray<number>
  readonly maxAttempts: number
  /** The longest a `Retry-After` is waited for. */
  readonly retryAfterCapMs: number
  readonly connectTimeoutMs: number
  readonly totalTimeoutMs: number
  /** How long a claimed attempt is leased: a worker that died leaves it due again after this. */
  readonly leaseSeconds: number
  readonly pollMs: number
  readonly concurrency: number
  readonly batchSize: number
  /**
   * `WEBHOOK_SHUTDOWN_GRACE_MS`: at shutdown, how long attempts in flight may take to end and be recorded; those
   * still waiting for their receiver then are cut off and give back their lease.
   */
  readonly shutdownGraceMs: number
  /**
   * How often the alert monitor reads the record's watermark (two cheap queries); where it moved, a pass runs over
   * the accounts it concerns, so alerts arrive within this plus the recorder's lag.
   */
  readonly monitorPollMs: number
  /** `ALERT_SAFETY_POLL_MS`: a full pass at least this often, for time-driven causes (a silent feed, stale rates). */
  readonly monitorSafetyPollMs: number
  /** How long an accrued-income alert stays open after its step. */
  readonly incomeOpenDays: number
  /** `ORACLE_STALE_MINUTES`: regular-session minutes without a new feed round before `oracle-paused`. */
  readonly oracleStaleMinutes: number
}

export const WebhookConfigFromEnv = Config.all({
  allowPrivateTargets: Config.boolean("WEBHOOK_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
  retryDelaysMs: Delays,
  maxAttempts: Config.succeed(MAX_ATTEMPTS),
  retryAfterCapMs: nonNegativeInteger("WEBHOOK_RETRY_AFTER_CAP_MS", 15 * 60_000),
  connectTimeoutMs: positiveInteger("WEBHOOK_CONNECT_TIMEOUT_MS", 5_000),
  totalTimeoutMs: positiveInteger("WEBHOOK_TIMEOUT_MS", 15_000),
  leaseSeconds: positiveInteger("WEBHOOK_LEASE_SECONDS", 60),
  pollMs: positiveInteger("WEBHOOK_POLL_MS", 250),
  concurrency: positiveInteger("WEBHOOK_CONCURRENCY", 16),
  batchSize: positiveInteger("WEBHOOK_BATCH", 64),
  shutdownGraceMs: nonNegativeInteger("WEBHOOK_SHUTDOWN_GRACE_MS", 5_000),
  monitorPollMs: positiveInteger("ALERT_POLL_MS", 2_000),
  monitorSafetyPollMs: positiveInteger("ALERT_SAFETY_POLL_MS", 30_000),
  incomeOpenDays: nonNegativeInteger("ALERT_INCOME_OPEN_DAYS", 7),
  oracleStaleMinutes: positiveInteger("ORACLE_STALE_MINUTES", 60)
}).pipe(
  // A lease that ran out while its attempt was still waiting for the receiver would let another worker (or this
  // one) send the same delivery again: the lease must outlast an attempt's whole time-out.
  Config.validate({
    message: "WEBHOOK_LEASE_SECONDS must exceed WEBHOOK_TIMEOUT_MS (an attempt's time-out) by a second or more",
    validation: (config) => config.leaseSeconds * 1000 >= config.totalTimeoutMs + 1_000
  })
)

export class WebhookConfig extends Context.Tag("@scaledger/workers/WebhookConfig")<
  WebhookConfig,
  WebhookConfigShape
>() {
  static readonly Live = Layer.effect(WebhookConfig, WebhookConfigFromEnv)
  static readonly defaults: WebhookConfigShape = {
    allowPrivateTargets: false,
    retryDelaysMs: [5_000, 300_000],
    maxAttempts: MAX_ATTEMPTS,
    retryAfterCapMs: 15 * 60_000,
    connectTimeoutMs: 5_000,
    totalTimeoutMs: 15_000,
    leaseSeconds: 60,
    pollMs: 250,
    concurrency: 16,
    batchSize: 64,
    shutdownGraceMs: 5_000,
    monitorPollMs: 2_000,
    monitorSafetyPollMs: 30_000,
    incomeOpenDays: 7,
    oracleStaleMinutes: 60
  }
  static readonly layer = (overrides: Partial<WebhookConfigShape>) =>
    Layer.succeed(WebhookConfig, { ...WebhookConfig.defaults, ...overrides })
}
