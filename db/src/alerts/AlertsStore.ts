import { SqlClient } from "@effect/sql"
import type { AlertKind, AlertSeverity, WebhookDeliveryBody } from "@scaledger/domain/alerts/Alert"
import { Clock, Effect } from "effect"
import { newId } from "../Ids.js"
import { type ByAccount, groupByAccount } from "./AlertSources.js"

/** One cause an alert stands for, as the monitor derives it from the record. */
export interface AlertCause {
  /** Names the cause uniquely within the account, e.g. `pending-multiplier:31337:0xabc…:1787000000`. */
  readonly key: string
  readonly kind: AlertKind
  readonly severity: AlertSeverity
  readonly title: string
  readonly detail: string
  /** Token symbol, or "" for account-wide alerts. */
  readonly symbol: string
  /** When the cause arose. */
  readonly at: Date
  /**
   * A cause its key names once and for all (a step, an announcement, a pause, a feed's silence since a round): never
   * raised again once raised, even after it was resolved; when it comes back (a re-org rolled it back and the new
   * branch records it again) its alert is reopened, without a delivery. A condition keyed by kind (a backlog, stale
   * rates, a degraded backfill or reader) may be raised again by a later episode once the earlier one ended.
   */
  readonly oneShot: boolean
}

export interface AlertRow {
  readonly id: string
  readonly seq: string
  readonly accountId: string
  readonly causeKey: string
  readonly kind: AlertKind
  readonly severity: AlertSeverity
  readonly title: string
  readonly detail: string
  readonly symbol: string
  readonly raisedAt: Date
  readonly resolvedAt: Date | null
}

interface AlertDbRow {
  readonly id: string
  readonly seq: string
  readonly account_id: string
  readonly cause_key: string
  readonly kind: AlertKind
  readonly severity: AlertSeverity
  readonly title: string
  readonly detail: string
  readonly symbol: string
  readonly raised_at: Date
  readonly resolved_at: Date | null
}

const toRow = (row: AlertDbRow): AlertRow => ({
  id: row.id,
  seq: String(row.seq),
  accountId: row.account_id,
  causeKey: row.cause_key,
  kind: row.kind,
  severity: row.severity,
  title: row.title,
  detail: row.detail,
  symbol: row.symbol,
  raisedAt: row.raised_at,
  resolvedAt: row.resolved_at
})

export interface AlertFilter {
  readonly severity?: AlertSeverity | undefined
  readonly kind?: AlertKind | undefined
  readonly open?: boolean | undefined
}

export interface SyncResult {
  readonly raised: ReadonlyArray<AlertRow>
  readonly resolved: number
  readonly deliveries: number
}

/**
 * The delivery body of an alert for one endpoint (SPEC "Delivery body"), as the bytes that are signed and sent:
 * `createdAt` is when the alert was raised (the event created), `data.at` when its cause arose.
 */
export const deliveryBody = (eventId: string, alert: AlertRow, createdAt: Date): string => {
  const body: WebhookDeliveryBody = {
    id: eventId,
    type: "alert",
    createdAt: createdAt.getTime(),
    data: {
      kind: alert.kind,
      severity: alert.severity,
      title: alert.title,
      detail: alert.detail,
      symbol: alert.symbol,
      at: alert.raisedAt.getTime()
    }
  }
  return JSON.stringify(body)
}

/**
 * The one alert store. `sync` makes an account's open alerts match the causes the monitor currently sees: a new
 * cause raises an alert and, in the same transaction, one delivery per enabled endpoint subscribed to its kind (the
 * outbox); a cause that is gone resolves its alert. Raising is idempotent (one open alert per cause key).
 */
export class AlertsStore extends Effect.Service<AlertsStore>()("@scaledger/db/AlertsStore", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const open = (accountId: string) =>
      Effect.map(
        sql<AlertDbRow>`SELECT * FROM alerts WHERE account_id = ${accountId} AND resolved_at IS NULL ORDER BY seq DESC`,
        (rows) => rows.map(toRow)
      )

    /** The open alerts of each of `accountIds` (an account with none: absent). */
    const openOf = (accountIds: ReadonlyArray<string>) =>
      accountIds.length === 0 ? Effect.succeed(new Map() as ByAccount<AlertRow>) : Effect.map(
        sql<AlertDbRow>`SELECT * FROM alerts WHERE account_id IN ${sql.in(accountIds)} AND resolved_at IS NULL
                        ORDER BY account_id, seq DESC`,
        (rows): ByAccount<AlertRow> => groupByAccount(rows, toRow)
      )

    /** Raises one alert with its deliveries, in one transaction; None when the cause already has (or had) one. */
    const raise = (accountId: string, cause: AlertCause) =>
      sql.withTransaction(Effect.gen(function*() {
        const inserted = yield* sql<AlertDbRow>`
          INSERT INTO alerts (id, account_id, cause_key, kind, severity, title, detail, symbol, raised_at)
          SELECT ${newId("alrt")}, ${accountId}, ${cause.key}, ${cause.kind}, ${cause.severity}, ${cause.title},
                 ${cause.detail}, ${cause.symbol}, ${cause.at}
          WHERE NOT EXISTS (
            SELECT 1 FROM alerts WHERE account_id = ${accountId} AND cause_key = ${cause.key}
              AND (resolved_at IS NULL OR ${cause.oneShot}::boolean))
          ON CONFLICT (account_id, cause_key) WHERE resolved_at IS NULL DO NOTHING
          RETURNING *`
        const row = inserted[0]
        if (row === undefined) return { alert: undefined, deliveries: 0 }
        const alert = toRow(row)
        const createdAt = new Date(yield* Clock.currentTimeMillis)
        const endpoints = yield* sql<{ id: string }>`
          SELECT id FROM webhook_endpoints
          WHERE account_id = ${accountId} AND enabled
            AND (kinds = '[]'::jsonb OR kinds @> jsonb_build_array(${alert.kind}::text))
          ORDER BY seq`
        for (const endpoint of endpoints) {
          const eventId = newId("evt")
          yield* sql`
            INSERT INTO webhook_deliveries (event_id, account_id, endpoint_id, alert_id, kind, body)
            VALUES (${eventId}, ${accountId}, ${endpoint.id}, ${alert.id}, ${alert.kind}, ${
            deliveryBody(eventId, alert, createdAt)
          })`
        }
        return { alert, deliveries: endpoints.length }
      }))

    /**
     * Reopens the newest alert of a one-time cause that was resolved and has come back (a re-org rolled it back, the
     * new branch records it again): the same alert, not raised or delivered again. None when it is open already.
     */
    const reopen = (accountId: string, cause: AlertCause) =>
      Effect.map(
        sql<AlertDbRow>`
          UPDATE alerts SET resolved_at = NULL, detail = ${cause.detail}, title = ${cause.title}
          WHERE id = (SELECT id FROM alerts WHERE account_id = ${accountId} AND cause_key = ${cause.key}
                      ORDER BY seq DESC LIMIT 1)
            AND resolved_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM alerts WHERE account_id = ${accountId} AND cause_key = ${cause.key}
                              AND resolved_at IS NULL)
          RETURNING *`,
        (rows) => rows.length > 0
      )

    /**
     * Makes the account's open alerts match `causes` (see the class comment). `openNow`: its open alerts when the
     * caller read them already (`openOf`); a raise is still refused for a cause that has an open alert by then, and
     * a resolve touches only alerts still open, so a list read a moment before does no harm.
     */
    const sync = (
      accountId: string,
      causes: ReadonlyArray<AlertCause>,
      now: Date,
      openNow?: ReadonlyArray<AlertRow>
    ) =>
      Effect.gen(function*() {
        const current = openNow ?? (yield* open(accountId))
        const byKey = new Map(current.map((alert) => [alert.causeKey, alert]))
        const wanted = new Set(causes.map((cause) => cause.key))
        const raised: Array<AlertRow> = []
        let deliveries = 0
        for (const cause of causes) {
          const existing = byKey.get(cause.key)
          if (existing !== undefined) {
            if (existing.detail !== cause.detail || existing.title !== cause.title) {
              yield* sql`UPDATE alerts SET detail = ${cause.detail}, title = ${cause.title} WHERE id = ${existing.id}`
            }
            continue
          }
          const result = yield* raise(accountId, cause)
          if (result.alert !== undefined) {
            raised.push(result.alert)
            deliveries += result.deliveries
          } else if (cause.oneShot) {
            yield* reopen(accountId, cause)
          }
        }
        const gone = current.filter((alert) => !wanted.has(alert.causeKey)).map((alert) => alert.id)
        if (gone.length > 0) {
          yield* sql`UPDATE alerts SET resolved_at = ${now} WHERE resolved_at IS NULL AND ${sql.in("id", gone)}`
        }
        return { raised, resolved: gone.length, deliveries } satisfies SyncResult
      })

    /** A page of the account's alerts, newest first, after the alert with sequence `beforeSeq`. */
    const list = (
      accountId: string,
      filter: AlertFilter,
      page: { readonly beforeSeq: string | undefined; readonly limit: number }
    ) =>
      Effect.map(
        sql<AlertDbRow>`
          SELECT * FROM alerts
          WHERE account_id = ${accountId}
            ${filter.severity === undefined ? sql`` : sql`AND severity = ${filter.severity}`}
            ${filter.kind === undefined ? sql`` : sql`AND kind = ${filter.kind}`}
            ${
          filter.open === undefined
            ? sql``
            : filter.open
            ? sql`AND resolved_at IS NULL`
            : sql`AND resolved_at IS NOT NULL`
        }
            ${page.beforeSeq === undefined ? sql`` : sql`AND seq < ${page.beforeSeq}`}
          ORDER BY seq DESC
          LIMIT ${page.limit + 1}`,
        (rows) => ({ alerts: rows.slice(0, page.limit).map(toRow), hasMore: rows.length > page.limit })
      )

    return { open, openOf, raise, sync, list } as const
  })
}) {}

/** The one shape every reader shows (REST, portfolio, MCP). */
export const alertView = (row: AlertRow) => ({
  id: row.id,
  kind: row.kind,
  severity: row.severity,
  title: row.title,
  detail: row.detail,
  symbol: row.symbol,
  at: row.raisedAt.getTime(),
  resolvedAt: row.resolvedAt === null ? null : row.resolvedAt.getTime()
})
