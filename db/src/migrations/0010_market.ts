import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The EDGAR cache: one row per document the service read (the ticker map, and per issuer its recent filings and
  // its declared dividends), stored in the extracted form the reads use, with when it was fetched. `not_found`
  // remembers a 404 (an ETF without XBRL facts) so that it is not asked for again before the next refresh.
  yield* sql`
    CREATE TABLE edgar_documents (
      kind text NOT NULL CHECK (kind IN ('tickers', 'submissions', 'dividends')),
      cik bigint NOT NULL CHECK (cik >= 0),
      status text NOT NULL CHECK (status IN ('ok', 'not_found')),
      body jsonb,
      fetched_at timestamptz NOT NULL,
      PRIMARY KEY (kind, cik)
    )`
})
