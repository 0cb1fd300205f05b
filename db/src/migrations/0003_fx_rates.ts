import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per ECB publication day. `per_eur` maps each currency published that day to its rate per 1 EUR as a
  // JSON string holding the ECB's decimal exactly (never a JSON number, so never a float).
  yield* sql`
    CREATE TABLE fx_rates (
      day date PRIMARY KEY,
      source text NOT NULL CHECK (source IN ('ecb-via-eurofxref', 'ecb-via-frankfurter')),
      per_eur jsonb NOT NULL CHECK (jsonb_typeof(per_eur) = 'object'),
      stored_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE fx_status (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      history_loaded_at timestamptz,
      history_days integer,
      refresh_attempted_at timestamptz,
      refresh_succeeded_at timestamptz,
      refresh_source text,
      refresh_error text
    )`
  yield* sql`INSERT INTO fx_status (id) VALUES (true)`
})
