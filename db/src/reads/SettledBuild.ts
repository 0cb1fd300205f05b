import { ReplayInProgress, ServiceUnavailable } from "@scaledger/domain/Errors"
import { Effect, Option } from "effect"
import type { BuildState, LedgerStore } from "../ledger/LedgerStore.js"

/**
 * The rule every read of an account's stored build follows (ledger and market reads, REST and MCP alike): 409
 * `replay_in_progress` while a replay (or the first build) is under way, 503 when the build failed. An account that
 * never asked for a build (no wallets yet) has an empty record: `None`.
 */
export const settledBuild = (store: LedgerStore, accountId: string) =>
  Effect.gen(function*() {
    const state = yield* store.state(accountId)
    if (Option.isSome(state)) yield* checkSettled(state.value)
    return state
  })

/** The rule of `settledBuild` on a build state already read. */
export const checkSettled = (state: BuildState): Effect.Effect<void, ReplayInProgress | ServiceUnavailable> => {
  if (state.builtVersion === 0 || state.replayVersion > state.builtVersion) {
    return Effect.fail(
      new ReplayInProgress({ message: "The account's history is being rebuilt; retry shortly.", retryAfterSeconds: 1 })
    )
  }
  if (state.status === "failed") {
    return Effect.fail(new ServiceUnavailable({ message: `The account's ledger could not be built: ${state.error}` }))
  }
  return Effect.void
}
