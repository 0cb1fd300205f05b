import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { addDays, daysBetween, utcDateOf } from "@scaledger/domain/CalendarDates"
import { optionalHttpUrl } from "@scaledger/domain/ConfigValues"
import type { DayRates, FxSource, ProviderRates } from "@scaledger/domain/fx/Schemas"
import { businessDaysBetween, isTargetBusinessDay } from "@scaledger/domain/fx/TargetCalendar"
import { Clock, Config, Context, Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { parseEcbCsv } from "./EcbCsv.js"
import { parseEcbXml } from "./EcbXml.js"
import { unzipEcbHistory } from "./EcbZip.js"
import { parseFrankfurterDay, parseFrankfurterRange, parseJson } from "./FrankfurterJson.js"
import { type FxParseError, FxProviderError } from "./ProviderErrors.js"

/** Fetches ECB reference-rate publication days from one place. Days come back oldest first, as published. */
export interface FxProviderShape {
  readonly source: FxSource
  /** The newest publication day the provider has. */
  readonly latest: () => Effect.Effect<ProviderRates, FxProviderError>
  /** Every publication day on or after `date` (`YYYY-MM-DD`), up to the newest. */
  readonly since: (date: string) => Effect.Effect<ProviderRates, FxProviderError>
}

export class FxProvider extends Context.Tag("@scaledger/workers/fx/FxProvider")<FxProvider, FxProviderShape>() {}

export const ECB_DEFAULT_BASE_URL = "https://www.ecb.europa.eu/stats/eurofxref"
export const FRANKFURTER_DEFAULT_BASE_URL = "https://api.frankfurter.dev"

export interface HttpPolicy {
  /** Per attempt, headers and body included. */
  readonly timeout: Duration.DurationInput
  /** Further attempts after the first, on 5xx, 429, network errors and time-outs. */
  readonly retries: number
  /** First back-off delay; doubles each retry, ±20 % jitter. */
  readonly retryBaseDelay: Duration.DurationInput
  /** A 429's Retry-After is honoured up to this long. */
  readonly maxRetryAfter: Duration.DurationInput
}

export const defaultHttpPolicy: HttpPolicy = {
  timeout: Duration.seconds(30),
  retries: 4,
  retryBaseDelay: Duration.seconds(1),
  maxRetryAfter: Duration.minutes(2)
}

export interface ProviderOptions {
  readonly baseUrl: string
  readonly http?: Partial<HttpPolicy>
}

export interface EcbProviderOptions extends ProviderOptions {
  /** Full history from `eurofxref-hist.zip` (CSV, about 0.6 MB) or `eurofxref-hist.xml` (about 9 MB). */
  readonly fullHistory?: "zip" | "xml"
}

/** `since` asks for the 90-day file when the gap to today is at most this many calendar days. */
export const ECB_90_DAY_WINDOW = 90
/** Frankfurter range requests are cut into windows of at most this many days (see README: no sampled data). */
export const FRANKFURTER_WINDOW_DAYS = 90

const USER_AGENT = "scaledger-fx/0.1"

const trimSlash = (url: string): string => url.replace(/\/+$/, "")

const retryAfterMillis = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** GETs with a time-out per attempt and retries with back-off; turns every failure into an `FxProviderError`. */
const makeFetcher = (source: FxSource, client: HttpClient.HttpClient, policy: HttpPolicy) => {
  const schedule = Schedule.exponential(policy.retryBaseDelay, 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(policy.retries)),
    Schedule.intersect(Schedule.identity<FxProviderError>()),
    Schedule.modifyDelay(([, error], delay) =>
      error.retryAfterMs === undefined
        ? delay
        : Duration.max(delay, Duration.min(Duration.millis(error.retryAfterMs), policy.maxRetryAfter))
    )
  )

  const fail = (
    url: string,
    reason: FxProviderError["reason"],
    detail: string,
    extra: { readonly status?: number; readonly retryAfterMs?: number; readonly cause?: unknown } = {}
  ) => new FxProviderError({ source, reason, url, detail, ...extra })

  const attempt = <A>(
    url: string,
    read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, unknown>,
    acceptStatus: (status: number) => boolean
  ): Effect.Effect<{ readonly status: number; readonly body: A }, FxProviderError> =>
    Effect.gen(function*() {
      const response = yield* client.get(url, { headers: { "user-agent": USER_AGENT } }).pipe(
        Effect.mapError((e) => fail(url, "network", e.message, { cause: e }))
      )
      if (!acceptStatus(response.status)) {
        const snippet = yield* response.text.pipe(
          Effect.map((t) => t.slice(0, 200)),
          Effect.orElseSucceed(() => "")
        )
        if (response.status === 429) {
          const now = yield* Clock.currentTimeMillis
          const retryAfterMs = retryAfterMillis(response.headers["retry-after"], now)
          return yield* Effect.fail(
            fail(url, "rate-limited", `429 ${snippet}`.trim(), {
              status: 429,
              ...(retryAfterMs === undefined ? {} : { retryAfterMs })
            })
          )
        }
        return yield* Effect.fail(
          fail(url, "http-status", `${response.status} ${snippet}`.trim(), { status: response.status })
        )
      }
      const body = yield* read(response).pipe(
        Effect.mapError((e) => fail(url, "network", `reading the body: ${String(e)}`, { cause: e }))
      )
      return { status: response.status, body }
    }).pipe(
      Effect.timeoutFail({
        duration: policy.timeout,
        onTimeout: () => fail(url, "timeout", `no complete answer within ${Duration.format(policy.timeout)}`)
      })
    )

  const get = <A>(
    url: string,
    read: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, unknown>,
    acceptStatus: (status: number) => boolean = (s) => s >= 200 && s < 300
  ) =>
    attempt(url, read, acceptStatus).pipe(
      Effect.retry({ schedule, while: (e) => e.transient }),
      Effect.withSpan("FxProvider.get", { attributes: { source, url } })
    )

  const malformed = (url: string) => (e: FxParseError) => fail(url, "malformed", e.message, { cause: e })

  const parsed = <A>(url: string, result: Either.Either<A, FxParseError>): Effect.Effect<A, FxProviderError> =>
    Either.match(result, { onLeft: (e) => Effect.fail(malformed(url)(e)), onRight: Effect.succeed })

  return {
    text: (url: string) => get(url, (r) => r.text).pipe(Effect.map((r) => r.body)),
    bytes: (url: string) => get(url, (r) => r.arrayBuffer).pipe(Effect.map((r) => new Uint8Array(r.body))),
    /** A JSON body; a status listed in `accept` is returned with its body instead of failing. */
    json: (url: string, accept: ReadonlyArray<number> = []) =>
      get(url, (r) => r.text, (s) => (s >= 200 && s < 300) || accept.includes(s)).pipe(
        Effect.flatMap(({ body, status }) =>
          status >= 200 && status < 300
            ? Effect.map(parsed(url, parseJson(body)), (json) => ({ status, json }))
            : Effect.succeed({ status, json: Either.getOrUndefined(parseJson(body)) })
        )
      ),
    parsed
  }
}

const resolvePolicy = (http: Partial<HttpPolicy> | undefined): HttpPolicy => ({ ...defaultHttpPolicy, ...http })

const todayUtc = Effect.map(Clock.currentTimeMillis, utcDateOf)

const onOrAfter = (days: ReadonlyArray<DayRates>, date: string): Array<DayRates> => days.filter((d) => d.date >= date)

/**
 * The ECB's own files under `baseUrl` (default `https://www.ecb.europa.eu/stats/eurofxref`): `latest` reads
 * `eurofxref-daily.xml`; `since(date)` reads `eurofxref-hist-90d.xml` when `date` is at most 90 days ago and that
 * file reaches back to it (no TARGET business day missing between `date` and its oldest day), else the full history.
 */
export const makeEcbProvider = (
  options: EcbProviderOptions
): Effect.Effect<FxProviderShape, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client): FxProviderShape => {
    const source: FxSource = "ecb-via-eurofxref"
    const base = trimSlash(options.baseUrl)
    const fetcher = makeFetcher(source, client, resolvePolicy(options.http))

    const xml = (file: string) => {
      const url = `${base}/${file}`
      return Effect.flatMap(fetcher.text(url), (text) => fetcher.parsed(url, parseEcbXml(text)))
    }

    const fullHistory = (): Effect.Effect<Array<DayRates>, FxProviderError> => {
      if (options.fullHistory === "xml") return xml("eurofxref-hist.xml")
      const url = `${base}/eurofxref-hist.zip`
      return Effect.flatMap(
        fetcher.bytes(url),
        (bytes) => fetcher.parsed(url, Either.flatMap(unzipEcbHistory(bytes), parseEcbCsv))
      )
    }

    const reachesBack = (days: ReadonlyArray<DayRates>, date: string): boolean => {
      const oldest = days[0]?.date
      if (oldest === undefined) return false
      if (oldest <= date) return true
      return (isTargetBusinessDay(date) ? 1 : 0) + businessDaysBetween(date, addDays(oldest, -1)) === 0
    }

    return {
      source,
      latest: () =>
        xml("eurofxref-daily.xml").pipe(
          Effect.map((days) => ({ source, days })),
          Effect.withSpan("FxProvider.latest", { attributes: { source } })
        ),
      since: (date) =>
        Effect.gen(function*() {
          const today = yield* todayUtc
          if (daysBetween(date, today) <= ECB_90_DAY_WINDOW) {
            const recent = yield* xml("eurofxref-hist-90d.xml")
            if (reachesBack(recent, date)) return { source, days: onOrAfter(recent, date) }
            yield* Effect.logInfo(`fx: the 90-day file does not reach back to ${date}; reading the full history`)
          }
          return { source, days: onOrAfter(yield* fullHistory(), date) }
        }).pipe(Effect.withSpan("FxProvider.since", { attributes: { source, date } }))
    }
  })

/**
 * Frankfurter (an ECB mirror) under `baseUrl` (default `https://api.frankfurter.dev`), always with `base=EUR` so the
 * numbers are the ECB's own: `latest` reads `/v1/latest`; `since(date)` reads `/v1/{start}..{end}` in windows of at
 * most 90 days (a 404 on a window means no publication in it).
 */
export const makeFrankfurterProvider = (
  options: ProviderOptions
): Effect.Effect<FxProviderShape, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client): FxProviderShape => {
    const source: FxSource = "ecb-via-frankfurter"
    const base = trimSlash(options.baseUrl)
    const fetcher = makeFetcher(source, client, resolvePolicy(options.http))

    // Frankfurter answers 404 {"message":"not found"} for a window without publications; any other 404 (a wrong
    // FX_BASE_URL, say) is an error, not an empty result.
    const range = (start: string, end: string) => {
      const url = `${base}/v1/${start}..${end}?base=EUR`
      return Effect.flatMap(fetcher.json(url, [404]), ({ json, status }) => {
        if (status !== 404) return fetcher.parsed(url, parseFrankfurterRange(json))
        const notFound = typeof json === "object" && json !== null &&
          (json as { message?: unknown }).message === "not found"
        return notFound
          ? Effect.succeed<Array<DayRates>>([])
          : Effect.fail(new FxProviderError({ source, reason: "http-status", url, status, detail: "404" }))
      })
    }

    return {
      source,
      latest: () => {
        const url = `${base}/v1/latest?base=EUR`
        return fetcher.json(url).pipe(
          Effect.flatMap(({ json }) => fetcher.parsed(url, parseFrankfurterDay(json))),
          Effect.map((day) => ({ source, days: [day] })),
          Effect.withSpan("FxProvider.latest", { attributes: { source } })
        )
      },
      since: (date) =>
        Effect.gen(function*() {
          const today = yield* todayUtc
          const byDate = new Map<string, DayRates>()
          for (let start = date; start <= today; start = addDays(start, FRANKFURTER_WINDOW_DAYS)) {
            const endCandidate = addDays(start, FRANKFURTER_WINDOW_DAYS - 1)
            const end = endCandidate < today ? endCandidate : today
            for (const day of yield* range(start, end)) byDate.set(day.date, day)
          }
          const days = onOrAfter([...byDate.values()], date).sort((a, b) => (a.date < b.date ? -1 : 1))
          return { source, days }
        }).pipe(Effect.withSpan("FxProvider.since", { attributes: { source, date } }))
    }
  })

/** `FX_PROVIDER` (`ecb` | `frankfurter`, default `ecb`) and `FX_BASE_URL` (default: the provider's public URL). */
export const FxProviderConfig = Config.all({
  provider: Config.literal("ecb", "frankfurter")("FX_PROVIDER").pipe(Config.withDefault("ecb" as const)),
  baseUrl: optionalHttpUrl("FX_BASE_URL")
})

export type FxProviderConfig = Config.Config.Success<typeof FxProviderConfig>

/** The provider a `FxProviderConfig` record names. Needs an `HttpClient`. */
export const makeFxProviderWith = ({ baseUrl, provider }: FxProviderConfig, http?: Partial<HttpPolicy>) =>
  Effect.gen(function*() {
    const options = (fallback: string) => ({
      baseUrl: Option.getOrElse(baseUrl, () => fallback),
      ...(http === undefined ? {} : { http })
    })
    return provider === "ecb"
      ? yield* makeEcbProvider(options(ECB_DEFAULT_BASE_URL))
      : yield* makeFrankfurterProvider(options(FRANKFURTER_DEFAULT_BASE_URL))
  })

export const makeFxProviderFromConfig = (http?: Partial<HttpPolicy>) =>
  Effect.flatMap(FxProviderConfig, (config) => makeFxProviderWith(config, http))

/** The provider chosen by `FX_PROVIDER` / `FX_BASE_URL`. Needs an `HttpClient` (e.g. `NodeHttpClient.layerUndici`). */
export const FxProviderLive = Layer.effect(FxProvider, makeFxProviderFromConfig())
