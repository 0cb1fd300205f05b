import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { ApiKeys } from "./auth/ApiKeys.js"

/**
 * On first start with an empty database: an account `default` with one key, printed once so a newcomer can call
 * the API at once, at any `LOG_LEVEL`. Later starts (or a database that already has accounts) print nothing.
 */
export const FirstStartKey = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* AccountsRepo
    if ((yield* accounts.count) > 0) return
    const keys = yield* ApiKeys
    // The account and its key in one transaction: a crash between them would leave `default` without a key, and
    // later starts (accounts exist) would print none.
    const key = yield* sql.withTransaction(Effect.gen(function*() {
      const { created } = yield* accounts.findOrCreate("default")
      // Another instance starting at the same moment may have created it: only the creator makes the key.
      return created ? yield* keys.create("default") : undefined
    }))
    if (key === undefined) return
    // Whatever LOG_LEVEL says: a key shown only this once and hidden by the level would be lost.
    yield* Effect.logInfo(
      `First start: created account "default" with API key ${key.key} (id ${key.keyId}). ` +
        `It is shown only this once; create more with: npx scaledger keys create --account <name>`
    ).pipe(Logger.withMinimumLogLevel(LogLevel.Info))
  })
)
