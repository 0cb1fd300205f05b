import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transaction that last changed what the ledger reads of a classification (`changed_xid`, as a bigint): set when
 * a row is written `done` or leaves `done` (a model failure queued again), not by the scan's pending rows or their
 * leases. An incremental ledger build asks whether a classification of a transfer at or before its checkpoint's
 * position changed since the checkpoint's snapshot (a user relabelling an old movement) by looking only at rows
 * changed since, instead of a count over all the account's classifications.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transfer_classifications ADD COLUMN changed_xid bigint`
  yield* sql`UPDATE transfer_classifications SET changed_xid = pg_current_xact_id()::text::bigint
               WHERE status = 'done'`
  yield* sql.unsafe(`
    CREATE FUNCTION scaledger_classification_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'done' OR (TG_OP = 'UPDATE' AND OLD.status = 'done') THEN
        NEW.changed_xid := pg_current_xact_id()::text::bigint;
      END IF;
      RETURN NEW;
    END $$`)
  yield* sql.unsafe(`
    CREATE TRIGGER transfer_classifications_changed BEFORE INSERT OR UPDATE ON transfer_classifications
    FOR EACH ROW EXECUTE FUNCTION scaledger_classification_changed()`)
  yield* sql`CREATE INDEX transfer_classifications_changed ON transfer_classifications (account_id, changed_xid)
               WHERE changed_xid IS NOT NULL`
})
