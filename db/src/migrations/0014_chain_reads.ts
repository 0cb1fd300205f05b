import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What the chain says when read rather than logged, and whether it can be read at all.
 *
 * `token_pause_reads`: `paused()` as read at a block, kept only where it differs from what the record already
 * showed there (the Paused/Unpaused events and earlier reads): a pause that began before watching started, or one
 * no event announces (the issuer-wide switch). The pause state at a block is the newest fact at or before it; at
 * one block a read outranks the events (it sees the block's end).
 *
 * `chain_read_health`: per chain and reader (recorder, prices, pauses), whether its reads last failed past the
 * retry budget, why (`unreachable`, `rate_limited`, `range`, `rpc_error`) and since when. The alert monitor raises
 * `degraded-read` from the `degraded` rows and resolves it when the row turns `ok`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE token_pause_reads (
      id bigserial PRIMARY KEY,
      chain_id integer NOT NULL,
      token_key text NOT NULL,
      block bigint NOT NULL,
      block_time timestamptz NOT NULL,
      paused boolean NOT NULL,
      read_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (chain_id, token_key, block)
    )`
  yield* sql`
    CREATE TABLE chain_read_health (
      chain_id integer NOT NULL,
      reader text NOT NULL,
      status text NOT NULL CHECK (status IN ('ok', 'degraded')),
      cause text CHECK (cause IN ('unreachable', 'rate_limited', 'range', 'rpc_error')),
      error text,
      since timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, reader)
    )`
})
