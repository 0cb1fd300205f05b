import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The classification worker reads a transaction's sender and target with its method selector (one
  // `eth_getTransactionByHash`), only for the movements that reach the model: ingestion no longer reads receipts.
  // Rows stored before keep null here and take both from `tx_receipts`.
  yield* sql`ALTER TABLE tx_methods ADD COLUMN tx_from text, ADD COLUMN tx_to text`
})
