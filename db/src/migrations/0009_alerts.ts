import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Alerts and their webhook outbox. `alerts` is the one store every reader uses; `cause_key` names what raised an
 * alert, and at most one alert per cause is open (a partial unique index), so raising is idempotent. A raised alert
 * and its deliveries (one per enabled endpoint subscribed to its kind) are written in one transaction;
 * `webhook_deliveries` is the outbox the delivery workers claim with `FOR UPDATE SKIP LOCKED`, and
 * `webhook_attempts` the log of every attempt. Endpoint secrets are stored encrypted (AES-256-GCM).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE alerts (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      cause_key text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('accrued-income', 'token-paused', 'oracle-paused', 'pending-multiplier',
                                         'unlabeled-transfers', 'stale-reference', 'degraded-read')),
      severity text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
      title text NOT NULL,
      detail text NOT NULL,
      symbol text NOT NULL DEFAULT '',
      raised_at timestamptz NOT NULL,
      resolved_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX alerts_open_cause ON alerts (account_id, cause_key) WHERE resolved_at IS NULL`
  yield* sql`CREATE INDEX alerts_cause ON alerts (account_id, cause_key)`
  yield* sql`CREATE INDEX alerts_account ON alerts (account_id, seq)`
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      url text NOT NULL,
      description text NOT NULL DEFAULT '',
      kinds jsonb NOT NULL DEFAULT '[]'::jsonb,
      secret_enc text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      consecutive_failures integer NOT NULL DEFAULT 0,
      disabled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, seq)`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      alert_id text NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
      kind text NOT NULL,
      body text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      UNIQUE (endpoint_id, alert_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`
    CREATE TABLE webhook_attempts (
      id bigserial PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      event_id text NOT NULL,
      kind text NOT NULL,
      attempt integer NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('success', 'failure')),
      status integer,
      error text,
      response text,
      duration_ms integer NOT NULL,
      at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_attempts_account ON webhook_attempts (account_id, id DESC)`
})
