import { HttpApiBuilder } from "@effect/platform"
import { MultiplierReads } from "@scaledger/db/reads/MultiplierReads"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { Effect } from "effect"
import { ChainId } from "../Config.js"
import { orUnavailable } from "./Unavailable.js"

export const MultiplierHandlers = HttpApiBuilder.group(
  ScaledgerApi,
  "multiplier",
  (handlers) =>
    Effect.gen(function*() {
      const multipliers = yield* MultiplierReads
      const chainId = yield* ChainId
      return handlers.handle("history", ({ urlParams }) => multipliers.history(chainId, urlParams).pipe(orUnavailable))
    })
)
