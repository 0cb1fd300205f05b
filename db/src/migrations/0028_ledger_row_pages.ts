import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A build's events and disposals in pages of rows (see `ledger/RowPages.ts`) instead of a table row each: a full
 * build of a long history wrote and indexed hundreds of thousands of rows, most of its time. The old tables are
 * dropped and every account's ledger is replayed into the new ones (derived records; reads answer 409 meanwhile).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ledger_event_pages (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      first_ord bigint NOT NULL,
      count integer NOT NULL,
      first_day date NOT NULL,
      last_day date NOT NULL,
      tokens text[] NOT NULL,
      types text[] NOT NULL,
      review_count integer NOT NULL,
      review json NOT NULL,
      lines text NOT NULL,
      PRIMARY KEY (account_id, first_ord)
    )`
  yield* sql`
    CREATE TABLE ledger_disposal_pages (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      first_ord bigint NOT NULL,
      count integer NOT NULL,
      first_day date NOT NULL,
      last_day date NOT NULL,
      tokens text[] NOT NULL,
      lines text NOT NULL,
      PRIMARY KEY (account_id, first_ord)
    )`
  // Pages compress well (their rows repeat addresses and figures); lz4 where the server has it.
  yield* sql`
    DO $$ BEGIN
      ALTER TABLE ledger_event_pages ALTER COLUMN lines SET COMPRESSION lz4;
      ALTER TABLE ledger_disposal_pages ALTER COLUMN lines SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;
    END $$`
  // The cached reads (positions, portfolio) count the events needing review: notified as `ledger_events` was.
  for (const [event, rows] of [["INSERT", "NEW"], ["UPDATE", "NEW"], ["DELETE", "OLD"]] as const) {
    yield* sql.unsafe(`
      CREATE TRIGGER ledger_event_pages_reads_${event.toLowerCase()} AFTER ${event} ON ledger_event_pages
      REFERENCING ${rows} TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION scaledger_notify_accounts()`)
  }
  yield* sql.unsafe(`
    CREATE TRIGGER ledger_event_pages_reads_truncate AFTER TRUNCATE ON ledger_event_pages
    FOR EACH STATEMENT EXECUTE FUNCTION scaledger_notify_all()`)
  yield* sql`DROP TABLE ledger_events`
  yield* sql`DROP TABLE ledger_disposals`
  yield* sql`
    UPDATE ledger_builds SET requested_version = requested_version + 1, replay_version = requested_version + 1,
      requested_at = now()`
})
