import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The chain record. Chain data is public and shared by every account that watches the same addresses: rows are
 * keyed by chain id and on-chain position (idempotent writes), addresses by their lowercase key. Raw amounts and
 * 18-decimal multipliers are integers in `numeric(78,0)`. `provisional` marks rows from blocks newer than the
 * finality depth, which a re-org may still rewrite.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE chain_tokens (
      chain_id integer NOT NULL,
      address_key text NOT NULL,
      address text NOT NULL,
      symbol text,
      name text,
      isin text,
      decimals integer NOT NULL DEFAULT 18,
      feed_address text,
      feed_decimals integer,
      listed boolean NOT NULL,
      is_stock boolean NOT NULL,
      PRIMARY KEY (chain_id, address_key)
    )`
  yield* sql`CREATE INDEX chain_tokens_symbol ON chain_tokens (chain_id, upper(symbol))`
  yield* sql`
    CREATE TABLE chain_cursors (
      chain_id integer NOT NULL,
      name text NOT NULL,
      block bigint NOT NULL,
      block_hash text NOT NULL,
      started_block bigint NOT NULL,
      started_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, name)
    )`
  yield* sql`
    CREATE TABLE chain_blocks (
      chain_id integer NOT NULL,
      number bigint NOT NULL,
      hash text NOT NULL,
      parent_hash text,
      block_time timestamptz NOT NULL,
      PRIMARY KEY (chain_id, number)
    )`
  yield* sql`
    CREATE TABLE token_transfers (
      chain_id integer NOT NULL,
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      block bigint NOT NULL,
      block_hash text NOT NULL,
      block_time timestamptz NOT NULL,
      token_key text NOT NULL,
      from_key text NOT NULL,
      to_key text NOT NULL,
      from_address text NOT NULL,
      to_address text NOT NULL,
      raw numeric(78, 0) NOT NULL,
      provisional boolean NOT NULL DEFAULT false,
      PRIMARY KEY (chain_id, tx_hash, log_index)
    )`
  yield* sql`CREATE INDEX token_transfers_from ON token_transfers (chain_id, from_key, block)`
  yield* sql`CREATE INDEX token_transfers_to ON token_transfers (chain_id, to_key, block)`
  yield* sql`CREATE INDEX token_transfers_block ON token_transfers (chain_id, block)`
  yield* sql`
    CREATE TABLE tx_receipts (
      chain_id integer NOT NULL,
      tx_hash text NOT NULL,
      block bigint NOT NULL,
      block_hash text NOT NULL,
      tx_from text NOT NULL,
      tx_to text,
      status text NOT NULL,
      logs jsonb NOT NULL,
      provisional boolean NOT NULL DEFAULT false,
      PRIMARY KEY (chain_id, tx_hash)
    )`
  yield* sql`CREATE INDEX tx_receipts_block ON tx_receipts (chain_id, block)`
  yield* sql`
    CREATE TABLE multiplier_announcements (
      chain_id integer NOT NULL,
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      block bigint NOT NULL,
      block_hash text NOT NULL,
      block_time timestamptz NOT NULL,
      token_key text NOT NULL,
      old_multiplier numeric(78, 0) NOT NULL,
      new_multiplier numeric(78, 0) NOT NULL,
      effective_at timestamptz NOT NULL,
      variant text NOT NULL,
      provisional boolean NOT NULL DEFAULT false,
      PRIMARY KEY (chain_id, tx_hash, log_index)
    )`
  yield* sql`CREATE INDEX multiplier_announcements_token ON multiplier_announcements (chain_id, token_key, effective_at)`
  // One row per change, keyed by (token, effectiveAt): a re-announcement is the same change. `pending` until a
  // block at or after effectiveAt exists; then `block` is that first block and the value in force is confirmed
  // from chain storage where the node still serves it (source chain_storage), else taken from the announcement
  // (source event_log).
  yield* sql`
    CREATE TABLE multiplier_changes (
      chain_id integer NOT NULL,
      token_key text NOT NULL,
      effective_at timestamptz NOT NULL,
      old_multiplier numeric(78, 0) NOT NULL,
      new_multiplier numeric(78, 0) NOT NULL,
      kind text NOT NULL CHECK (kind IN ('dividend', 'split')),
      status text NOT NULL CHECK (status IN ('pending', 'active')),
      source text CHECK (source IN ('chain_storage', 'event_log', 'issuer_api')),
      block bigint,
      block_time timestamptz,
      announced_at timestamptz,
      announced_block bigint,
      provisional boolean NOT NULL DEFAULT false,
      PRIMARY KEY (chain_id, token_key, effective_at)
    )`
  yield* sql`
    CREATE TABLE token_pause_events (
      chain_id integer NOT NULL,
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      block bigint NOT NULL,
      block_time timestamptz NOT NULL,
      token_key text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('Paused', 'Unpaused', 'OraclePaused', 'OracleUnpaused')),
      provisional boolean NOT NULL DEFAULT false,
      PRIMARY KEY (chain_id, tx_hash, log_index)
    )`
  // Spans of dates for which a token's multiplier could not be confirmed from chain state. A gap found while
  // backfilling a wallet belongs to that wallet (and goes with it); the recorder's own gaps have no wallet.
  yield* sql`
    CREATE TABLE coverage_gaps (
      id bigserial PRIMARY KEY,
      chain_id integer NOT NULL,
      token_key text NOT NULL,
      wallet_id bigint REFERENCES wallets (id) ON DELETE CASCADE,
      from_date date NOT NULL,
      to_date date NOT NULL,
      reason text NOT NULL CHECK (reason IN ('archive_unavailable', 'rpc_error', 'before_watch'))
    )`
  yield* sql`CREATE INDEX coverage_gaps_token ON coverage_gaps (chain_id, token_key)`
  yield* sql`CREATE INDEX coverage_gaps_wallet ON coverage_gaps (wallet_id)`
  // The earliest block from which a token's announcements have been scanned (by the recorder or a backfill), and
  // the multiplier in force when the recorder started watching it.
  yield* sql`
    CREATE TABLE multiplier_coverage (
      chain_id integer NOT NULL,
      token_key text NOT NULL,
      from_block bigint NOT NULL,
      from_time timestamptz NOT NULL,
      start_multiplier numeric(78, 0),
      PRIMARY KEY (chain_id, token_key)
    )`
  // A wallet's durable backfill: the block range, where it has got to, and who is working on it.
  yield* sql`
    CREATE TABLE wallet_backfills (
      wallet_id bigint PRIMARY KEY REFERENCES wallets (id) ON DELETE CASCADE,
      chain_id integer NOT NULL,
      address_key text NOT NULL,
      from_block bigint NOT NULL,
      target_block bigint,
      next_block bigint NOT NULL,
      phase text NOT NULL CHECK (phase IN ('transfers', 'multipliers', 'done')),
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      retry_at timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX wallet_backfills_due ON wallet_backfills (phase, retry_at)`
})
