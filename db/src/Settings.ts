import { SqlClient, SqlSchema } from "@effect/sql"
import { ReportingCurrency } from "@scaledger/domain/Currency"
import { Country } from "@scaledger/domain/Settings"
import { Effect, Option, Schema } from "effect"
import { orDieOnParse } from "./Rows.js"

export interface SettingsRow {
  readonly country: Country
  readonly reportingCurrency: ReportingCurrency
}

/** A stored row, checked against the domain's schemas on the way out (a row that breaks them is a defect). */
const StoredSettings = Schema.Struct({ country: Country, reporting_currency: ReportingCurrency })

export class SettingsRepo extends Effect.Service<SettingsRepo>()("@scaledger/db/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findStored = SqlSchema.findOne({
      Request: Schema.String,
      Result: StoredSettings,
      execute: (accountId) =>
        sql`SELECT country, reporting_currency FROM account_settings WHERE account_id = ${accountId}`
    })

    /** The stored row's settings, or the defaults (US, USD) when the account has none stored. */
    const settingsOf = Option.match({
      onNone: (): SettingsRow => ({ country: "US", reportingCurrency: "USD" }),
      onSome: (row: typeof StoredSettings.Type): SettingsRow => ({
        country: row.country,
        reportingCurrency: row.reporting_currency
      })
    })

    const get = Effect.fn("SettingsRepo.get")((accountId: string) =>
      findStored(accountId).pipe(
        Effect.map(settingsOf),
        orDieOnParse
      )
    )

    const findLocked = SqlSchema.findOne({
      Request: Schema.String,
      Result: StoredSettings,
      execute: (accountId) =>
        sql`SELECT country, reporting_currency FROM account_settings WHERE account_id = ${accountId} FOR UPDATE`
    })

    /**
     * The settings, the row locked until the caller's transaction ends: a change read-modify-written under it
     * cannot be lost to another made meanwhile (each request changes only the fields it names).
     */
    const getForUpdate = Effect.fn("SettingsRepo.getForUpdate")((accountId: string) =>
      findLocked(accountId).pipe(
        Effect.map(settingsOf),
        orDieOnParse
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

    return { get, getForUpdate, put } as const
  })
}) {}
