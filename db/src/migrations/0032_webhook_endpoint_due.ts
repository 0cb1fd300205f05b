import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Each endpoint's pending deliveries by due time: a claim takes the oldest few due of each endpoint
 * (`WebhooksRepo.claimDue`) without sorting every due delivery of every endpoint.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
    WHERE status = 'pending'`
})
