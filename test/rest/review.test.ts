import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { insertPage } from "@scaledger/db/ledger/LedgerStore"
import { PageBuilder } from "@scaledger/db/ledger/RowPages"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ROBINHOOD_CHAIN_ID } from "@scaledger/workers/chain/ChainConfig"
import { Effect, Option } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

layer(restServer(TestDatabase.pglite), { timeout: 60_000 })("review reads and the account's build", (it) => {
  describe("GET /v1/counterparties/unlabeled", () => {
    it.effect("answers 503 with the reason when the account's ledger build failed, as every read of the build does", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("failed-build")
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("failed-build")))
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          INSERT INTO ledger_builds (account_id, requested_version, replay_version, built_version, built_at, status, error)
          VALUES (${account.id}, 2, 1, 2, now(), 'failed', 'an event the ledger refused')`
        const events = yield* call("GET", "/v1/events", { key })
        expect(events.status).toBe(503)
        const unlabeled = yield* call("GET", "/v1/counterparties/unlabeled", { key })
        expect(unlabeled.status).toBe(503)
        expect(unlabeled.body.error.code).toBe("service_unavailable")
        expect(unlabeled.body.error.message).toBe(events.body.error.message)
        expect(unlabeled.headers["request-id"]).toBe(unlabeled.body.error.requestId)
      }))

    it.effect("answers 409 replay_in_progress with Retry-After while a replay runs", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("replaying")
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("replaying")))
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          INSERT INTO ledger_builds (account_id, requested_version, replay_version, built_version, built_at, status)
          VALUES (${account.id}, 2, 2, 1, now(), 'ready')`
        const unlabeled = yield* call("GET", "/v1/counterparties/unlabeled", { key })
        expect(unlabeled.status).toBe(409)
        expect(unlabeled.body.error.code).toBe("replay_in_progress")
        expect(unlabeled.headers["retry-after"]).toBe("1")
      }))
  })

  describe("PATCH /v1/events/{id}", () => {
    const WALLET = "0x00000000000000000000000000000000000A11CE"
    const EXCHANGE = "0x00000000000000000000000000000000000E0C0E"
    const TX = `0x${"ab".repeat(32)}`

    /**
     * A stored build whose one event, a transfer from the wallet to `EXCHANGE`, awaits review and has no
     * classification row (built before the classifier queued its transfer): the ledger's rule default by direction.
     */
    const accountWithUnqueuedTransfer = (name: string, country: string) =>
      Effect.gen(function*() {
        const { key } = yield* newKey(name)
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(name)))
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO wallets (account_id, address, address_key, self)
                   VALUES (${account.id}, ${WALLET}, ${WALLET.toLowerCase()}, true)`
        yield* sql`INSERT INTO account_settings (account_id, country) VALUES (${account.id}, ${country})
                   ON CONFLICT (account_id) DO UPDATE SET country = EXCLUDED.country`
        yield* sql`
          INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key,
                                       to_key, from_address, to_address, raw)
          VALUES (${ROBINHOOD_CHAIN_ID}, ${TX}, 0, 100, ${`0x${"cd".repeat(32)}`}, '2026-03-02T15:00:00Z',
                  ${`0x${"11".repeat(20)}`}, ${WALLET.toLowerCase()}, ${EXCHANGE.toLowerCase()}, ${WALLET},
                  ${EXCHANGE}, 1000000000000000000)
          ON CONFLICT DO NOTHING`
        yield* sql`
          INSERT INTO ledger_builds (account_id, requested_version, replay_version, built_version, built_at, status)
          VALUES (${account.id}, 1, 0, 1, now(), 'ready')`
        const page = new PageBuilder("events", 0)
        page.addEvent({
          id: `${TX}:0`,
          type: "transfer.out",
          token: "AAPL",
          day: "2026-03-02",
          needsReview: true,
          row: { id: `${TX}:0`, type: "transfer.out", counterparty: EXCHANGE, wallet: WALLET }
        })
        yield* insertPage(sql, "ledger_event_pages", account.id, page.take())
        return key
      }).pipe(Effect.orDie)

    it.effect("says a transfer out labelled an exchange is taxable where disposals are, classified or not", () =>
      Effect.gen(function*() {
        const key = yield* accountWithUnqueuedTransfer("unqueued-us", "US")
        const reply = yield* call("PATCH", `/v1/events/${TX}:0`, { key, body: { relationship: "exchange" } })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body).toMatchObject({ id: `${TX}:0`, relationship: "exchange", taxable: true, needsReview: false })
      }))

    it.effect("says the same transfer labelled the holder's own is not taxable", () =>
      Effect.gen(function*() {
        const key = yield* accountWithUnqueuedTransfer("unqueued-self", "US")
        const reply = yield* call("PATCH", `/v1/events/${TX}:0`, { key, body: { relationship: "self" } })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body).toMatchObject({ relationship: "self", taxable: false })
      }))
  })
})
