import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
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
})
