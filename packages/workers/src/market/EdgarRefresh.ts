import { EdgarReads } from "@scaledger/db/market/EdgarReads"
import { Duration, Effect, Layer, Schedule } from "effect"
import { type EdgarConfig, EdgarReadsLive } from "./EdgarHttp.js"

/** How often the worker looks for cached EDGAR documents past the refresh interval (EDGAR_REFRESH_HOURS, 24). */
export const EDGAR_REFRESH_CHECK = Duration.hours(1)

/**
 * The daily EDGAR refresh: a fiber of this layer's scope that, every hour, fetches again each cached document
 * (ticker map, filings, dividend facts of the issuers someone asked about) older than the refresh interval. With
 * no `EDGAR_USER_AGENT` it does nothing at all (no request). A failed pass is logged and tried again next time.
 */
export const EdgarRefreshLayer = Layer.scopedDiscard(Effect.gen(function*() {
  const reads = yield* EdgarReads
  if (!reads.configured) {
    yield* Effect.logInfo("edgar: EDGAR_USER_AGENT is not set: filings and dividends answer edgar_not_configured")
    return
  }
  const pass = reads.refreshDue.pipe(
    Effect.tap((n) => (n > 0 ? Effect.logInfo(`edgar: refreshed ${n} cached document(s)`) : Effect.void)),
    Effect.catchAllCause((cause) => Effect.logWarning("edgar: refresh pass failed", cause))
  )
  yield* pass.pipe(Effect.repeat(Schedule.spaced(EDGAR_REFRESH_CHECK)), Effect.forkScoped)
}))

/** The refresh over the HTTP adapter, from the workers' `EDGAR_*` settings record. */
export const EdgarRefreshWith = (config: EdgarConfig) => EdgarRefreshLayer.pipe(Layer.provide(EdgarReadsLive(config)))
