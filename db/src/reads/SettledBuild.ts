import { ReplayInProgress, ServiceUnavailable } from "@scaledger/domain"
import { Effect, Option } from "effect"
import type { LedgerStore } from "../ledger/LedgerStore.js"

/**
 * The rule every read of an account's stored build follows (ledger and market reads, REST and MCP alike): 409
 * `replay_in_progress` while a replay (or the first build) is under way, 503 when the build failed. An account that
 * never asked for a build (no wallets yet) has an empty record: `None`.
 */
export const settledBuild = (store: LedgerStore, accountId: string) =>
  Effect.gen(function*() {
    const state = yield* store.state(accountId)
    if (Option.isNone(state)) return state
    if (state.value.builtVersion === 0 || state.value.replayVersion > state.value.builtVersion) {
      return yield* new ReplayInProgress({
        message: "The account's history is being rebuilt; retry shortly.",
        retryAfterSeconds: 1
      })
    }
    if (state.value.status === "failed") {
      return yield* new ServiceUnavailable({ message: `The account's ledger could not be built: ${state.value.error}` })
    }
    return state
  })
