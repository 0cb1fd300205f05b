import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface SettingsRow {
  readonly country: "US" | "SG" | "DE"
  readonly reportingCurrency: string
}

export class SettingsRepo extends Effect.Service<SettingsRepo>()("@scaledger/db/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const get = Effect.fn("SettingsRepo.get")((accountId: string) =>
      Effect.map(
        sql<{ country: SettingsRow["country"]; reporting_currency: string }>`
          SELECT country, reporting_currency FROM account_settings WHERE account_id = ${accountId}`,
        (rows): SettingsRow => ({
          country: rows[0]?.country ?? "US",
          reportingCurrency: rows[0]?.reporting_currency ?? "USD"
        })
      )
    )

    const put = Effect.fn("SettingsRepo.put")((accountId: string, settings: SettingsRow) =>
      sql`
        INSERT INTO account_settings (account_id, country, reporting_currency, updated_at)
        VALUES (${accountId}, ${settings.country}, ${settings.reportingCurrency}, now())
        ON CONFLICT (account_id) DO UPDATE
          SET country = excluded.country, reporting_currency = excluded.reporting_currency, updated_at = now()`.pipe(
        Effect.asVoid
      )
    )

    return { get, put } as const
  })
}) {}
