import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ExportStore } from "@scaledger/db/Exports"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Chunk, Effect, Layer, Stream } from "effect"
import { createHash } from "node:crypto"
import { seedStoredLedger } from "./syntheticLedger.js"

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
/** More pages than the writer keeps queued ahead of its reader (a page a batch). */
const EVENTS = 9_000

for (const [name, database] of [["PGlite", TestDatabase.pglite], ["PostgreSQL", TestDatabase.postgres]] as const) {
  describe(name, () => {
    layer(Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, ExportStore.Default), database), {
      timeout: 120_000,
      // The writer's patience with its reader is real time.
      excludeTestServices: true
    })((it) => {
      it.effect("a reader that stops reading does not hold the export's transaction: it commits, the rest is sent after", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { account } = yield* (yield* AccountsRepo).findOrCreate(`export-stall-${name}`)
          yield* sql`INSERT INTO wallets (account_id, address, address_key, label, self)
                     VALUES (${account.id}, ${WALLET}, ${WALLET.toLowerCase()}, 'w', true)`
          yield* seedStoredLedger(account.id, WALLET, EVENTS)
          const started = yield* (yield* ExportStore).create({ accountId: account.id, format: "activity" })

          // Nothing of the body is read. On the embedded database this statement waits for the export's session.
          const [stored] = yield* sql<{ complete: boolean; sha256: string; row_count: string }>`
            SELECT complete, sha256, row_count FROM exports WHERE id = ${started.id}`.pipe(
            Effect.repeat({ until: (rows) => rows[0]?.complete === true, schedule: undefined }),
            Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => "the export stayed uncommitted" })
          )
          expect(stored).toMatchObject({ complete: true, row_count: String(EVENTS) })

          // The reader comes back: every byte, in order, as stored.
          const bytes = Buffer.concat(Chunk.toArray(yield* Stream.runCollect(started.body)))
          expect(createHash("sha256").update(bytes).digest("hex")).toBe(stored!.sha256)
          expect(bytes.toString("utf8").trimEnd().split("\r\n")).toHaveLength(EVENTS + 1)
        }))
    })
  })
}
