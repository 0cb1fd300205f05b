import { HttpApiBuilder } from "@effect/platform"
import { CurrentAccount, ScaledgerApi } from "@scaledger/domain"
import { EdgarReads } from "@scaledger/workers/market/EdgarReads"
import { Effect, Layer } from "effect"
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

/** The market group with its services built from configuration (`EDGAR_USER_AGENT`, `EDGAR_BASE_URL`). */
export const MarketHandlers = MarketHandlersWith.pipe(Layer.provide(EdgarReads.Live))
