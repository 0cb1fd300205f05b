import { AlertsStore, alertView } from "@scaledger/db/alerts/AlertsStore"
import { ALERT_SEVERITIES } from "@scaledger/domain/alerts/Alert"
import { PageCursor } from "@scaledger/domain/Basic"
import { decodeCursor, encodeCursor, SealedCursors } from "@scaledger/domain/PageCursors"
import { Effect, Schema } from "effect"
import { tool } from "../McpTool.js"

/** The largest page a list answers (DECISIONS.md: max 500). */
const MAX_PAGE = 500

/**
 * `get_alerts`: the REST twin is `GET /v1/alerts?open=true&severity=&cursor=` (pages of up to 500); the cursors of
 * the two are one (sealed to the account and the list).
 */
export const GetAlerts = Effect.map(Effect.all([AlertsStore, SealedCursors]), ([store, cursors]) =>
  tool({
    name: "get_alerts",
    title: "Open alerts",
    description:
      "The account's open alerts, newest first: accrued income from a dividend step, a paused token or oracle, a " +
      "pending multiplier change, transfers awaiting review, stale exchange rates, degraded chain reads. Each has " +
      "kind, severity, title, detail, symbol and when it was raised. At most 500 a page; `nextCursor` (null at the " +
      "end) is the `cursor` of the next page.",
    input: Schema.Struct({
      severity: Schema.optional(
        Schema.Literal(...ALERT_SEVERITIES).annotations({
          description: "Only alerts of this severity: info, warning or critical."
        })
      ),
      cursor: Schema.optional(PageCursor)
    }),
    run: ({ cursor, severity }, account) =>
      Effect.gen(function*() {
        // Sealed as `GET /v1/alerts` seals its cursors: one cursor for both twins.
        const beforeSeq = yield* decodeCursor("alerts", yield* cursors.open(account.id, "alerts", cursor))
        const page = yield* store.list(account.id, { severity, kind: undefined, open: true }, {
          beforeSeq,
          limit: MAX_PAGE
        })
        const alerts = page.alerts.map(alertView)
        const last = page.alerts[page.alerts.length - 1]
        return {
          alerts,
          nextCursor: page.hasMore && last !== undefined
            ? cursors.seal(account.id, "alerts", encodeCursor("alerts", last.seq))
            : null,
          evidence: { alertIds: alerts.map((alert) => alert.id) }
        }
      })
  }))
