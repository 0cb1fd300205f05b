import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { Review } from "@scaledger/db/classification/Review"
import { PAGE_ROWS } from "@scaledger/db/ledger/RowPages"
import { storeEvents } from "@scaledger/db/testing/StoredPages"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const WALLET = "0x00000000000000000000000000000000000000a1"
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const counterparty = (n: number) => `0x${(0xc000 + n).toString(16).padStart(40, "0")}`

/** A stored movement row that needs no review (the review lists do not name it). */
const movement = (id: string, day: string, n: number) => ({
  id,
  type: "transfer.in",
  token: "AAPL",
  day,
  needsReview: false,
  row: { wallet: WALLET, counterparty: counterparty(n), tokenAddress: counterparty(999), v: [id] }
})

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, Review.Default), database), {
      timeout: 120_000
    })((it) => {
      it.effect("PATCH finds an event that needs no review among the pages: by its transfer's day, else anywhere", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const review = yield* Review
          const { account } = yield* (yield* AccountsRepo).findOrCreate("review-pages")
          // Three pages of days in January; `onDay` is stored on the day of its transfer, `moved` on a day its
          // transfer no longer has (a re-org moved it to another block since the build).
          const days = (i: number) => `2024-01-${String(1 + Math.floor((i * 28) / (3 * PAGE_ROWS))).padStart(2, "0")}`
          const events = Array.from(
            { length: 3 * PAGE_ROWS },
            (_, i) => movement(i === 1500 ? `${hash(1)}:4` : i === 2500 ? `${hash(2)}:0` : `t:${i}`, days(i), i)
          )
          yield* storeEvents(account.id, events)
          const transfers = [
            { tx: hash(1), logIndex: 4, time: "2024-01-15T10:00:00Z" },
            { tx: hash(2), logIndex: 0, time: "2024-03-01T00:00:00Z" }
          ]
          for (const { logIndex, time, tx } of transfers) {
            yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                                                    token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN}, ${tx}, ${logIndex}, 1, ${hash(9)}, ${time}, ${counterparty(999)},
                               ${counterparty(0)}, ${WALLET}, ${counterparty(0)}, ${WALLET}, 1)`
          }
          expect(events[1500]!.day).toBe("2024-01-15")

          const onDay = yield* review.resolve(account.id, CHAIN, `${hash(1)}:4`, { relationship: "exchange" })
          expect(onDay).toMatchObject({ id: `${hash(1)}:4`, counterparty: counterparty(1500), needsReview: false })
          const moved = yield* review.resolve(account.id, CHAIN, `${hash(2)}:0`, { relationship: "self" })
          expect(moved).toMatchObject({ counterparty: counterparty(2500), relationship: "self", taxable: false })
          // An id that names no transfer is looked for in every page.
          const plain = yield* review.resolve(account.id, CHAIN, "t:2999", { relationship: "exchange" })
          expect(plain.counterparty).toBe(counterparty(2999))
          const labels = yield* sql<{ address_key: string; relationship: string }>`
            SELECT address_key, relationship FROM counterparty_labels WHERE account_id = ${account.id}
            ORDER BY address_key`
          expect(labels).toEqual([
            { address_key: counterparty(1500), relationship: "exchange" },
            { address_key: counterparty(2500), relationship: "self" },
            { address_key: counterparty(2999), relationship: "exchange" }
          ])

          // A transfer that is recorded but not in this account's record, and an id stored nowhere: not found.
          yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                                                  token_key, from_key, to_key, from_address, to_address, raw)
                     VALUES (${CHAIN}, ${hash(3)}, 0, 1, ${hash(9)}, '2024-01-15T00:00:00Z', ${counterparty(999)},
                             ${counterparty(0)}, ${WALLET}, ${counterparty(0)}, ${WALLET}, 1)`
          for (const id of [`${hash(3)}:0`, `${hash(4)}:0`, "t:3000"]) {
            const error = yield* Effect.flip(review.resolve(account.id, CHAIN, id, { relationship: "exchange" }))
            expect(error._tag).toBe("NotFound")
          }
        }))

      it.effect("the resolution's taxable is the event's as the replay makes it: only a disposal, by the country", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const review = yield* Review
          const { account } = yield* (yield* AccountsRepo).findOrCreate("review-taxable")
          // An arrival from one party and a departure to another, each awaiting review.
          const [inbound, outbound] = [`${hash(21)}:0`, `${hash(22)}:0`]
          const [sender, receiver] = [counterparty(21), counterparty(22)]
          yield* storeEvents(account.id, [
            { ...movement(inbound, "2024-02-01", 21), needsReview: true },
            { ...movement(outbound, "2024-02-01", 22), type: "transfer.out", needsReview: true }
          ])
          for (const [tx, from, to] of [[hash(21), sender, WALLET], [hash(22), WALLET, receiver]] as const) {
            yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                                                    token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN}, ${tx}, 0, 1, ${hash(9)}, '2024-02-01T00:00:00Z', ${counterparty(999)},
                               ${from}, ${to}, ${from}, ${to}, 1)`
            yield* sql`INSERT INTO transfer_classifications (account_id, chain_id, tx_hash, log_index, status, type,
                                                              relationship, classified_by)
                       VALUES (${account.id}, ${CHAIN}, ${tx}, 0, 'done', 'unknown', NULL, 'rule')`
          }
          const arrival = yield* review.resolve(account.id, CHAIN, inbound, { relationship: "exchange" })
          expect(arrival).toMatchObject({ counterparty: sender, relationship: "exchange", taxable: false })
          const sale = yield* review.resolve(account.id, CHAIN, outbound, { relationship: "exchange" })
          expect(sale).toMatchObject({ counterparty: receiver, relationship: "exchange", taxable: true })
          // Singapore taxes no disposal.
          yield* sql`INSERT INTO account_settings (account_id, country) VALUES (${account.id}, 'SG')
                     ON CONFLICT (account_id) DO UPDATE SET country = 'SG'`
          const inSingapore = yield* review.resolve(account.id, CHAIN, outbound, { relationship: "counterparty" })
          expect(inSingapore).toMatchObject({ relationship: "counterparty", taxable: false })
        }))

      it.effect("a new label of a counterparty is followed by the movements an earlier label settled", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const review = yield* Review
          const { account } = yield* (yield* AccountsRepo).findOrCreate("review-relabel")
          const party = counterparty(31)
          const ids = [`${hash(31)}:0`, `${hash(32)}:0`]
          yield* storeEvents(account.id, ids.map((id) => ({ ...movement(id, "2024-03-01", 31), type: "transfer.out" })))
          for (const tx of [hash(31), hash(32)]) {
            yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                                                    token_key, from_key, to_key, from_address, to_address, raw)
                       VALUES (${CHAIN}, ${tx}, 0, 1, ${hash(9)}, '2024-03-01T00:00:00Z', ${counterparty(999)},
                               ${WALLET}, ${party}, ${WALLET}, ${party}, 1)`
            // Settled by an earlier label of the counterparty (as a person).
            yield* sql`INSERT INTO transfer_classifications (account_id, chain_id, tx_hash, log_index, status, type,
                                                              relationship, classified_by, confirmed, counterparty_key)
                       VALUES (${account.id}, ${CHAIN}, ${tx}, 0, 'done', 'transfer.out', 'counterparty', 'user', true,
                               ${party})`
          }
          yield* review.resolve(account.id, CHAIN, ids[0]!, { relationship: "exchange" })
          const rows = yield* sql<{ relationship: string }>`
            SELECT relationship FROM transfer_classifications WHERE account_id = ${account.id} ORDER BY tx_hash`
          expect(rows.map((row) => row.relationship)).toEqual(["exchange", "exchange"])
        }))

      it.effect("a mint, burn or own-to-own movement is not reviewable; counts leave out what a pending label settles", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const review = yield* Review
          const { account } = yield* (yield* AccountsRepo).findOrCreate("review-counts")
          const own = "0x00000000000000000000000000000000000000b2"
          yield* sql`INSERT INTO wallets (account_id, address, address_key, self)
                     VALUES (${account.id}, ${own}, ${own}, true)`
          const zero = "0x0000000000000000000000000000000000000000"
          const needing = (id: string, party: string, type = "transfer.in") => ({
            id,
            type,
            token: "AAPL",
            day: "2024-02-01",
            needsReview: true,
            row: { wallet: WALLET, counterparty: party, tokenAddress: counterparty(999), v: [id] }
          })
          yield* storeEvents(account.id, [
            { ...needing("mint:0", zero, "mint"), needsReview: false },
            needing("own:0", own, "transfer.in"),
            needing("a:0", counterparty(1)),
            needing("a:1", counterparty(1)),
            needing("b:0", counterparty(2)),
            needing("b:1", counterparty(2)),
            needing("c:0", counterparty(3))
          ])
          for (const id of ["mint:0", "own:0"]) {
            const refused = yield* Effect.flip(review.resolve(account.id, CHAIN, id, { relationship: "self" }))
            expect(refused._tag, id).toBe("NotReviewable")
          }
          expect(yield* sql`SELECT 1 FROM counterparty_labels WHERE account_id = ${account.id}`).toEqual([])

          const first = yield* review.resolve(account.id, CHAIN, "a:0", { relationship: "exchange" })
          expect(first).toMatchObject({ alsoSettled: 1, stillNeedingReview: 4 })
          // Before a replay rebuilt the pages: what the first label settles is not counted again, nor left.
          const second = yield* review.resolve(account.id, CHAIN, "b:0", { relationship: "counterparty" })
          expect(second).toMatchObject({ alsoSettled: 1, stillNeedingReview: 2 })
          const again = yield* review.resolve(account.id, CHAIN, "a:1", { relationship: "exchange" })
          expect(again).toMatchObject({ alsoSettled: 0, stillNeedingReview: 2 })
        }))
    })
  })
}
