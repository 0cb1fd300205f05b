import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Chainlink AggregatorV3 rounds of the stock tokens' price feeds, as the feed's proxy numbers them
 * (`(phaseId << 64) | aggregatorRoundId`, hence `numeric(78,0)`), with the raw answer in the feed's own decimals.
 * `price_feed_progress` is the recorder's durable state per feed: the stored rounds form one unbroken run
 * `[oldest_round_id, newest_round_id]`, plus, while a catch-up walks down from `fill_top_round_id` towards
 * `newest_round_id`, the rounds above `fill_next_round_id` (where it resumes); `history_start` says no round
 * before `oldest_round_id` exists.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE price_rounds (
      chain_id integer NOT NULL,
      feed_key text NOT NULL,
      round_id numeric(78, 0) NOT NULL,
      feed_address text NOT NULL,
      token_key text NOT NULL,
      answer numeric(78, 0) NOT NULL,
      decimals integer NOT NULL,
      started_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      answered_in_round numeric(78, 0) NOT NULL,
      stored_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, feed_key, round_id)
    )`
  yield* sql`CREATE INDEX price_rounds_token ON price_rounds (chain_id, token_key, updated_at)`
  yield* sql`
    CREATE TABLE price_feed_progress (
      chain_id integer NOT NULL,
      feed_key text NOT NULL,
      feed_address text NOT NULL,
      token_key text NOT NULL,
      decimals integer NOT NULL,
      newest_round_id numeric(78, 0) NOT NULL,
      oldest_round_id numeric(78, 0) NOT NULL,
      oldest_updated_at timestamptz NOT NULL,
      history_start boolean NOT NULL DEFAULT false,
      fill_top_round_id numeric(78, 0),
      fill_next_round_id numeric(78, 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, feed_key)
    )`
  // How far back a token's prices are needed: its earliest stored transfer.
  yield* sql`CREATE INDEX token_transfers_token_time ON token_transfers (chain_id, token_key, block_time)`
})
