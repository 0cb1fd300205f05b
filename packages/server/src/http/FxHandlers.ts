import { HttpApiBuilder } from "@effect/platform"
import { FxReads } from "@scaledger/db/reads/FxReads"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { Effect } from "effect"
import { orUnavailable } from "./Unavailable.js"

export const FxHandlers = HttpApiBuilder.group(ScaledgerApi, "fx", (handlers) =>
  Effect.gen(function*() {
    const fx = yield* FxReads
    return handlers.handle("quote", ({ path }) => fx.quote(path.currency, path.date).pipe(orUnavailable))
  }))
