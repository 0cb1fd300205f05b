import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Asks for new builds of the ledgers that depend on the given chain data. Called inside the transaction that
 * writes the data, so a build never misses it: accounts watching one of `addresses`, and accounts holding or
 * having held one of `tokens`. A build asked for by the movements of its own addresses is marked as such
 * (`movement_version`): those are taken first.
 */
export const invalidateLedgers = (input: {
  readonly chainId: number
  readonly addresses?: ReadonlyArray<string>
  readonly tokens?: ReadonlyArray<string>
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const addresses = [...new Set((input.addresses ?? []).map((a) => a.toLowerCase()))]
    const tokens = [...new Set((input.tokens ?? []).map((t) => t.toLowerCase()))]
    if (addresses.length === 0 && tokens.length === 0) return
    const byAddress = addresses.length === 0 ? sql`false` : sql`w.address_key IN ${sql.in(addresses)}`
    // One lookup per side, each along its (chain, address) index.
    const byToken = tokens.length === 0 ? sql`false` : sql`
      EXISTS (SELECT 1 FROM token_transfers t
              WHERE t.chain_id = ${input.chainId} AND t.from_key = w.address_key AND t.token_key IN ${sql.in(tokens)})
      OR EXISTS (SELECT 1 FROM token_transfers t
                 WHERE t.chain_id = ${input.chainId} AND t.to_key = w.address_key AND t.token_key IN ${sql.in(tokens)})`
    yield* sql`
      INSERT INTO ledger_builds (account_id, movement_version)
      SELECT w.account_id, CASE WHEN bool_or(${byAddress}) THEN 1 ELSE 0 END
      FROM wallets w WHERE ${byAddress} OR ${byToken}
      GROUP BY w.account_id
      ON CONFLICT (account_id) DO UPDATE SET
        requested_version = ledger_builds.requested_version + 1, requested_at = now(),
        movement_version = CASE WHEN EXCLUDED.movement_version > 0 THEN ledger_builds.requested_version + 1
                           ELSE ledger_builds.movement_version END`
  })

/**
 * Asks for a replay of the account's ledger: its history is rebuilt under new rules, and reads that depend on it
 * answer 409 until it is stored.
 */
export const requestReplay = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO ledger_builds (account_id, requested_version, replay_version)
      VALUES (${accountId}, 1, 1)
      ON CONFLICT (account_id) DO UPDATE SET
        requested_version = ledger_builds.requested_version + 1,
        replay_version = ledger_builds.requested_version + 1,
        requested_at = now()`
  })
