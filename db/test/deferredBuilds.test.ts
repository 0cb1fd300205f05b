import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { type ClassificationResult, ClassificationStore } from "@scaledger/db/classification/ClassificationStore"
import { invalidateLedgers } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const WALLET = `0x${"1".padStart(40, "0")}`
const txHash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const OWNER = "classifier"

const decided = (accountId: string, n: number): ClassificationResult => ({
  accountId,
  chainId: CHAIN,
  txHash: txHash(n),
  logIndex: 0,
  type: n === 1 ? null : "transfer.in",
  relationship: n === 1 ? null : "counterparty",
  classifiedBy: "ai_labeled",
  confirmed: false,
  rule: null,
  counterpartyKey: n === 1 ? null : `0x${"e".padStart(40, "0")}`,
  model: "embedded",
  confidence: 0.8125,
  rationale: `a "quoted" rationale, with a comma, a backslash \\ and ünïcode #${n}`,
  error: null
})

for (const [name, database] of backends) {
  describe(name, () => {
    layer(
      Layer.provideMerge(
        Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default, LedgerStore.Default, ClassificationStore.Default),
        database
      ),
      { timeout: 60_000 }
    )((it) => {
      it.effect(
        "a classified batch with more of the account's transfers queued asks for a build that waits the longer interval; its last batch and other requests do not wait",
        () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const builds = yield* LedgerStore
            const classifications = yield* ClassificationStore
            const { account } = yield* (yield* AccountsRepo).findOrCreate("deferred")
            yield* (yield* WalletsRepo).insert({
              accountId: account.id,
              address: WALLET,
              label: "",
              self: true,
              watchingFromBlock: null,
              watchingFromAt: null,
              chainId: CHAIN
            })
            for (const n of [1, 2, 3]) {
              yield* sql`INSERT INTO transfer_classifications (account_id, chain_id, tx_hash, log_index, lease_owner,
                                                                lease_until)
                         VALUES (${account.id}, ${CHAIN}, ${txHash(n)}, 0, ${OWNER}, now() + interval '5 minutes')`
            }
            /** The account's build stored 10 seconds ago, covering every request so far. */
            const built = sql`INSERT INTO ledger_builds (account_id, built_version, built_at)
                              VALUES (${account.id}, 1, now() - interval '10 seconds')
                              ON CONFLICT (account_id) DO UPDATE SET built_version = ledger_builds.requested_version,
                                built_at = EXCLUDED.built_at, lease_owner = NULL, lease_until = NULL`
            /** Whether a worker would take the build now: no minimum interval, `deferredMs` for deferred ones. */
            const due = (deferredMs: number) =>
              Effect.map(builds.claim("worker", 1, 60, 0, deferredMs), (claimed) => claimed.map((b) => b.accountId))
            const release = sql`UPDATE ledger_builds SET lease_owner = NULL, lease_until = NULL`
            yield* built

            // The first batch: two transfers still queued, so its build may wait 60 s (only 10 s have passed).
            expect(yield* classifications.complete(OWNER, [decided(account.id, 1)])).toBe(1)
            expect(yield* due(60_000)).toEqual([])
            expect(yield* due(5_000)).toEqual([account.id])
            yield* built

            // A movement of the wallet after it is taken at once.
            expect(yield* classifications.complete(OWNER, [decided(account.id, 2)])).toBe(1)
            yield* invalidateLedgers({ chainId: CHAIN, addresses: [WALLET] })
            expect(yield* due(60_000)).toEqual([account.id])
            yield* built

            // A movement waiting for its build keeps it prompt when a classified batch comes after it.
            yield* sql`UPDATE transfer_classifications SET status = 'pending', lease_owner = ${OWNER},
                         lease_until = now() + interval '5 minutes'
                       WHERE account_id = ${account.id} AND tx_hash = ${txHash(2)}`
            yield* invalidateLedgers({ chainId: CHAIN, addresses: [WALLET] })
            expect(yield* classifications.complete(OWNER, [decided(account.id, 2)])).toBe(1)
            expect(yield* due(60_000)).toEqual([account.id])
            yield* built

            // The last batch (nothing of the account queued after it) is taken at once.
            expect(yield* classifications.complete(OWNER, [decided(account.id, 3)])).toBe(1)
            expect(yield* due(60_000)).toEqual([account.id])
            yield* release

            // Every decision was stored as given, and a batch given again (its lease gone) writes nothing.
            const rows = yield* sql<{
              tx_hash: string
              status: string
              type: string | null
              classified_by: string | null
              counterparty_key: string | null
              confidence: number
              rationale: string
              lease_owner: string | null
            }>`SELECT tx_hash, status, type, classified_by, counterparty_key, confidence, rationale, lease_owner
               FROM transfer_classifications WHERE account_id = ${account.id} ORDER BY tx_hash`
            expect(rows).toEqual([1, 2, 3].map((n) => {
              const d = decided(account.id, n)
              return {
                tx_hash: d.txHash,
                status: "done",
                type: d.type,
                classified_by: d.type === null ? null : d.classifiedBy,
                counterparty_key: d.counterpartyKey,
                confidence: d.confidence,
                rationale: d.rationale,
                lease_owner: null
              }
            }))
            expect(yield* classifications.complete(OWNER, [decided(account.id, 3)])).toBe(0)
          })
      )
    })
  })
}
