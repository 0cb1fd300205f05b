import { AlertsStore, alertView } from "@scaledger/db/alerts/AlertsStore"
import { ALERT_SEVERITIES } from "@scaledger/domain/alerts/Alert"
import { Effect, Schema } from "effect"
import { tool } from "../McpTool.js"

/** The largest page a list answers (DECISIONS.md: max 500). */
const MAX_PAGE = 500

/** `get_alerts`: the REST twin is `GET /v1/alerts?open=true&severity=` (its first page of up to 500). */
export const GetAlerts = Effect.map(AlertsStore, (store) =>
  tool({
    name: "get_alerts",
    title: "Open alerts",
    description:
      "The account's open alerts, newest first: accrued income from a dividend step, a paused token or oracle, a " +
      "pending multiplier change, transfers awaiting review, stale exchange rates, degraded chain reads. Each has " +
      "kind, severity, title, detail, symbol and when it was raised. At most 500; `hasMore` says more are open " +
      "(narrow by severity, or page them with GET /v1/alerts).",
    input: Schema.Struct({
      severity: Schema.optional(
        Schema.Literal(...ALERT_SEVERITIES).annotations({
          description: "Only alerts of this severity: info, warning or critical."
        })
      )
    }),
    run: ({ severity }, account) =>
      Effect.map(
        store.list(account.id, { severity, kind: undefined, open: true }, { beforeSeq: undefined, limit: MAX_PAGE }),
        (page) => {
          const alerts = page.alerts.map(alertView)
          return { alerts, hasMore: page.hasMore, evidence: { alertIds: alerts.map((alert) => alert.id) } }
        }
      )
  }))
