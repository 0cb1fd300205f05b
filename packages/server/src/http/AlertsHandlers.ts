import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { AlertsStore, alertView } from "@scaledger/db/alerts/AlertsStore"
import { ALERT_KINDS, ALERT_SEVERITIES, isAlertKind } from "@scaledger/domain/alerts/Alert"
import type { AlertSeverity } from "@scaledger/domain/alerts/Alert"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { DEFAULT_PAGE_LIMIT } from "@scaledger/domain/Common"
import { InvalidRequest, UnknownAlertKind } from "@scaledger/domain/Errors"
import { WebhookEndpoints } from "@scaledger/workers/webhooks/WebhookEndpoints"
import { Effect } from "effect"
import { PageCursorSeal } from "./PageCursorSeal.js"
import { orUnavailable } from "./Unavailable.js"

const isSeverity = (value: string): value is AlertSeverity =>
  (ALERT_SEVERITIES as ReadonlyArray<string>).includes(value)

export const AlertsHandlers = HttpApiBuilder.group(ScaledgerApi, "alerts", (handlers) =>
  Effect.gen(function*() {
    const store = yield* AlertsStore
    const cursors = yield* PageCursorSeal
    return handlers.handle("list", ({ urlParams }) =>
      Effect.gen(function*() {
        const account = yield* CurrentAccount
        const { kind, severity } = urlParams
        if (severity !== undefined && !isSeverity(severity)) {
          return yield* new InvalidRequest({
            message: `Unknown severity ${severity}.`,
            details: { field: "severity", supported: ALERT_SEVERITIES }
          })
        }
        if (kind !== undefined && !isAlertKind(kind)) {
          return yield* new UnknownAlertKind({
            message: `Unknown alert kind ${kind}.`,
            details: { unknown: [kind], supported: ALERT_KINDS }
          })
        }
        const beforeSeq = yield* cursors.open(account.id, "alerts", urlParams.cursor)
        const limit = urlParams.limit ?? DEFAULT_PAGE_LIMIT
        const page = yield* store.list(account.id, {
          severity,
          kind,
          open: urlParams.open === undefined ? undefined : urlParams.open === "true"
        }, { beforeSeq, limit })
        const last = page.alerts[page.alerts.length - 1]
        return {
          alerts: page.alerts.map(alertView),
          nextCursor: page.hasMore && last !== undefined ? cursors.seal(account.id, "alerts", last.seq) : null
        }
      }).pipe(orUnavailable))
  })).pipe()

export const WebhooksHandlers = HttpApiBuilder.group(ScaledgerApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const endpoints = yield* WebhookEndpoints
    const cursors = yield* PageCursorSeal
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const afterSeq = yield* cursors.open(account.id, "webhooks", urlParams.cursor)
          const page = yield* endpoints.list(account.id, { afterSeq, limit: urlParams.limit ?? DEFAULT_PAGE_LIMIT })
          return {
            webhooks: page.webhooks,
            nextCursor: page.hasMore && page.last !== undefined ? cursors.seal(account.id, "webhooks", page.last) : null
          }
        }).pipe(orUnavailable))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          endpoints.create(account.id, payload)).pipe(orUnavailable))
      .handle("deliveries", () =>
        Effect.flatMap(CurrentAccount, (account) =>
          endpoints.deliveries(account.id)).pipe(orUnavailable))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          endpoints.update(account.id, path.id, payload)).pipe(orUnavailable))
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          endpoints.remove(account.id, path.id)).pipe(orUnavailable))
  }))
