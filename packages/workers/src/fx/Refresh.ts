import { FxStore } from "@scaledger/domain/fx/FxStore"
import { type FxStoreError } from "@scaledger/domain/fx/QuoteErrors"
import { FIRST_ECB_DAY, type FxSource } from "@scaledger/domain/fx/Schemas"
import { businessDaysBetween } from "@scaledger/domain/fx/TargetCalendar"
import { Cause, Clock, Duration, Effect, Exit, Option } from "effect"
import { FxProvider } from "./FxProvider.js"
import type { FxProviderError } from "./ProviderErrors.js"
import {
  berlinDateOf,
  DEFAULT_REFRESH_TIME,
  expectedNewestDay,
  nextRefreshAt,
  type TimeOfDay
} from "./RefreshSchedule.js"

export interface RefreshResult {
  readonly source: FxSource
  /** Days the provider returned and the store upserted. */
  readonly fetchedDays: number
  readonly newestBefore: Option.Option<string>
  readonly newestAfter: Option.Option<string>
  /** The newest day that should exist now (today after 16:00 Frankfurt time on a business day). */
  readonly expectedNewest: string
  readonly upToDate: boolean
}

/**
 * One refresh: asks the provider for what the store lacks and upserts it. An empty store gets the full history
 * (normally the bundled history is loaded first); a store one business day behind reads the daily file; otherwise
 * everything since the newest stored day (that day included, so a corrected publication replaces it).
 */
export const refreshOnce: Effect.Effect<RefreshResult, FxProviderError | FxStoreError, FxProvider | FxStore> = Effect
  .gen(function*() {
    const provider = yield* FxProvider
    const store = yield* FxStore
    const now = yield* Clock.currentTimeMillis
    const today = berlinDateOf(now)
    const newestBefore = yield* store.newestDay()
    const rates = yield* Option.match(newestBefore, {
      onNone: () => provider.since(FIRST_ECB_DAY),
      onSome: (newest) => businessDaysBetween(newest, today) <= 1 ? provider.latest() : provider.since(newest)
    })
    if (rates.days.length > 0) yield* store.upsert(rates.source, rates.days)
    const fetchedNewest = Option.fromNullable(rates.days[rates.days.length - 1]?.date)
    const newestAfter = Option.isNone(newestBefore)
      ? fetchedNewest
      : Option.isSome(fetchedNewest) && fetchedNewest.value > newestBefore.value
      ? fetchedNewest
      : newestBefore
    const expectedNewest = expectedNewestDay(now)
    const result: RefreshResult = {
      source: rates.source,
      fetchedDays: rates.days.length,
      newestBefore,
      newestAfter,
      expectedNewest,
      upToDate: Option.exists(newestAfter, (d) => d >= expectedNewest)
    }
    yield* Effect.logInfo("fx refresh").pipe(
      Effect.annotateLogs({
        source: result.source,
        fetchedDays: result.fetchedDays,
        newest: Option.getOrElse(newestAfter, () => "none"),
        expectedNewest,
        upToDate: result.upToDate
      })
    )
    return result
  })
  .pipe(Effect.withSpan("fx.refreshOnce"))

export interface DailyRefreshOptions {
  /** Frankfurt time of the daily run (default 16:15). */
  readonly at?: TimeOfDay
  /** Runs again this often while the day's rates are missing or the run failed (default 15 minutes)… */
  readonly retryEvery?: Duration.DurationInput
  /** …at most this many times (default 8, i.e. until about 18:15). */
  readonly retryTimes?: number
  /** Refresh once at start before waiting for the first scheduled run (default true). */
  readonly runAtStart?: boolean
  /** Called after each run (its last attempt) with the outcome, e.g. to record a `stale-reference` alert. */
  readonly onRun?: (outcome: Exit.Exit<RefreshResult, FxProviderError | FxStoreError>) => Effect.Effect<void>
}

const succeededUpToDate = (exit: Exit.Exit<RefreshResult, unknown>): boolean =>
  Exit.isSuccess(exit) && exit.value.upToDate

/**
 * The daily refresh fiber: never fails, runs until interrupted. Fork it (`Effect.forkScoped`) with `FxProvider` and
 * `FxStore` provided. Each run repeats every `retryEvery` while it fails or the day's publication is missing (at
 * most `retryTimes` more attempts), then waits for the next TARGET business day at `at` Frankfurt time.
 */
/** An expected failure (the provider unreachable, a bad answer) in one line; anything else in full. */
const failureText = (cause: Cause.Cause<{ readonly message: string }>): string =>
  Option.match(Cause.failureOption(cause), { onNone: () => Cause.pretty(cause), onSome: (error) => error.message })

export const runDailyRefresh = (
  options: DailyRefreshOptions = {}
): Effect.Effect<never, never, FxProvider | FxStore> => {
  const at = options.at ?? DEFAULT_REFRESH_TIME
  const retryEvery = options.retryEvery ?? Duration.minutes(15)
  const retryTimes = options.retryTimes ?? 8
  const onRun = options.onRun ?? (() => Effect.void)
  const run = Effect.gen(function*() {
    let exit = yield* Effect.exit(refreshOnce)
    for (let retry = 0; retry < retryTimes && !succeededUpToDate(exit); retry++) {
      if (Exit.isFailure(exit)) yield* Effect.logWarning(`fx refresh failed; retrying: ${failureText(exit.cause)}`)
      yield* Effect.sleep(retryEvery)
      exit = yield* Effect.exit(refreshOnce)
    }
    if (Exit.isFailure(exit)) yield* Effect.logError(`fx refresh failed after its retries: ${failureText(exit.cause)}`)
    yield* onRun(exit).pipe(Effect.catchAllCause((cause) => Effect.logError("fx refresh onRun failed", cause)))
  })
  const waitForNextRun = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => Effect.sleep(Duration.millis(nextRefreshAt(now, at) - now))
  )
  return Effect.gen(function*() {
    if (options.runAtStart ?? true) yield* run
    for (;;) {
      yield* waitForNextRun
      yield* run
    }
  }).pipe(Effect.withSpan("fx.runDailyRefresh"))
}
