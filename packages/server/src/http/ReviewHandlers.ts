import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Review } from "@scaledger/db/classification/Review"
import { CounterpartyReads } from "@scaledger/db/reads/CounterpartyReads"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { Effect, Layer } from "effect"
import { ChainId } from "../Config.js"
import { SealedCursorsLive } from "./PageCursorSeal.js"
import { orUnavailable } from "./Unavailable.js"

/** PATCH /v1/events/{id} and GET /v1/counterparties/unlabeled. */
export const ReviewHandlers = HttpApiBuilder.group(ScaledgerApi, "review", (handlers) =>
  Effect.gen(function*() {
    const review = yield* Review
    const counterparties = yield* CounterpartyReads
    const chainId = yield* ChainId
    return handlers
      .handle("resolve", ({ path, payload }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* review.resolve(account.id, chainId, path.id, payload)
        }).pipe(orUnavailable))
      .handle("unlabeled", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return yield* counterparties.unlabeled(account.id, urlParams)
        }).pipe(orUnavailable))
  })).pipe(
    Layer.provide(Layer.mergeAll(Review.Default, CounterpartyReads.Default.pipe(Layer.provide(SealedCursorsLive))))
  )
