import type { AlertCause } from "@scaledger/db/alerts/AlertsStore"

let causeSeq = 0

/** A token-paused alert cause with a key of its own (or `overrides`' key), as the monitor would raise it. */
export const cause = (overrides: Partial<AlertCause> = {}): AlertCause => ({
  key: `test:${++causeSeq}`,
  kind: "token-paused",
  severity: "critical",
  title: "AAPL: token paused",
  detail: "The issuer paused AAPL.",
  symbol: "AAPL",
  at: new Date(Date.UTC(2026, 10, 20, 15, 0, 0)),
  oneShot: false,
  ...overrides
})
