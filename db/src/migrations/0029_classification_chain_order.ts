import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The block of each queued transfer, so the classifier takes an account's transfers in chain order: a ledger build
 * keeps its checkpoint behind the account's first transfer still queued, and that checkpoint then moves forward with
 * each batch instead of waiting until the whole account is classified. The pending index follows the claim's order.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transfer_classifications ADD COLUMN block bigint`
  yield* sql`
    UPDATE transfer_classifications c SET block = t.block
    FROM token_transfers t
    WHERE t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash AND t.log_index = c.log_index`
  yield* sql`DROP INDEX transfer_classifications_pending`
  yield* sql`CREATE INDEX transfer_classifications_pending
    ON transfer_classifications (created_at, account_id, block, log_index) WHERE status = 'pending'`
})
