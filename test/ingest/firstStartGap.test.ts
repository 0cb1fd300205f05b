import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Backfills } from "@scaledger/db/chain/Backfills"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { runBackfill } from "@scaledger/workers/ingest/Backfill"
import { Effect, Layer } from "effect"
import { addAndBackfill, ingestServices, issuerCall, recordToHead, seededChain } from "../support/ChainHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const WAD = 10n ** 18n

describe("the recorder's first start", () => {
  it.live(
    "extends a backfill that ended below its first head: a transfer in between is recorded exactly once",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = chain.manifest.tokens.find((t) => t.symbol === "TSLA")!.address
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // Added and backfilled before the recorder ever ran: the backfill ends at the head it saw.
          const wallet = yield* addAndBackfill(ALICE, node.chainId)
          expect(wallet.backfillStatus).toBe("complete")
          const backfillEnd = Number(wallet.backfillBlocksTotal) - 1 +
            Number((yield* sql<{ from_block: string }>`SELECT from_block FROM wallet_backfills`)[0]!.from_block)

          // Mined after the backfill's head, before the recorder's first head.
          const mint = yield* Effect.promise(() => issuerCall(node, tsla, "mint", [ALICE, 5n * WAD]))
          expect(mint.block).toBeGreaterThan(backfillEnd)
          yield* recordToHead
          const first = (yield* sql<{ block: string }>`SELECT block FROM chain_cursors WHERE name = 'recorder'`)[0]!
          expect(Number(first.block)).toBeGreaterThanOrEqual(mint.block)

          // The job is open again up to the recorder's cursor; the next claim covers the blocks in between.
          const reopened = yield* sql<{ backfill_status: string }>`SELECT backfill_status FROM wallets`
          expect(reopened[0]!.backfill_status).toBe("running")
          const [job] = yield* (yield* Backfills).claim(node.chainId, "test-worker", 10, 60)
          expect(job?.targetBlock).toBe(Number(first.block))
          yield* runBackfill(job!, "test-worker")

          yield* Effect.promise(() => node.mine(1))
          yield* recordToHead
          const rows = yield* sql<{ block: string; to_key: string }>`SELECT block, to_key FROM token_transfers
            WHERE tx_hash = ${mint.hash}`
          expect(rows.map((r) => [Number(r.block), r.to_key])).toEqual([[mint.block, ALICE.toLowerCase()]])
          const after = yield* sql<{ backfill_status: string; watching_from_block: string }>`
            SELECT backfill_status, watching_from_block FROM wallets`
          expect(after[0]!.backfill_status).toBe("complete")
          // watchingFrom keeps naming the first block the recorder recorded for the wallet.
          expect(Number(after[0]!.watching_from_block)).toBe(Number(first.block) + 1)
        }).pipe(
          Effect.provide(
            ingestServices({
              rpcUrl: node.httpUrl,
              chainId: node.chainId,
              tokenListPath: chain.tokenListPath
            }).pipe(Layer.provideMerge(TestDatabase.postgres))
          )
        )
      }).pipe(Effect.scoped),
    120_000
  )
})
