import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The records derived from the chain record per account: the ledger's positions, lots, disposals and events,
 * rebuilt as a whole by the ledger worker and replaced in one transaction. `ledger_builds` says which build is
 * wanted and which is stored: every input change bumps `requested_version`; a change that rewrites history (a
 * country rule, an own address, the reporting currency) also sets `replay_version`, and reads answer 409 until a
 * build at least that new is stored.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ledger_builds (
      account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
      requested_version bigint NOT NULL DEFAULT 1,
      replay_version bigint NOT NULL DEFAULT 0,
      built_version bigint NOT NULL DEFAULT 0,
      requested_at timestamptz NOT NULL DEFAULT now(),
      built_at timestamptz,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ready', 'failed')),
      error text,
      lease_owner text,
      lease_until timestamptz,
      report jsonb
    )`
  yield* sql`CREATE INDEX ledger_builds_due ON ledger_builds (requested_version, built_version)`
  yield* sql`
    CREATE TABLE ledger_positions (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      ord integer NOT NULL,
      token text NOT NULL,
      wallet_key text,
      row json NOT NULL,
      PRIMARY KEY (account_id, ord)
    )`
  yield* sql`
    CREATE TABLE ledger_lots (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      ord integer NOT NULL,
      token text NOT NULL,
      row json NOT NULL,
      PRIMARY KEY (account_id, ord)
    )`
  yield* sql`CREATE INDEX ledger_lots_token ON ledger_lots (account_id, upper(token))`
  yield* sql`
    CREATE TABLE ledger_disposals (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      ord integer NOT NULL,
      token text NOT NULL,
      day date NOT NULL,
      row json NOT NULL,
      PRIMARY KEY (account_id, ord)
    )`
  yield* sql`CREATE INDEX ledger_disposals_token ON ledger_disposals (account_id, upper(token))`
  // Movements, income from multiplier steps and splits, in chain order: what GET /v1/events lists.
  yield* sql`
    CREATE TABLE ledger_events (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      ord bigint NOT NULL,
      id text NOT NULL,
      type text NOT NULL,
      token text NOT NULL,
      day date NOT NULL,
      needs_review boolean NOT NULL,
      row json NOT NULL,
      PRIMARY KEY (account_id, ord)
    )`
  yield* sql`CREATE UNIQUE INDEX ledger_events_id ON ledger_events (account_id, id)`
  yield* sql`CREATE INDEX ledger_events_filter ON ledger_events (account_id, type, day)`
  yield* sql`CREATE INDEX ledger_events_review ON ledger_events (account_id, needs_review) WHERE needs_review`
})
