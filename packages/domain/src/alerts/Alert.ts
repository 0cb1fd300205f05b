import { Schema } from "effect"
import { TextAccepted } from "../Basic.js"
import { PageParams } from "../Common.js"

/** The seven alert kinds: one vocabulary for the portfolio, `GET /v1/alerts`, webhooks and MCP. */
export const ALERT_KINDS = [
  "accrued-income",
  "token-paused",
  "oracle-paused",
  "pending-multiplier",
  "unlabeled-transfers",
  "stale-reference",
  "degraded-read"
] as const

export const AlertKind = Schema.Literal(...ALERT_KINDS).annotations({
  identifier: "AlertKind",
  description: "One of the seven alert kinds."
})
export type AlertKind = typeof AlertKind.Type

export const ALERT_SEVERITIES = ["info", "warning", "critical"] as const
export const AlertSeverity = Schema.Literal(...ALERT_SEVERITIES).annotations({ identifier: "AlertSeverity" })
export type AlertSeverity = typeof AlertSeverity.Type

/** The severity each kind is raised with (DECISIONS.md "Alerts"). */
export const SEVERITY_OF: Readonly<Record<AlertKind, AlertSeverity>> = {
  "accrued-income": "info",
  "token-paused": "critical",
  "oracle-paused": "warning",
  "pending-multiplier": "info",
  "unlabeled-transfers": "warning",
  "stale-reference": "warning",
  "degraded-read": "warning"
}

export const isAlertKind = (value: string): value is AlertKind => (ALERT_KINDS as ReadonlyArray<string>).includes(value)

/** An alert as the store keeps it and every reader shows it. `at` and `resolvedAt` are Unix milliseconds. */
export const Alert = Schema.Struct({
  id: Schema.String,
  kind: AlertKind,
  severity: AlertSeverity,
  title: Schema.String,
  detail: Schema.String,
  symbol: Schema.String.annotations({
    description: "The token symbol the alert is about; the empty string for account-wide alerts."
  }),
  at: Schema.Int.annotations({ description: "When the alert was raised (its cause), Unix milliseconds." }),
  resolvedAt: Schema.NullOr(Schema.Int).annotations({
    description: "When its cause ended, Unix milliseconds; null while open."
  })
}).annotations({ identifier: "Alert" })
export type Alert = typeof Alert.Type

export const AlertList = Schema.Struct({
  alerts: Schema.Array(Alert),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AlertList" })

export const AlertListParams = Schema.Struct({
  severity: Schema.optional(TextAccepted("`info`, `warning` or `critical`.", { enum: ALERT_SEVERITIES })),
  kind: Schema.optional(TextAccepted("One of the seven alert kinds.", { enum: ALERT_KINDS })),
  open: Schema.optional(
    Schema.Literal("true", "false").annotations({
      description: "`true`: only open alerts; `false`: only resolved ones; absent: both."
    })
  ),
  ...PageParams
})

/** The `data` of a webhook delivery body (SPEC "Alert (webhook payload data)"). */
export const AlertPayloadData = Schema.Struct({
  kind: AlertKind,
  severity: AlertSeverity,
  title: Schema.String,
  detail: Schema.String,
  symbol: Schema.String,
  at: Schema.Int
})

/** The body of every webhook delivery. `id` is stable per alert per endpoint across retries. */
export const WebhookDeliveryBody = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("alert"),
  createdAt: Schema.Int,
  data: AlertPayloadData
}).annotations({ identifier: "WebhookDeliveryBody" })
export type WebhookDeliveryBody = typeof WebhookDeliveryBody.Type
