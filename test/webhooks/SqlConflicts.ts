import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Makes the next `times` statements that change a row of `table` fail as the database fails a transaction it broke
 * off to end a deadlock (SQLSTATE 40P01). The count is a sequence: it survives the transaction's rollback.
 */
export const conflictNext = (table: string, times = 1) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      yield* sql.unsafe(`DROP TRIGGER IF EXISTS conflict_next ON ${table}`)
      yield* sql.unsafe(`CREATE SEQUENCE IF NOT EXISTS conflict_next_seq`)
      yield* sql.unsafe(`SELECT setval('conflict_next_seq', 1, false)`)
      yield* sql.unsafe(`
        CREATE OR REPLACE FUNCTION conflict_next() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF nextval('conflict_next_seq') <= ${times} THEN
            RAISE EXCEPTION 'deadlock detected (test)' USING ERRCODE = '40P01';
          END IF;
          RETURN coalesce(NEW, OLD);
        END $$`)
      yield* sql.unsafe(`
        CREATE TRIGGER conflict_next BEFORE INSERT OR UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION conflict_next()`)
    })).pipe(Effect.orDie)
