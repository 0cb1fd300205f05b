import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      name text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      lookup text NOT NULL UNIQUE,
      hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_account ON api_keys (account_id)`
  yield* sql`
    CREATE TABLE account_settings (
      account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
      country text NOT NULL DEFAULT 'US' CHECK (country IN ('US', 'SG', 'DE')),
      reporting_currency text NOT NULL DEFAULT 'USD',
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE wallets (
      id bigserial PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      address text NOT NULL,
      address_key text NOT NULL,
      label text NOT NULL DEFAULT '',
      self boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      watching_from_block bigint,
      watching_from_at timestamptz,
      backfill_status text NOT NULL DEFAULT 'running'
        CHECK (backfill_status IN ('running', 'complete', 'partial', 'failed')),
      backfill_error text,
      backfill_blocks_done bigint NOT NULL DEFAULT 0,
      backfill_blocks_total bigint,
      UNIQUE (account_id, address_key)
    )`
  yield* sql`CREATE INDEX wallets_address_key ON wallets (address_key)`
})
