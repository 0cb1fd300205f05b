import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

export interface EndpointRow {
  readonly id: string
  readonly seq: string
  readonly accountId: string
  readonly url: string
  readonly description: string
  readonly kinds: ReadonlyArray<string>
  readonly secretEnc: string
  readonly enabled: boolean
  readonly consecutiveFailures: number
  readonly createdAt: Date
}

interface EndpointDbRow {
  readonly id: string
  readonly seq: string
  readonly account_id: string
  readonly url: string
  readonly description: string
  readonly kinds: ReadonlyArray<string> | string
  readonly secret_enc: string
  readonly enabled: boolean
  readonly consecutive_failures: number
  readonly created_at: Date
}

const parseKinds = (kinds: ReadonlyArray<string> | string): ReadonlyArray<string> =>
  typeof kinds === "string" ? JSON.parse(kinds) : kinds

const toEndpoint = (row: EndpointDbRow): EndpointRow => ({
  id: row.id,
  seq: String(row.seq),
  accountId: row.account_id,
  url: row.url,
  description: row.description,
  kinds: parseKinds(row.kinds),
  secretEnc: row.secret_enc,
  enabled: row.enabled,
  consecutiveFailures: Number(row.consecutive_failures),
  createdAt: row.created_at
})

export interface AttemptRow {
  readonly id: string
  readonly endpointId: string
  readonly eventId: string
  readonly kind: string
  readonly attempt: number
  readonly outcome: "success" | "failure"
  readonly status: number | null
  readonly error: string | null
  readonly durationMs: number
  readonly at: Date
}

/** A delivery claimed for one attempt, with what is needed to send it. */
export interface ClaimedDelivery {
  readonly id: string
  readonly eventId: string
  readonly accountId: string
  readonly endpointId: string
  readonly kind: string
  readonly body: string
  /** Attempts already made (this one is `attempts + 1`). */
  readonly attempts: number
  readonly url: string
  readonly secretEnc: string
}

/** What one attempt came to, decided by the delivery worker's policy. */
export type AttemptResult =
  | { readonly _tag: "Delivered" }
  | { readonly _tag: "Retry"; readonly at: Date }
  | { readonly _tag: "Failed" }

export interface AttemptRecord {
  readonly delivery: ClaimedDelivery
  readonly attempt: number
  readonly outcome: "success" | "failure"
  readonly status: number | null
  readonly error: string | null
  readonly response: string | null
  readonly durationMs: number
  readonly at: Date
  readonly result: AttemptResult
}

/** Consecutive failed deliveries after which an endpoint is disabled (SPEC "Delivery policy"). */
export const DISABLE_AFTER_FAILURES = 10

/** Attempts in flight to one endpoint at most (`claimDue`). */
export const PER_ENDPOINT_IN_FLIGHT = 2

/** Webhook endpoints, the delivery outbox and the attempt log. Every read and change is scoped to one account. */
export class WebhooksRepo extends Effect.Service<WebhooksRepo>()("@scaledger/db/WebhooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const create = Effect.fn("WebhooksRepo.create")((endpoint: {
      readonly id: string
      readonly accountId: string
      readonly url: string
      readonly description: string
      readonly kinds: ReadonlyArray<string>
      readonly secretEnc: string
    }) =>
      Effect.map(
        sql<EndpointDbRow>`
          INSERT INTO webhook_endpoints (id, account_id, url, description, kinds, secret_enc)
          VALUES (${endpoint.id}, ${endpoint.accountId}, ${endpoint.url}, ${endpoint.description},
                  ${JSON.stringify(endpoint.kinds)}::jsonb, ${endpoint.secretEnc})
          RETURNING *`,
        (rows) => toEndpoint(rows[0]!)
      )
    )

    const find = Effect.fn("WebhooksRepo.find")((accountId: string, id: string) =>
      Effect.map(
        sql<EndpointDbRow>`SELECT * FROM webhook_endpoints WHERE account_id = ${accountId} AND id = ${id}`,
        (rows) => Option.map(Option.fromNullable(rows[0]), toEndpoint)
      )
    )

    const list = Effect.fn("WebhooksRepo.list")((
      accountId: string,
      page: { readonly afterSeq: string | undefined; readonly limit: number }
    ) =>
      Effect.map(
        sql<EndpointDbRow>`
          SELECT * FROM webhook_endpoints WHERE account_id = ${accountId}
            ${page.afterSeq === undefined ? sql`` : sql`AND seq > ${page.afterSeq}`}
          ORDER BY seq LIMIT ${page.limit + 1}`,
        (rows) => ({ webhooks: rows.slice(0, page.limit).map(toEndpoint), hasMore: rows.length > page.limit })
      )
    )

    /**
     * Changes an endpoint. Enabling resets the failure count; disabling cancels its pending deliveries (an endpoint
     * receives only alerts raised while it is enabled).
     */
    const update = Effect.fn("WebhooksRepo.update")((accountId: string, id: string, patch: {
      readonly url?: string | undefined
      readonly description?: string | undefined
      readonly kinds?: ReadonlyArray<string> | undefined
      readonly enabled?: boolean | undefined
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<EndpointDbRow>`
          UPDATE webhook_endpoints SET
            url = ${patch.url === undefined ? sql`url` : sql`${patch.url}`},
            description = ${patch.description === undefined ? sql`description` : sql`${patch.description}`},
            kinds = ${patch.kinds === undefined ? sql`kinds` : sql`${JSON.stringify(patch.kinds)}::jsonb`},
            enabled = ${patch.enabled === undefined ? sql`enabled` : sql`${patch.enabled}`},
            consecutive_failures = ${patch.enabled === true ? sql`0` : sql`consecutive_failures`},
            disabled_at = ${
          patch.enabled === undefined ? sql`disabled_at` : patch.enabled ? sql`NULL` : sql`coalesce(disabled_at, now())`
        }
          WHERE account_id = ${accountId} AND id = ${id}
          RETURNING *`
        if (rows[0] !== undefined && patch.enabled === false) yield* cancelPending(id)
        return Option.map(Option.fromNullable(rows[0]), toEndpoint)
      }))
    )

    /**
     * Cancels an endpoint's pending deliveries. A delivery with an attempt in flight keeps its lease owner, so the
     * attempt's end is still logged (`recordAttempt`). The caller holds the endpoint's row lock already: endpoint
     * first, then its deliveries (in id order), in every transaction that locks both, or they deadlock.
     */
    const cancelPending = (endpointId: string) =>
      sql`UPDATE webhook_deliveries SET status = 'cancelled', finished_at = now(), last_error = 'endpoint disabled'
          WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status = 'pending'
                       ORDER BY id FOR UPDATE)`

    const remove = Effect.fn("WebhooksRepo.remove")((accountId: string, id: string) =>
      Effect.map(
        sql<{ id: string }>`DELETE FROM webhook_endpoints WHERE account_id = ${accountId} AND id = ${id} RETURNING id`,
        (rows) => rows.length > 0
      )
    )

    /** The account's last `limit` attempts, newest first. */
    const attempts = Effect.fn("WebhooksRepo.attempts")((accountId: string, limit = 50) =>
      Effect.map(
        sql<{
          id: string
          endpoint_id: string
          event_id: string
          kind: string
          attempt: number
          outcome: "success" | "failure"
          status: number | null
          error: string | null
          duration_ms: number
          at: Date
        }>`SELECT id, endpoint_id, event_id, kind, attempt, outcome, status, error, duration_ms, at
           FROM webhook_attempts WHERE account_id = ${accountId} ORDER BY id DESC LIMIT ${limit}`,
        (rows) =>
          rows.map((row): AttemptRow => ({
            id: String(row.id),
            endpointId: row.endpoint_id,
            eventId: row.event_id,
            kind: row.kind,
            attempt: Number(row.attempt),
            outcome: row.outcome,
            status: row.status === null ? null : Number(row.status),
            error: row.error,
            durationMs: Number(row.duration_ms),
            at: row.at
          }))
      )
    )

    /**
     * Claims up to `limit` due deliveries for one attempt each: pending, due, and not leased by a live worker (a
     * lease that expired means its worker died; the attempt is due again). Rows are locked with
     * `FOR UPDATE SKIP LOCKED`, so concurrent workers never claim the same row.
     *
     * Oldest first, but no endpoint has more than `PER_ENDPOINT_IN_FLIGHT` attempts in flight and no account more
     * than `perAccount` (leases held count): endpoints that hang until the time-out take a few of the workers'
     * slots, never all of them, and one account's cannot hold up another's deliveries.
     */
    const claimDue = Effect.fn("WebhooksRepo.claimDue")((
      owner: string,
      limit: number,
      leaseSeconds: number,
      perAccount: number = limit
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{
          id: string
          event_id: string
          account_id: string
          endpoint_id: string
          kind: string
          body: string
          attempts: number
        }>`
          UPDATE webhook_deliveries SET lease_owner = ${owner},
                 lease_until = now() + make_interval(secs => ${leaseSeconds})
          WHERE id IN (
            WITH leased AS (
              SELECT endpoint_id, account_id FROM webhook_deliveries
              WHERE status = 'pending' AND lease_until >= now()
            ),
            -- The oldest few due of each endpoint, read by its index (never every due row sorted).
            due AS (
              SELECT d.id, d.endpoint_id, d.account_id, d.next_attempt_at,
                row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id)
                  + (SELECT count(*) FROM leased l WHERE l.endpoint_id = d.endpoint_id) AS endpoint_load
              FROM webhook_endpoints e CROSS JOIN LATERAL (
                SELECT d.id, d.endpoint_id, d.account_id, d.next_attempt_at FROM webhook_deliveries d
                WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now()
                  AND (d.lease_until IS NULL OR d.lease_until < now())
                ORDER BY d.next_attempt_at, d.id
                LIMIT ${PER_ENDPOINT_IN_FLIGHT}
              ) d
            ),
            fair AS (
              SELECT id, next_attempt_at,
                row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id)
                  + (SELECT count(*) FROM leased l WHERE l.account_id = due.account_id) AS account_load
              FROM due WHERE endpoint_load <= ${PER_ENDPOINT_IN_FLIGHT}
            )
            SELECT w.id FROM webhook_deliveries w
            WHERE w.id IN (
              SELECT id FROM fair WHERE account_load <= ${perAccount} ORDER BY next_attempt_at, id LIMIT ${limit})
              AND w.status = 'pending' AND (w.lease_until IS NULL OR w.lease_until < now())
            FOR UPDATE SKIP LOCKED)
          RETURNING id, event_id, account_id, endpoint_id, kind, body, attempts`
        if (rows.length === 0) return []
        const endpoints = yield* sql<{ id: string; url: string; secret_enc: string; enabled: boolean }>`
          SELECT id, url, secret_enc, enabled FROM webhook_endpoints WHERE ${
          sql.in("id", [...new Set(rows.map((row) => row.endpoint_id))])
        }`
        const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]))
        const claimed: Array<ClaimedDelivery> = []
        for (const row of rows) {
          const endpoint = byId.get(row.endpoint_id)
          if (endpoint === undefined || !endpoint.enabled) {
            yield* sql`UPDATE webhook_deliveries SET status = 'cancelled', finished_at = now(), lease_owner = NULL,
                              lease_until = NULL, last_error = 'endpoint disabled' WHERE id = ${row.id}`
            continue
          }
          claimed.push({
            id: String(row.id),
            eventId: row.event_id,
            accountId: row.account_id,
            endpointId: row.endpoint_id,
            kind: row.kind,
            body: row.body,
            attempts: Number(row.attempts),
            url: endpoint.url,
            secretEnc: endpoint.secret_enc
          })
        }
        return claimed
      }))
    )

    /**
     * Records one attempt and its consequence in one transaction: the log line; the delivery done, rescheduled or
     * failed; and the endpoint's consecutive failures (reset by a delivered one, counted once per failed delivery,
     * disabling the endpoint at 10). Nothing is written when the lease was lost to another worker. An attempt to an
     * endpoint disabled while it was in flight is logged and ends the delivery (delivered, or left cancelled).
     * Nothing is written either when the endpoint was removed meanwhile.
     */
    const recordAttempt = Effect.fn("WebhooksRepo.recordAttempt")((owner: string, record: AttemptRecord) =>
      sql.withTransaction(Effect.gen(function*() {
        const { delivery, result } = record
        // The endpoint's row before the delivery's, as PATCH and DELETE take them (see `cancelPending`): the row lock
        // where the attempt may change the row (a failure counted, a count reset), else only a share lock, so that
        // deliveries to one endpoint do not queue on its row. A count that changes in between makes the reset wait
        // for the row while holding the delivery: a deadlock the database breaks, and `retryOnConflict` runs again.
        const lockEndpoint = (mode: "NO KEY UPDATE" | "KEY SHARE") =>
          sql<{ consecutive_failures: number }>`
            SELECT consecutive_failures FROM webhook_endpoints WHERE id = ${delivery.endpointId}
            FOR ${sql.literal(mode)}`
        const [endpointRow] = yield* lockEndpoint(result._tag === "Failed" ? "NO KEY UPDATE" : "KEY SHARE")
        if (endpointRow === undefined) return { disabled: false, recorded: false }
        if (result._tag === "Delivered" && Number(endpointRow.consecutive_failures) !== 0) {
          yield* lockEndpoint("NO KEY UPDATE")
        }
        const [mine] = yield* sql<{ status: "pending" | "cancelled" }>`
          SELECT status FROM webhook_deliveries
          WHERE id = ${delivery.id} AND lease_owner = ${owner} AND status IN ('pending', 'cancelled')
          FOR UPDATE`
        if (mine === undefined) return { disabled: false, recorded: false }
        yield* sql`
          INSERT INTO webhook_attempts (account_id, endpoint_id, delivery_id, event_id, kind, attempt, outcome, status,
                                        error, response, duration_ms, at)
          VALUES (${delivery.accountId}, ${delivery.endpointId}, ${delivery.id}, ${delivery.eventId}, ${delivery.kind},
                  ${record.attempt}, ${record.outcome}, ${record.status}, ${record.error}, ${record.response},
                  ${record.durationMs}, ${record.at})`
        if (mine.status === "cancelled") {
          yield* sql`UPDATE webhook_deliveries SET attempts = ${record.attempt}, lease_owner = NULL, lease_until = NULL,
                            status = ${result._tag === "Delivered" ? "succeeded" : "cancelled"},
                            finished_at = ${record.at}
                     WHERE id = ${delivery.id}`
          return { disabled: false, recorded: true }
        }
        let disabled = false
        switch (result._tag) {
          case "Delivered": {
            yield* sql`UPDATE webhook_deliveries SET status = 'succeeded', attempts = ${record.attempt},
                              finished_at = ${record.at}, lease_owner = NULL, lease_until = NULL, last_error = NULL
                       WHERE id = ${delivery.id}`
            yield* sql`UPDATE webhook_endpoints SET consecutive_failures = 0
                       WHERE id = ${delivery.endpointId} AND consecutive_failures <> 0`
            break
          }
          case "Retry": {
            yield* sql`UPDATE webhook_deliveries SET attempts = ${record.attempt}, next_attempt_at = ${result.at},
                              lease_owner = NULL, lease_until = NULL, last_error = ${record.error}
                       WHERE id = ${delivery.id}`
            break
          }
          case "Failed": {
            yield* sql`UPDATE webhook_deliveries SET status = 'failed', attempts = ${record.attempt},
                              finished_at = ${record.at}, lease_owner = NULL, lease_until = NULL,
                              last_error = ${record.error}
                       WHERE id = ${delivery.id}`
            const [endpoint] = yield* sql<{ consecutive_failures: number; enabled: boolean }>`
              UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1
              WHERE id = ${delivery.endpointId}
              RETURNING consecutive_failures, enabled`
            if (
              endpoint !== undefined && endpoint.enabled &&
              Number(endpoint.consecutive_failures) >= DISABLE_AFTER_FAILURES
            ) {
              yield* sql`UPDATE webhook_endpoints SET enabled = false, disabled_at = now()
                         WHERE id = ${delivery.endpointId}`
              yield* cancelPending(delivery.endpointId)
              disabled = true
            }
            break
          }
        }
        return { disabled, recorded: true }
      }))
    )

    /** Gives back the lease of an attempt cut off before its end (a shutdown): the delivery is due again at once. */
    const releaseLease = Effect.fn("WebhooksRepo.releaseLease")((owner: string, id: string) =>
      sql`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
          WHERE id = ${id} AND lease_owner = ${owner}`
    )

    /** Deliveries not finished yet (pending), for tests and the benchmark. */
    const pendingCount = Effect.withSpan(
      Effect.map(
        sql<{ n: string }>`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`,
        (rows) => Number(rows[0]?.n ?? 0)
      ),
      "WebhooksRepo.pendingCount"
    )

    return {
      create,
      find,
      list,
      update,
      remove,
      attempts,
      claimDue,
      recordAttempt,
      releaseLease,
      pendingCount
    } as const
  })
}) {}
