import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { monitorPass, passDue } from "@scaledger/workers/alerts/AlertMonitor"
import { Effect, TestClock } from "effect"
import { accountWatching, MonitorServices } from "../support/WatchedAccounts.js"

describe("stale ECB rates that stay stale while a newer (still old) day is loaded (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("are one stale-reference alert, its detail updated, not a second alert", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const watching = yield* accountWatching("stale-rates", "0x00000000000000000000000000000000000000d7", 4747)
        yield* sql`UPDATE account_settings SET reporting_currency = 'EUR' WHERE account_id = ${watching.id}`
        const day = (date: string) =>
          sql`INSERT INTO fx_rates (day, source, per_eur) VALUES (${date}, 'ecb-via-eurofxref', '{"USD": 1.1}'::jsonb)`
        // Monday 7 December 2026, 17:00 Berlin: rates of 20 November are far behind.
        yield* TestClock.setTime(Date.parse("2026-12-07T16:00:00Z"))
        yield* day("2026-11-20")
        expect(yield* monitorPass).toBe(1)
        // A load adds 27 November: still more than 2 TARGET business days behind.
        yield* day("2026-11-27")
        expect(yield* monitorPass).toBe(0)
        const alerts = yield* Effect.flatMap(AlertsStore, (store) =>
          store.list(watching.id, { kind: "stale-reference" }, { beforeSeq: undefined, limit: 10 }))
        expect(alerts.alerts.map((a) =>
          a.resolvedAt
        )).toEqual([null])
        expect(alerts.alerts[0]!.detail).toContain("2026-11-27")
        // Fresh rates resolve it.
        yield* day("2026-12-04")
        yield* monitorPass
        expect(
          yield* Effect.map(
            Effect.flatMap(AlertsStore, (store) => store.open(watching.id)),
            (open) => open.filter((a) => a.kind === "stale-reference")
          )
        ).toEqual([])
      }))
  })
})

describe("a non-USD account without wallets (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("is told its ECB rates are stale, like any non-USD account", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { account } = yield* (yield* AccountsRepo).findOrCreate("stale-no-wallets")
        yield* sql`INSERT INTO account_settings (account_id, reporting_currency) VALUES (${account.id}, 'EUR')
                   ON CONFLICT (account_id) DO UPDATE SET reporting_currency = 'EUR'`
        yield* sql`INSERT INTO fx_rates (day, source, per_eur) VALUES ('2026-11-20', 'ecb-via-eurofxref', '{"USD": 1.1}'::jsonb)`
        yield* TestClock.setTime(Date.parse("2026-12-07T16:00:00Z"))
        const due = yield* passDue({ mark: undefined, at: 0 })
        expect(due.mark!.accounts.has(account.id)).toBe(true)
        expect(yield* monitorPass).toBe(1)
        const open = yield* Effect.flatMap(AlertsStore, (store) => store.open(account.id))
        expect(open.map((a) => a.kind)).toEqual(["stale-reference"])
      }))
  })
})
