import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { EdgarReads } from "@scaledger/db/market/EdgarReads"
import { nonNegativeInteger, optionalHttpUrl, optionalSecret } from "@scaledger/domain/ConfigValues"
import { EdgarError, EdgarNotFound, EdgarSource, type EdgarSourceShape, padCik } from "@scaledger/domain/market/Edgar"
import { Clock, Config, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"

export const SEC_WWW_BASE_URL = "https://www.sec.gov"
export const SEC_DATA_BASE_URL = "https://data.sec.gov"

/**
 * `EDGAR_USER_AGENT` (a company name and a contact e-mail, as the SEC requires) turns EDGAR on; without it no
 * request is ever made. `EDGAR_BASE_URL` replaces both SEC hosts with one base serving the same paths.
 */
export const EdgarConfig = Config.all({
  // Set but blank (`EDGAR_USER_AGENT=` in a compose file) is unset: never a request without a User-Agent.
  userAgent: optionalSecret("EDGAR_USER_AGENT"),
  baseUrl: optionalHttpUrl("EDGAR_BASE_URL"),
  /** Requests per second across the whole process; the SEC's limit is 10. */
  maxRequestsPerSecond: Config.number("EDGAR_MAX_REQUESTS_PER_SECOND").pipe(
    Config.withDefault(10),
    Config.validate({
      message: "EDGAR_MAX_REQUESTS_PER_SECOND must be more than 0 and at most 10 (the SEC's limit)",
      validation: (n) => n > 0 && n <= 10
    })
  ),
  /** Cached documents older than this are fetched again (daily refresh). */
  refreshHours: Config.number("EDGAR_REFRESH_HOURS").pipe(
    Config.withDefault(24),
    Config.validate({ message: "EDGAR_REFRESH_HOURS must be zero or more", validation: (n) => n >= 0 })
  ),
  /** First back-off delay of a retry (doubling, jittered). */
  retryBaseDelayMs: nonNegativeInteger("EDGAR_RETRY_BASE_MS", 1_000),
  /** How long a read waits for EDGAR before it answers the stale copy or `edgar_unavailable` (the request goes on). */
  readWaitMs: nonNegativeInteger("EDGAR_READ_WAIT_MS", 5_000)
})
export type EdgarConfig = Config.Config.Success<typeof EdgarConfig>

export interface EdgarHttpOptions {
  readonly userAgent: string
  readonly baseUrl?: string | undefined
  readonly maxRequestsPerSecond?: number
  /** Further attempts after the first on 429, 5xx and network errors. */
  readonly retries?: number
  readonly retryBaseDelay?: Duration.DurationInput
  readonly maxRetryAfter?: Duration.DurationInput
  readonly timeout?: Duration.DurationInput
}

const trimSlash = (url: string): string => url.replace(/\/+$/, "")

const retryAfterMillis = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * One pace for the whole process: the REST reads and the refresh worker each build their own adapter, and the SEC's
 * limit counts them together. (Separate processes — `--api` and `--workers` on different machines — each keep their
 * own pace; give them `EDGAR_MAX_REQUESTS_PER_SECOND` summing to at most 10.)
 */
const processPace = { gate: Effect.unsafeMakeSemaphore(1), nextSlot: 0 }

interface Retryable {
  readonly error: EdgarError
  readonly retryAfterMs?: number
}

/**
 * The EDGAR adapter over HTTP: every request carries the User-Agent, waits for its turn in one process-wide pace
 * (at most `maxRequestsPerSecond` starts in any second, retries included), and retries 429 (honouring
 * `Retry-After`), 5xx, network errors and time-outs with exponential back-off.
 */
export const makeEdgarHttp = (options: EdgarHttpOptions) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const www = trimSlash(options.baseUrl ?? SEC_WWW_BASE_URL)
    const data = trimSlash(options.baseUrl ?? SEC_DATA_BASE_URL)
    const rps = options.maxRequestsPerSecond ?? 10
    // 10 % slack, so that network jitter cannot bring rps + 1 arrivals into one second at the other end.
    const intervalMs = Math.ceil((1000 / rps) * 1.1)
    const pace = processPace.gate.withPermits(1)(
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (processPace.nextSlot > now) yield* Effect.sleep(Duration.millis(processPace.nextSlot - now))
        processPace.nextSlot = Math.max(now, processPace.nextSlot) + intervalMs
      })
    )
    const timeout = options.timeout ?? Duration.seconds(30)
    const maxRetryAfter = options.maxRetryAfter ?? Duration.minutes(2)
    const schedule = Schedule.exponential(options.retryBaseDelay ?? Duration.seconds(1), 2).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(options.retries ?? 4)),
      Schedule.intersect(Schedule.identity<Retryable | EdgarNotFound>()),
      Schedule.modifyDelay(([, failure], delay) =>
        failure instanceof EdgarNotFound || failure.retryAfterMs === undefined
          ? delay
          : Duration.max(delay, Duration.min(Duration.millis(failure.retryAfterMs), maxRetryAfter))
      )
    )

    const attempt = (url: string): Effect.Effect<unknown, Retryable | EdgarNotFound> =>
      Effect.gen(function*() {
        yield* pace
        const response = yield* client.get(url, {
          headers: { "user-agent": options.userAgent, accept: "application/json" }
        }).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => ({ error: new EdgarError({ reason: "network", url, detail: "timed out" }) })
          }),
          Effect.mapError((e): Retryable =>
            "error" in e ? e : { error: new EdgarError({ reason: "network", url, detail: e.message }) }
          )
        )
        if (response.status === 404) return yield* new EdgarNotFound({ url })
        if (response.status !== 200) {
          const snippet = yield* response.text.pipe(
            Effect.map((t) => t.slice(0, 200)),
            Effect.orElseSucceed(() => "")
          )
          const now = yield* Clock.currentTimeMillis
          const retryAfterMs = response.status === 429
            ? retryAfterMillis(response.headers["retry-after"], now)
            : undefined
          return yield* Effect.fail<Retryable>({
            error: new EdgarError({
              reason: response.status === 429 ? "rate-limited" : "http-status",
              url,
              status: response.status,
              detail: `${response.status} ${snippet}`.trim()
            }),
            ...(retryAfterMs === undefined ? {} : { retryAfterMs })
          })
        }
        return yield* response.json.pipe(
          Effect.mapError((e): Retryable => ({
            error: new EdgarError({ reason: "parse", url, detail: `not JSON: ${e.message}` })
          }))
        )
      })

    const isRetryable = (failure: Retryable | EdgarNotFound): failure is Retryable =>
      !(failure instanceof EdgarNotFound) &&
      (failure.error.reason === "network" || failure.error.reason === "rate-limited" ||
        (failure.error.status !== undefined && failure.error.status >= 500))

    const get = (url: string): Effect.Effect<unknown, EdgarError | EdgarNotFound> =>
      attempt(url).pipe(
        Effect.retry({ schedule, while: isRetryable }),
        Effect.mapError((failure) => (failure instanceof EdgarNotFound ? failure : failure.error))
      )

    const source: EdgarSourceShape = {
      companyTickers: () =>
        get(`${www}/files/company_tickers.json`).pipe(
          Effect.catchTag(
            "EdgarNotFound",
            ({ url }) => Effect.fail(new EdgarError({ reason: "http-status", url, status: 404, detail: "404" }))
          )
        ),
      submissions: (cik) => get(`${data}/submissions/CIK${padCik(cik)}.json`),
      companyFacts: (cik) => get(`${data}/api/xbrl/companyfacts/CIK${padCik(cik)}.json`),
      documentUrl: (cik, accessionNumber, primaryDocument) =>
        `${www}/Archives/edgar/data/${cik}/${accessionNumber.replace(/-/g, "")}/${primaryDocument}`
    }
    return source
  })

/**
 * The EDGAR source from configuration, or none when `EDGAR_USER_AGENT` is unset (then nothing may be requested).
 */
export const edgarSourceFromConfig = (config: EdgarConfig) =>
  Option.match(config.userAgent, {
    onNone: () => Effect.succeed(Option.none<EdgarSourceShape>()),
    onSome: (userAgent) =>
      Effect.map(
        makeEdgarHttp({
          userAgent: Redacted.value(userAgent),
          baseUrl: Option.getOrUndefined(config.baseUrl),
          maxRequestsPerSecond: config.maxRequestsPerSecond,
          retryBaseDelay: Duration.millis(config.retryBaseDelayMs)
        }),
        Option.some
      )
  })

export const EdgarSourceLayer = (options: EdgarHttpOptions) => Layer.effect(EdgarSource, makeEdgarHttp(options))

/**
 * The `EdgarSource` port over HTTP when `EDGAR_USER_AGENT` is set, and nothing when it is not: the EDGAR reads look
 * for the port with `Effect.serviceOption` and answer `edgar_not_configured` without it. (So the type names no
 * output: it is optional by design.)
 */
export const EdgarSourceFromConfig = (config: EdgarConfig): Layer.Layer<never, never, HttpClient.HttpClient> =>
  Layer.unwrapEffect(
    Effect.map(
      edgarSourceFromConfig(config),
      (source): Layer.Layer<never> =>
        Option.match(source, { onNone: () => Layer.empty, onSome: (edgar) => Layer.succeed(EdgarSource, edgar) })
    )
  )

/** The EDGAR reads (in db) over the HTTP adapter, from `EDGAR_*` settings. */
export const EdgarReadsLive = (config: EdgarConfig) =>
  EdgarReads.layer({
    refreshInterval: Duration.hours(config.refreshHours),
    readWait: Duration.millis(config.readWaitMs)
  }).pipe(
    Layer.provide(EdgarSourceFromConfig(config)),
    Layer.provide(FetchHttpClient.layer)
  )
