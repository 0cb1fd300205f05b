import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Tables with an `account_id` whose rows an account's cached reads (positions, portfolio) are computed from. */
const ACCOUNT_TABLES = [
  "ledger_builds",
  "ledger_positions",
  "ledger_events",
  "alerts",
  "transfer_classifications",
  "account_settings",
  "wallets"
]
/** Tables any account's cached reads may use. */
const SHARED_TABLES = ["token_pause_events", "token_pause_reads", "price_rounds", "fx_rates", "edgar_documents"]

/**
 * Every committed change to what the cached reads show notifies channel `scaledger_reads` (`ReadChanges`):
 * `a:<account id>` once per account a statement touched, `*` for the shared tables and for a `TRUNCATE`. Statement
 * triggers with transition tables: one notification per statement and account, however many rows it writes
 * (PostgreSQL also folds identical notifications of one transaction into one).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION scaledger_notify_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed_account text;
    BEGIN
      FOR changed_account IN SELECT DISTINCT account_id FROM changed_rows LOOP
        PERFORM pg_notify('scaledger_reads', 'a:' || changed_account);
      END LOOP;
      RETURN NULL;
    END $$`)
  yield* sql.unsafe(`
    CREATE FUNCTION scaledger_notify_all() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('scaledger_reads', '*');
      RETURN NULL;
    END $$`)
  for (const table of ACCOUNT_TABLES) {
    for (const [event, rows] of [["INSERT", "NEW"], ["UPDATE", "NEW"], ["DELETE", "OLD"]] as const) {
      yield* sql.unsafe(`
        CREATE TRIGGER ${table}_reads_${event.toLowerCase()} AFTER ${event} ON ${table}
        REFERENCING ${rows} TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION scaledger_notify_accounts()`)
    }
    yield* sql.unsafe(`
      CREATE TRIGGER ${table}_reads_truncate AFTER TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION scaledger_notify_all()`)
  }
  for (const table of SHARED_TABLES) {
    yield* sql.unsafe(`
      CREATE TRIGGER ${table}_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION scaledger_notify_all()`)
  }
})
