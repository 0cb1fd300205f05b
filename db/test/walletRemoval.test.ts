import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { accountWatching } from "@scaledger/db/testing/Watching"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Effect, Layer } from "effect"

const CHAIN = 31337
const TOKEN = `0x${"aa".repeat(20)}`
const KEPT = `0x${"a1".repeat(20)}`
const GOING = `0x${"a2".repeat(20)}`
const OUTSIDE = `0x${"0e".repeat(20)}`
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`

const services = Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default)

for (
  const [name, database] of [["PostgreSQL", TestDatabase.postgres], ["PGlite", TestDatabase.pglite]] as const
) {
  describe(name, () => {
    layer(Layer.provideMerge(services, database), { timeout: 120_000 })((it) => {
      it.effect("deleting an own address classifies its transfers with the other own address again, from that side", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const accountId = yield* accountWatching("removal", KEPT, CHAIN)
          yield* (yield* WalletsRepo).insert({
            accountId,
            address: GOING,
            label: "",
            self: true,
            watchingFromBlock: null,
            watchingFromAt: null,
            chainId: CHAIN
          })
          // 1: GOING → KEPT, classified from GOING's side before KEPT was own (a plain address then);
          // 2: KEPT → GOING, classified by the both-own rule; 3: GOING → KEPT, which the user labelled (counterparty
          // GOING, their own decision about the address that goes); 4: OUTSIDE → GOING only (its records go).
          const rows = [[1, GOING, KEPT], [2, KEPT, GOING], [3, GOING, KEPT], [4, OUTSIDE, GOING]] as const
          for (const [n, from, to] of rows) {
            yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                                                    token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN}, ${hash(n)}, 0, ${n}, ${hash(90 + n)}, '2026-11-02T00:00:00Z', ${TOKEN},
                               ${from}, ${to}, ${from}, ${to}, 1)`
            yield* sql`INSERT INTO tx_receipts (chain_id, tx_hash, block, block_hash, tx_from, status, logs)
                       VALUES (${CHAIN}, ${hash(n)}, ${n}, ${hash(90 + n)}, ${from}, 'success', '[]')`
          }
          const classify = (n: number, rule: string | null, by: string, counterparty: string) =>
            sql`INSERT INTO transfer_classifications (account_id, chain_id, tx_hash, log_index, status, type,
                                                      relationship, classified_by, confirmed, rule, counterparty_key)
                VALUES (${accountId}, ${CHAIN}, ${hash(n)}, 0, 'done', 'transfer.out', 'counterparty', ${by}, true,
                        ${rule}, ${counterparty})`
          yield* classify(1, "plain_address", "rule", KEPT)
          yield* classify(2, "both_own", "rule", GOING)
          yield* classify(3, null, "user", GOING)
          yield* classify(4, "plain_address", "rule", OUTSIDE)

          expect(yield* (yield* WalletsRepo).remove(accountId, GOING)).toBe(true)
          const states = yield* sql<{ tx_hash: string; status: string }>`
            SELECT tx_hash, status FROM transfer_classifications WHERE account_id = ${accountId} ORDER BY tx_hash`
          expect(states.map((s) => [s.tx_hash, s.status])).toEqual([
            [hash(1), "pending"],
            [hash(2), "pending"],
            [hash(3), "done"]
          ])
          // The transfer only the deleted address was a party to is gone, with its receipt; the others keep theirs.
          const receipts = yield* sql<{ tx_hash: string }>`SELECT tx_hash FROM tx_receipts ORDER BY tx_hash`
          expect(receipts.map((r) => r.tx_hash)).toEqual([hash(1), hash(2), hash(3)])
        }))
    })
  })
}
