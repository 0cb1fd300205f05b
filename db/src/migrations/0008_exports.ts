import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Generated exports, kept whole and immutable: the metadata row (format, filters, SHA-256, row and byte counts, the
 * block the record reflected) and the bytes in chunks (one per batch of rows written), so an export never has to
 * be in memory at once. An export is written in the same transaction that reads its snapshot, so it appears complete
 * or not at all.
 * Exports hang off the account, not its wallets: deleting a wallet keeps them. Triggers refuse to change a completed
 * export or its bytes.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE exports (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      format text NOT NULL,
      file_name text NOT NULL,
      from_date date,
      to_date date,
      wallet text,
      complete boolean NOT NULL DEFAULT false,
      row_count bigint NOT NULL DEFAULT 0,
      byte_count bigint NOT NULL DEFAULT 0,
      sha256 text,
      as_of_block bigint,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX exports_account ON exports (account_id, seq)`
  yield* sql`
    CREATE TABLE export_chunks (
      export_id text NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (export_id, seq)
    )`
  // Stored as written, not compressed: compressing each chunk costs the database more time than the export itself.
  yield* sql`ALTER TABLE export_chunks ALTER COLUMN data SET STORAGE EXTERNAL`
  yield* sql.unsafe(`
    CREATE FUNCTION exports_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'export % is immutable', OLD.id;
    END $$`)
  yield* sql.unsafe(`
    CREATE FUNCTION export_chunks_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (SELECT complete FROM exports WHERE id = OLD.export_id) THEN
        RAISE EXCEPTION 'export % is immutable', OLD.export_id;
      END IF;
      RETURN NEW;
    END $$`)
  yield* sql`
    CREATE TRIGGER exports_immutable BEFORE UPDATE ON exports
    FOR EACH ROW WHEN (OLD.complete) EXECUTE FUNCTION exports_immutable()`
  yield* sql`
    CREATE TRIGGER export_chunks_immutable BEFORE UPDATE ON export_chunks
    FOR EACH ROW EXECUTE FUNCTION export_chunks_immutable()`
})
