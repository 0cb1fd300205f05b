import { AccountsRepo } from "@scaledger/db/Accounts"
import { Effect, Layer } from "effect"
import { ApiKeys } from "./auth/ApiKeys.js"

/**
 * On first start with an empty database: an account `default` with one key, printed once so a newcomer can call
 * the API at once. Later starts (or a database that already has accounts) print nothing.
 */
export const FirstStartKey = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* AccountsRepo
    if ((yield* accounts.count) > 0) return
    const keys = yield* ApiKeys
    const { created } = yield* accounts.findOrCreate("default")
    // Another instance starting at the same moment may have created it: only the creator makes the key.
    if (!created) return
    const key = yield* keys.create("default")
    yield* Effect.logInfo(
      `First start: created account "default" with API key ${key.key} (id ${key.keyId}). ` +
        `It is shown only this once; create more with: npx scaledger keys create --account <name>`
    )
  })
)
