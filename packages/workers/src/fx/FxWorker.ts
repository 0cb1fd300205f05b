import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import type { SqlError } from "@effect/sql/SqlError"
import { FxRates } from "@scaledger/db/FxRates"
import { FxStore } from "@scaledger/domain/fx/FxStore"
import type { FxStoreError } from "@scaledger/domain/fx/QuoteErrors"
import { Cause, Clock, Config, type ConfigError, Context, Effect, Exit, Layer, Option } from "effect"
import { bundledHistoryPath, loadBundledHistory } from "./BundledHistory.js"
import { FxProvider, FxProviderConfig, makeFxProviderWith } from "./FxProvider.js"
import type { FxParseError, FxProviderError } from "./ProviderErrors.js"
import { type DailyRefreshOptions, type RefreshResult, runDailyRefresh } from "./Refresh.js"

/** `FX_REFRESH` (default on): `off` keeps the rates as loaded, with no network access (offline use, tests). */
export const FxWorkerConfig = Config.all({
  refresh: Config.boolean("FX_REFRESH").pipe(Config.withDefault(true)),
  provider: FxProviderConfig
})
export type FxWorkerConfig = Config.Config.Success<typeof FxWorkerConfig>

/** The FX worker's settings as a plain record (`WorkersLive.layer` hands it over; `Live` reads them). */
export class FxWorkerSettings extends Context.Tag("@scaledger/workers/fx/FxWorkerSettings")<
  FxWorkerSettings,
  FxWorkerConfig
>() {
  static readonly Live = Layer.effect(FxWorkerSettings, FxWorkerConfig)
}

export interface BundledHistoryLoad {
  /** Days in the bundled file. */
  readonly bundledDays: number
  /** Days it added to the store (0 when the store already had them all). */
  readonly inserted: number
  /** Wall-clock milliseconds, parsing included. */
  readonly millis: number
}

const wallClockMillis = Effect.sync(() => performance.now())
const millisSince = (started: number) => Effect.map(wallClockMillis, (now) => Math.round(now - started))

/**
 * Loads the bundled ECB history into the store when the store lacks any of its days (an empty store, or one older
 * than the file's newest day). Days already stored are kept: a provider may have corrected them since.
 */
export const ensureBundledHistory = (
  path: string = bundledHistoryPath
): Effect.Effect<BundledHistoryLoad, FxParseError | SqlError, FxRates> =>
  Effect.gen(function*() {
    const rates = yield* FxRates
    const started = yield* wallClockMillis
    const { days, source } = yield* loadBundledHistory(path)
    const first = days[0]?.date ?? ""
    const last = days[days.length - 1]?.date ?? ""
    if (days.length === 0 || (yield* rates.countBetween(first, last)) >= days.length) {
      return { bundledDays: days.length, inserted: 0, millis: yield* millisSince(started) }
    }
    const inserted = yield* rates.insertMissing(source, days)
    yield* rates.recordHistoryLoad(new Date(yield* Clock.currentTimeMillis), inserted)
    const millis = yield* millisSince(started)
    yield* Effect.logInfo(`fx: loaded ${inserted} days of the bundled ECB history (${first} … ${last}) in ${millis} ms`)
    return { bundledDays: days.length, inserted, millis }
  }).pipe(Effect.withSpan("fx.ensureBundledHistory"))

const describeOutcome = (exit: Exit.Exit<RefreshResult, FxProviderError | FxStoreError>) =>
  Exit.isSuccess(exit)
    ? { ok: true as const, source: exit.value.source }
    : {
      ok: false as const,
      error: Option.match(Cause.failureOption(exit.cause), {
        onNone: () => Cause.pretty(exit.cause),
        onSome: (error) => error.message
      })
    }

/** Writes a refresh's outcome to `fx_status` and warns while the reference rates are stale. */
const recordRun = (exit: Exit.Exit<RefreshResult, FxProviderError | FxStoreError>) =>
  Effect.gen(function*() {
    const rates = yield* FxRates
    yield* rates.recordRefresh(new Date(yield* Clock.currentTimeMillis), describeOutcome(exit))
    yield* warnIfStale
  }).pipe(Effect.catchAll((error) => Effect.logError("fx: could not record the refresh outcome", error)))

const warnIfStale = Effect.gen(function*() {
  const status = yield* (yield* FxRates).status()
  if (status.stale) {
    yield* Effect.logWarning(
      `fx: the reference rates are stale: newest ECB day ${status.newestDay ?? "none"}, ` +
        `${status.businessDaysBehind ?? "all"} TARGET business days behind ${status.today}`
    )
  }
})

export interface FxWorkerOptions {
  /** The bundled history file (default: the one shipped in `assets/ecb`). */
  readonly bundledPath?: string
  /** Passed to `runDailyRefresh`; `onRun` is called after the outcome is recorded. */
  readonly refresh?: DailyRefreshOptions
}

/**
 * The FX worker: at start, loads the bundled history when the store lacks it; then, unless `FX_REFRESH=off`, forks
 * the daily refresh against `FX_PROVIDER` / `FX_BASE_URL` as a fiber of this layer's scope (released on shutdown).
 */
export const makeFxWorker = (
  options: FxWorkerOptions = {}
): Layer.Layer<
  never,
  ConfigError.ConfigError | FxParseError | SqlError,
  FxRates | FxWorkerSettings | HttpClient.HttpClient
> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const settings = yield* FxWorkerSettings
    const provider = settings.refresh ? Option.some(yield* makeFxProviderWith(settings.provider)) : Option.none()
    const rates = yield* FxRates
    yield* ensureBundledHistory(options.bundledPath)
    if (Option.isNone(provider)) {
      yield* Effect.logInfo("fx: FX_REFRESH=off: no network refresh; rates stay as stored")
      return yield* Effect.catchAll(warnIfStale, (error) => Effect.logError("fx: could not read the status", error))
    }
    const onRun = options.refresh?.onRun
    yield* runDailyRefresh({
      ...options.refresh,
      onRun: (exit) =>
        Effect.zipRight(
          Effect.provideService(recordRun(exit), FxRates, rates),
          onRun === undefined ? Effect.void : onRun(exit)
        )
    }).pipe(
      Effect.provideService(FxProvider, provider.value),
      Effect.provideService(FxStore, rates.store),
      Effect.forkScoped
    )
  }))

/** The FX worker with the database repository and a fetch-based HTTP client; needs only the `SqlClient`. */
export const FxWorkerLayer = makeFxWorker().pipe(Layer.provide([FxRates.Default, FetchHttpClient.layer]))

/** `FxWorkerLayer` with its settings read from the environment (tests, embedders). */
export const FxWorkerLive = FxWorkerLayer.pipe(Layer.provide(FxWorkerSettings.Live))
