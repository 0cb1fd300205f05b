import { HttpApiBuilder } from "@effect/platform"
import { EdgarReads } from "@scaledger/db/market/EdgarReads"
import { PortfolioSummaryReads } from "@scaledger/db/market/PortfolioSummary"
import { SaleEstimator } from "@scaledger/db/market/SaleEstimator"
import { WeekendExposureReads } from "@scaledger/db/market/WeekendExposure"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { Effect, Layer } from "effect"
import { MarketReadsLive } from "../MarketReadsLive.js"
import { orUnavailable } from "./Unavailable.js"

/** The market reads: thin, each calls one service (the same one the MCP tools call). */
export const MarketHandlersWith = HttpApiBuilder.group(ScaledgerApi, "market", (handlers) =>
  Effect.gen(function*() {
    const edgar = yield* EdgarReads
    return handlers
      .handle("filings", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* edgar.filings(account.id, urlParams)
        }).pipe(orUnavailable))
      .handle("dividends", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* edgar.dividends(account.id, urlParams.symbol)
        }).pipe(orUnavailable))
  }))

export const EstimatesHandlersWith = HttpApiBuilder.group(
  ScaledgerApi,
  "estimates",
  (handlers) =>
    Effect.gen(function*() {
      const estimator = yield* SaleEstimator
      return handlers.handle("sale", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* estimator.estimate(account.id, urlParams)
        }).pipe(orUnavailable))
    })
)

export const ExposureHandlersWith = HttpApiBuilder.group(
  ScaledgerApi,
  "exposure",
  (handlers) =>
    Effect.gen(function*() {
      const reads = yield* WeekendExposureReads
      return handlers.handle("weekend", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* reads.exposure(account.id, urlParams)
        }).pipe(orUnavailable))
    })
)

export const SummaryHandlersWith = HttpApiBuilder.group(ScaledgerApi, "summary", (handlers) =>
  Effect.gen(function*() {
    const reads = yield* PortfolioSummaryReads
    return handlers.handle("summary", () =>
      Effect.gen(function*() {
        const account = yield* CurrentAccount
        return yield* reads.summary(account.id)
      }).pipe(orUnavailable))
  }))

/** The market groups with their services built from configuration (`EDGAR_*`, `CHAIN_ID`). */
export const MarketHandlers = Layer.mergeAll(
  MarketHandlersWith,
  EstimatesHandlersWith,
  ExposureHandlersWith,
  SummaryHandlersWith
).pipe(Layer.provide(MarketReadsLive))
