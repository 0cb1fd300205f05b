/**
 * The ledger worker's price rounds kept between builds (`makePriceHistory`): after any sequence of recorded rounds
 * (new ones, older ones a history walk finds, rounds of tokens it holds but was not asked for, rounds committed while
 * it read), it gives exactly what reading every round again gives, and a token's rounds stay the same array while
 * none arrive.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { type PriceRoundRow, PriceRounds } from "@scaledger/db/chain/PriceRounds"
import type { LedgerToken } from "@scaledger/db/ledger/LedgerInputs"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { makePriceHistory } from "@scaledger/workers/ledger/PriceHistory"
import { Deferred, Effect, Fiber, Layer } from "effect"

const CHAIN = 31337
const token = (n: number, symbol: string): LedgerToken => {
  const address = `0x${(0xa0 + n).toString(16).padStart(40, "0")}`
  return { key: address, address, symbol }
}
const AAPL = token(1, "AAPL")
const TSLA = token(2, "TSLA")
const FEEDS = { AAPL: "0x00000000000000000000000000000000000000F1", TSLA: "0x00000000000000000000000000000000000000F2" }

const rounds = (t: LedgerToken, ids: ReadonlyArray<number>, decimals = 8): Array<PriceRoundRow> =>
  ids.map((id) => ({
    feed: FEEDS[t.symbol as keyof typeof FEEDS],
    token: t.address,
    roundId: BigInt(id),
    answer: BigInt(100 + id) * 10n ** BigInt(decimals),
    decimals,
    startedAt: 1_700_000_000 + id * 60,
    updatedAt: 1_700_000_000 + id * 60,
    answeredInRound: BigInt(id)
  }))

/** What a build gets from reading every round again. */
const everyRound = (tokens: ReadonlyArray<LedgerToken>) =>
  Effect.map(
    Effect.flatMap(PriceRounds, (p) => p.roundsFor(CHAIN, tokens.map((t) => t.key))),
    (byKey) => Object.fromEntries(tokens.map((t) => [t.symbol, byKey[t.key] ?? []]))
  )

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

for (const [name, database] of backends) {
  describe(`${name}: price rounds kept between builds`, () => {
    layer(Layer.provideMerge(PriceRounds.Default, database), { timeout: 120_000 })((it) => {
      it.effect("equal every round read again, through new rounds, older ones and tokens not asked for", () =>
        Effect.gen(function*() {
          const prices = yield* PriceRounds
          const history = yield* makePriceHistory(prices)
          yield* prices.store(CHAIN, [...rounds(AAPL, [10, 11, 12]), ...rounds(TSLA, [5, 6])])

          const first = yield* history.pricesFor(CHAIN, [AAPL])
          expect(first).toEqual(yield* everyRound([AAPL]))
          expect(first.AAPL).toHaveLength(3)
          // Nothing new: the same array, so the ledger does not parse it again.
          expect((yield* history.pricesFor(CHAIN, [AAPL])).AAPL).toBe(first.AAPL)

          // A newer round, and older ones a history walk found (18 decimals, rescaled to 8), then TSLA asked for.
          yield* prices.store(CHAIN, rounds(AAPL, [13]))
          yield* prices.store(CHAIN, rounds(AAPL, [2, 3], 18))
          const both = yield* history.pricesFor(CHAIN, [AAPL, TSLA])
          expect(both).toEqual(yield* everyRound([AAPL, TSLA]))
          expect(both.AAPL!.map((r) => r.roundId)).toEqual(["2", "3", "10", "11", "12", "13"])

          // TSLA is held: its new round is read by a build asking only for AAPL, and kept for the next asking for it.
          yield* prices.store(CHAIN, rounds(TSLA, [7, 100]))
          const onlyAapl = yield* history.pricesFor(CHAIN, [AAPL])
          expect(onlyAapl.AAPL).toBe(both.AAPL)
          const tsla = yield* history.pricesFor(CHAIN, [TSLA])
          expect(tsla).toEqual(yield* everyRound([TSLA]))
          expect(tsla.TSLA!.map((r) => r.roundId)).toEqual(["5", "6", "7", "100"])
          // A token with no rounds at all.
          const none = token(9, "NONE")
          expect(yield* history.pricesFor(CHAIN, [none, AAPL])).toEqual({ NONE: [], AAPL: both.AAPL })
        }))

      if (name === "PostgreSQL") {
        it.effect("reads a round committed after a read that could not see it", () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const prices = yield* PriceRounds
            const history = yield* makePriceHistory(prices)
            const MU = token(3, "MU")
            const muFeed = "0x00000000000000000000000000000000000000f3"
            const row = (id: number) =>
              sql`INSERT INTO price_rounds (chain_id, feed_key, round_id, feed_address, token_key, answer, decimals,
                                            started_at, updated_at, answered_in_round)
                  VALUES (${CHAIN}, ${muFeed}, ${id}, ${muFeed}, ${MU.key}, ${id * 1e8}, 8,
                          to_timestamp(${1_700_000_000 + id}), to_timestamp(${1_700_000_000 + id}), ${id})`
            yield* row(1)
            expect((yield* history.pricesFor(CHAIN, [MU])).MU).toHaveLength(1)
            // A transaction records round 2 and stays open across the next read.
            const inserted = yield* Deferred.make<void>()
            const commit = yield* Deferred.make<void>()
            const writer = yield* Effect.fork(sql.withTransaction(
              Effect.zipRight(
                Effect.zipRight(row(2), Deferred.succeed(inserted, undefined)),
                Deferred.await(commit)
              )
            ))
            yield* Deferred.await(inserted)
            yield* row(3)
            expect((yield* history.pricesFor(CHAIN, [MU])).MU!.map((r) => r.roundId)).toEqual(["1", "3"])
            yield* Deferred.succeed(commit, undefined)
            yield* Fiber.join(writer)
            const after = yield* history.pricesFor(CHAIN, [MU])
            expect(after.MU!.map((r) => r.roundId)).toEqual(["1", "2", "3"])
            expect(after).toEqual(yield* everyRound([MU]))
          }))
      }
    })
  })
}
