import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { SqlClient } from "@effect/sql"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { SettingsRepo, type SettingsRow } from "@scaledger/db/Settings"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { upperCaseAscii } from "@scaledger/domain/Basic"
import { isReportingCurrency, ReportingCurrencies, type ReportingCurrency } from "@scaledger/domain/Currency"
import { InvalidRequest, UnsupportedCurrency } from "@scaledger/domain/Errors"
import { Countries, type Country, lotScopeOf, type Settings } from "@scaledger/domain/Settings"
import { Effect } from "effect"
import { orUnavailable } from "./Unavailable.js"

const view = (row: SettingsRow): Settings => ({
  country: row.country,
  reportingCurrency: row.reportingCurrency as ReportingCurrency,
  lotMatching: "fifo",
  lotScope: lotScopeOf(row.country)
})

const validCountry = (input: string) =>
  (Countries as ReadonlyArray<string>).includes(upperCaseAscii(input))
    ? Effect.succeed(upperCaseAscii(input) as Country)
    : Effect.fail(
      new InvalidRequest({
        message: `Unsupported country ${input}.`,
        details: { field: "country", supported: Countries }
      })
    )

const validCurrency = (input: string) => {
  const code = upperCaseAscii(input)
  return isReportingCurrency(code)
    ? Effect.succeed(code)
    : Effect.fail(
      new UnsupportedCurrency({
        message: `${input} is not a reporting currency: use USD or one of the 20 ECB reference currencies.`,
        details: { supported: ReportingCurrencies }
      })
    )
}

export const SettingsHandlers = HttpApiBuilder.group(ScaledgerApi, "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* SettingsRepo
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("get", () =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          return view(yield* settings.get(account.id))
        }).pipe(orUnavailable))
      .handle("update", ({ payload }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const country = payload.country === undefined ? undefined : yield* validCountry(payload.country)
          const currency = payload.reportingCurrency === undefined
            ? undefined
            : yield* validCurrency(payload.reportingCurrency)
          // Read and written under the row's lock: a concurrent change of the other field is kept, not overwritten
          // with the value read before it committed.
          const next = yield* sql.withTransaction(Effect.gen(function*() {
            const current = yield* settings.getForUpdate(account.id)
            const next: SettingsRow = {
              country: country ?? current.country,
              reportingCurrency: currency ?? current.reportingCurrency
            }
            // Another country rule or currency rewrites every figure: the account's history is replayed.
            const changed = next.country !== current.country || next.reportingCurrency !== current.reportingCurrency
            yield* settings.put(account.id, next)
            if (changed) yield* requestReplay(account.id)
            return next
          }))
          return view(next)
        }).pipe(orUnavailable))
  }))
