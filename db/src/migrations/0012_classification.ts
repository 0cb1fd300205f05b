import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Classification and review. Chain facts shared by every account: whether an address has code (read once per
 * address, `eth_getCode`) and a transaction's method selector (read only for the movements the model is asked
 * about). Per account: one row per transfer of its addresses, `pending` until the classification worker has
 * decided it (a restart neither loses nor repeats one: rows are claimed with a lease and written once), and the
 * counterparty labels the account confirmed in review.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE address_code (
      chain_id integer NOT NULL,
      address_key text NOT NULL,
      has_code boolean NOT NULL,
      checked_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, address_key)
    )`
  yield* sql`
    CREATE TABLE tx_methods (
      chain_id integer NOT NULL,
      tx_hash text NOT NULL,
      selector text,
      PRIMARY KEY (chain_id, tx_hash)
    )`
  yield* sql`
    CREATE TABLE transfer_classifications (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      chain_id integer NOT NULL,
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
      type text,
      relationship text CHECK (relationship IN ('self', 'exchange', 'counterparty', 'contract')),
      classified_by text CHECK (classified_by IN ('rule', 'ai_labeled', 'user')),
      confirmed boolean NOT NULL DEFAULT false,
      rule text,
      counterparty_key text,
      model text,
      confidence double precision,
      rationale text,
      error text,
      attempts integer NOT NULL DEFAULT 0,
      lease_owner text,
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, chain_id, tx_hash, log_index)
    )`
  yield* sql`CREATE INDEX transfer_classifications_pending ON transfer_classifications (status, created_at)
    WHERE status = 'pending'`
  yield* sql`CREATE INDEX transfer_classifications_tx ON transfer_classifications (account_id, tx_hash)`
  yield* sql`CREATE INDEX transfer_classifications_counterparty ON transfer_classifications
    (account_id, counterparty_key)`
  yield* sql`
    CREATE TABLE counterparty_labels (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      address_key text NOT NULL,
      address text NOT NULL,
      relationship text NOT NULL CHECK (relationship IN ('self', 'exchange', 'counterparty', 'contract')),
      label text,
      note text,
      classified_by text NOT NULL DEFAULT 'user' CHECK (classified_by IN ('rule', 'ai_labeled', 'user')),
      confirmed boolean NOT NULL DEFAULT true,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, address_key)
    )`
})
