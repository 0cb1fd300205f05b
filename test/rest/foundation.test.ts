import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { Effect, Exit, Fiber, Option, Stream } from "effect"
import { call, newKey, type Reply, restServer } from "../support/RestHarness.js"

const AAPL = "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"
const CRWD = "0xea72Ecca2d0f6bFA1394DBBCff85b52CD4233931"

/** Every failure: the status, the one envelope, a request id equal to the header, a docUrl to the code's anchor. */
const expectError = (reply: Reply, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(Object.keys(reply.body)).toEqual(["error"])
  const error = reply.body.error
  expect(error.code).toBe(code)
  expect(typeof error.message).toBe("string")
  expect(error.message.length).toBeGreaterThan(0)
  expect(error.requestId).toMatch(/^req_[0-9A-Za-z]{20}$/)
  expect(reply.headers["request-id"]).toBe(error.requestId)
  expect(error.docUrl).toMatch(new RegExp(`^http://[^/]+/docs/errors#${code}$`))
  expect(Object.keys(error).every((k) => ["code", "message", "docUrl", "requestId", "details"].includes(k))).toBe(true)
  return error
}

layer(restServer(TestDatabase.postgres), { timeout: 60_000 })("REST foundation", (it) => {
  describe("authentication", () => {
    it.effect("answers 401 without a key, with WWW-Authenticate and no error code", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/v1/wallets")
        expectError(reply, 401, "unauthorized")
        expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="scaledger"`)
      }))

    it.effect("answers 401 for empty, malformed and unknown keys", () =>
      Effect.gen(function*() {
        const cases = [
          ["Bearer ", `Bearer realm="scaledger"`],
          ["Basic dXNlcjpwYXNz", `Bearer realm="scaledger"`],
          ["Bearer a b", `Bearer realm="scaledger"`],
          ["Bearer sk_live_short", `Bearer realm="scaledger", error="invalid_token"`],
          [`Bearer sk_live_${"A".repeat(32)}`, `Bearer realm="scaledger", error="invalid_token"`]
        ] as const
        for (const [authorization, challenge] of cases) {
          const reply = yield* call("GET", "/v1/settings", { headers: { authorization } })
          expectError(reply, 401, "unauthorized")
          expect(reply.headers["www-authenticate"], authorization).toBe(challenge)
        }
      }))

    it.effect("refuses a key whose hash does not match even when its prefix does", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("prefix-owner")
        const forged = key.slice(0, 16) + "Z".repeat(key.length - 16)
        expectError(yield* call("GET", "/v1/settings", { key: forged }), 401, "unauthorized")
        expect((yield* call("GET", "/v1/settings", { key })).status).toBe(200)
      }))

    it.effect("refuses a revoked key and keeps the account's other keys working", () =>
      Effect.gen(function*() {
        const first = yield* newKey("revoker")
        const second = yield* newKey("revoker")
        expect((yield* call("GET", "/v1/wallets", { key: first.key })).status).toBe(200)
        const keys = yield* ApiKeys
        expect(Option.isSome(yield* Effect.orDie(keys.revoke(first.keyId)))).toBe(true)
        const reply = yield* call("GET", "/v1/wallets", { key: first.key })
        expectError(reply, 401, "unauthorized")
        expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="scaledger", error="invalid_token"`)
        expect((yield* call("GET", "/v1/wallets", { key: second.key })).status).toBe(200)
      }))
  })

  describe("wallets", () => {
    it.effect("adds a wallet, stores it checksummed, and returns the existing one on re-adding", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("adder")
        const created = yield* call("POST", "/v1/wallets", {
          key,
          body: { address: AAPL.toLowerCase(), label: "main" }
        })
        expect(created.status).toBe(201)
        expect(created.headers["request-id"]).toMatch(/^req_/)
        expect(created.body).toMatchObject({
          address: AAPL,
          label: "main",
          self: true,
          watchingFrom: { block: null, date: null },
          backfill: { status: "running", coverageGaps: [] }
        })
        const again = yield* call("POST", "/v1/wallets", {
          key,
          body: { address: AAPL.toUpperCase().replace("0X", "0x"), label: "other" }
        })
        expect(again.status).toBe(200)
        expect(again.body).toEqual(created.body)
        const list = yield* call("GET", "/v1/wallets", { key })
        expect(list.body).toEqual({ wallets: [created.body], nextCursor: null })
        const one = yield* call("GET", `/v1/wallets/${AAPL.toLowerCase()}`, { key })
        expect(one.body).toEqual(created.body)
      }))

    it.effect("takes self: false and label changes through PATCH", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("patcher")
        const created = yield* call("POST", "/v1/wallets", { key, body: { address: CRWD, self: false } })
        expect(created.body).toMatchObject({ label: "", self: false })
        const patched = yield* call("PATCH", `/v1/wallets/${CRWD}`, { key, body: { label: "cold", self: true } })
        expect(patched.status).toBe(200)
        expect(patched.body).toMatchObject({ address: CRWD, label: "cold", self: true })
        const labelOnly = yield* call("PATCH", `/v1/wallets/${CRWD}`, { key, body: { label: "cold storage" } })
        expect(labelOnly.body).toMatchObject({ label: "cold storage", self: true })
      }))

    it.effect("a change of self made while another commits asks for the replay its own change needs", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("self-race")
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("self-race")))
        yield* call("POST", "/v1/wallets", { key, body: { address: CRWD, self: false } })
        const sql = yield* SqlClient.SqlClient
        const replays = Effect.map(
          Effect.orDie(sql<{ replay_version: string }>`
            SELECT replay_version FROM ledger_builds WHERE account_id = ${account.id}`),
          (rows) => Number(rows[0]?.replay_version ?? 0)
        )
        // Another client marks it own (and asks for its replay); before that commits, this one marks it not own.
        const { afterOther, patch } = yield* Effect.orDie(sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE wallets SET self = true WHERE account_id = ${account.id}`
          yield* requestReplay(account.id)
          const afterOther = yield* replays
          const patch = yield* Effect.fork(call("PATCH", `/v1/wallets/${CRWD}`, { key, body: { self: false } }))
          // Real time (not the test clock): the request reaches the database meanwhile.
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_000)))
          return { afterOther, patch }
        })))
        const answer = yield* Fiber.join(patch)
        expect(answer.body).toMatchObject({ self: false })
        // The wallet went from own to not own: its history is replayed again (the other's replay may be built
        // before this change, and with own transfers that are no longer own).
        expect(yield* replays).toBeGreaterThan(afterOther)
      }))

    it.effect("deletes a wallet, then answers 404 for it", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("deleter")
        yield* call("POST", "/v1/wallets", { key, body: { address: AAPL } })
        const removed = yield* call("DELETE", `/v1/wallets/${AAPL}`, { key })
        expect(removed.status).toBe(204)
        expect(removed.text).toBe("")
        expectError(yield* call("DELETE", `/v1/wallets/${AAPL}`, { key }), 404, "not_found")
        expectError(yield* call("GET", `/v1/wallets/${AAPL}`, { key }), 404, "not_found")
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
      }))

    it.effect("pages with limit and an opaque cursor, in order of creation", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("paginator")
        const addresses = Array.from({ length: 5 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`)
        for (const address of addresses) yield* call("POST", "/v1/wallets", { key, body: { address } })
        const seen: Array<string> = []
        let cursor: string | null = null
        let pages = 0
        do {
          const page: Reply = yield* call("GET", `/v1/wallets?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`, {
            key
          })
          expect(page.status).toBe(200)
          for (const w of page.body.wallets as ReadonlyArray<{ address: string }>) seen.push(w.address.toLowerCase())
          cursor = page.body.nextCursor
          pages++
        } while (cursor !== null)
        expect(seen).toEqual(addresses)
        expect(pages).toBe(3)
        expectError(yield* call("GET", "/v1/wallets?cursor=bm90LWEtY3Vyc29y", { key }), 400, "invalid_request")
        expectError(yield* call("GET", "/v1/wallets?limit=0", { key }), 400, "invalid_request")
        expectError(yield* call("GET", "/v1/wallets?limit=501", { key }), 400, "invalid_request")
        expectError(yield* call("GET", "/v1/wallets?limit=ten", { key }), 400, "invalid_request")
      }))

    it.effect("rejects bad addresses with invalid_address", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("typo")
        const bad = [
          "0x123",
          "af3d76f1834a1d425780943c99ea8a608f8a93f9",
          "0xZZ3D76f1834A1d425780943C99Ea8A608f8a93f9",
          "0xaF3D76f1834A1d425780943C99Ea8A608f8a93F9", // one letter's case flipped: checksum fails
          ""
        ]
        for (const address of bad) {
          const error = expectError(
            yield* call("POST", "/v1/wallets", { key, body: { address } }),
            400,
            "invalid_address"
          )
          expect(error.details.address).toBe(address)
        }
        // The zero address is where tokens are minted from and burned to: nobody's wallet.
        const zero = expectError(
          yield* call("POST", "/v1/wallets", { key, body: { address: `0x${"0".repeat(40)}` } }),
          400,
          "invalid_address"
        )
        expect(zero.details.reason).toBe("zero_address")
        const long = expectError(
          yield* call("POST", "/v1/wallets", { key, body: { address: `0x${"a".repeat(100_000)}` } }),
          400,
          "invalid_address"
        )
        expect(long.details.address).toBe(`0x${"a".repeat(62)}…`)
        expect(long.message.length).toBeLessThan(200)
        expectError(yield* call("GET", "/v1/wallets/not-an-address", { key }), 400, "invalid_address")
        expectError(yield* call("DELETE", "/v1/wallets/0x12", { key }), 400, "invalid_address")
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
      }))

    it.effect("rejects unknown fields, wrong types, missing fields and broken JSON with invalid_request", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("sloppy")
        const unknownField = expectError(
          yield* call("POST", "/v1/wallets", { key, body: { address: AAPL, privateKey: "0xabc" } }),
          400,
          "invalid_request"
        )
        expect(unknownField.details.issues).toEqual([expect.objectContaining({ path: ["privateKey"] })])
        const wrongType = expectError(
          yield* call("POST", "/v1/wallets", { key, body: { address: AAPL, self: "yes" } }),
          400,
          "invalid_request"
        )
        expect(wrongType.details.issues[0].path).toEqual(["self"])
        expectError(yield* call("POST", "/v1/wallets", { key, body: { label: "no address" } }), 400, "invalid_request")
        expectError(yield* call("POST", "/v1/wallets", { key, body: [AAPL] }), 400, "invalid_request")
        expectError(yield* call("POST", "/v1/wallets", { key, rawBody: "{\"address\":" }), 400, "invalid_request")
        expectError(
          yield* call("PATCH", `/v1/wallets/${AAPL}`, { key, body: { address: CRWD } }),
          400,
          "invalid_request"
        )
        // Nothing was half-written by any of these.
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
      }))

    it.effect("answers 413 for bodies over 1 MiB, declared or streamed", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("big")
        const huge = { address: AAPL, label: "x".repeat(1024 * 1024 + 10) }
        expectError(yield* call("POST", "/v1/wallets", { key, body: huge }), 413, "payload_too_large")
        // Without a Content-Length (chunked), the limit applies while reading: the server stops reading and drops
        // the connection (a client still sending may see a reset instead of the 413); nothing is written.
        const chunk = new TextEncoder().encode(JSON.stringify(huge))
        const streamed = yield* Effect.exit(
          call("POST", "/v1/wallets", { key, stream: Stream.make(chunk.slice(0, 1000), chunk.slice(1000)) })
        )
        if (Exit.isSuccess(streamed)) expectError(streamed.value, 413, "payload_too_large")
        expect((yield* call("GET", "/healthz")).status).toBe(200)
        expect((yield* call("GET", "/v1/wallets", { key })).body.wallets).toEqual([])
      }))
  })

  describe("isolation between accounts", () => {
    it.effect("gives account B a 404 for A's wallet on read, change and delete", () =>
      Effect.gen(function*() {
        const a = yield* newKey("isolated-a")
        const b = yield* newKey("isolated-b")
        yield* call("POST", "/v1/wallets", { key: a.key, body: { address: AAPL, label: "a's" } })
        expectError(yield* call("GET", `/v1/wallets/${AAPL}`, { key: b.key }), 404, "not_found")
        expectError(
          yield* call("PATCH", `/v1/wallets/${AAPL}`, { key: b.key, body: { label: "b was here" } }),
          404,
          "not_found"
        )
        expectError(yield* call("DELETE", `/v1/wallets/${AAPL}`, { key: b.key }), 404, "not_found")
        expect((yield* call("GET", "/v1/wallets", { key: b.key })).body.wallets).toEqual([])
        yield* call("PUT", "/v1/settings", { key: b.key, body: { country: "DE" } })
        const stillA = yield* call("GET", `/v1/wallets/${AAPL}`, { key: a.key })
        expect(stillA.body).toMatchObject({ label: "a's" })
        expect((yield* call("GET", "/v1/settings", { key: a.key })).body.country).toBe("US")
        // B may watch the same address as its own wallet, separately from A's.
        expect((yield* call("POST", "/v1/wallets", { key: b.key, body: { address: AAPL, label: "b's" } })).status).toBe(
          201
        )
        expect((yield* call("GET", `/v1/wallets/${AAPL}`, { key: a.key })).body.label).toBe("a's")
      }))
  })

  describe("settings", () => {
    it.effect("defaults to US and USD, and stores changes", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("settler")
        expect((yield* call("GET", "/v1/settings", { key })).body).toEqual({
          country: "US",
          reportingCurrency: "USD",
          lotMatching: "fifo",
          lotScope: "wallet"
        })
        const put = yield* call("PUT", "/v1/settings", { key, body: { country: "DE", reportingCurrency: "eur" } })
        expect(put.body).toEqual({ country: "DE", reportingCurrency: "EUR", lotMatching: "fifo", lotScope: "account" })
        const partial = yield* call("PUT", "/v1/settings", { key, body: { reportingCurrency: "SGD" } })
        expect(partial.body).toMatchObject({ country: "DE", reportingCurrency: "SGD" })
        expect((yield* call("GET", "/v1/settings", { key })).body).toMatchObject({
          country: "DE",
          reportingCurrency: "SGD"
        })
      }))

    it.effect("a change of one field keeps the other's concurrent change (no lost update)", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("two-clients")
        const account = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("two-clients")))
        const sql = yield* SqlClient.SqlClient
        // Another client's change of the country, not committed yet, while this client changes the currency.
        const currency = yield* Effect.orDie(sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE account_settings SET country = 'DE' WHERE account_id = ${account.id}`
          const put = yield* Effect.fork(call("PUT", "/v1/settings", { key, body: { reportingCurrency: "EUR" } }))
          // Real time (not the test clock): the request reaches the database meanwhile.
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_000)))
          return put
        })))
        const answer = yield* Fiber.join(currency)
        expect(answer.status).toBe(200)
        expect(answer.body).toMatchObject({ country: "DE", reportingCurrency: "EUR" })
        expect((yield* call("GET", "/v1/settings", { key })).body).toMatchObject({
          country: "DE",
          reportingCurrency: "EUR"
        })
      }))

    it.effect("rejects unsupported currencies and countries, leaving settings unchanged", () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("unsettled")
        const currency = expectError(
          yield* call("PUT", "/v1/settings", { key, body: { reportingCurrency: "BTC" } }),
          400,
          "unsupported_currency"
        )
        expect(currency.details.supported).toHaveLength(21)
        expect(currency.details.supported).toContain("SGD")
        expectError(
          yield* call("PUT", "/v1/settings", { key, body: { reportingCurrency: "BGN" } }),
          400,
          "unsupported_currency"
        )
        const country = expectError(
          yield* call("PUT", "/v1/settings", { key, body: { country: "FR" } }),
          400,
          "invalid_request"
        )
        expect(country.details.supported).toEqual(["US", "SG", "DE"])
        // Letter case means ASCII letter case, as the document's patterns say: `ſ` (long s) and `ı` (dotless i)
        // upper-case to S and I in JavaScript, yet "uſ", "ſg", "uſd" and "ınr" are no country or currency code.
        for (const body of [{ country: "uſ" }, { country: "ſg" }]) {
          expectError(yield* call("PUT", "/v1/settings", { key, body }), 400, "invalid_request")
        }
        for (const body of [{ reportingCurrency: "uſd" }, { reportingCurrency: "ınr" }]) {
          expectError(yield* call("PUT", "/v1/settings", { key, body }), 400, "unsupported_currency")
        }
        expectError(
          yield* call("PUT", "/v1/settings", { key, body: { country: "SG", lotMatching: "lifo" } }),
          400,
          "invalid_request"
        )
        expect((yield* call("GET", "/v1/settings", { key })).body).toMatchObject({
          country: "US",
          reportingCurrency: "USD"
        })
      }))
  })

  describe("documentation and probes", () => {
    it.effect("serves the OpenAPI document, the API reference and an anchor per error code, without a key", () =>
      Effect.gen(function*() {
        const openapi = yield* call("GET", "/v1/openapi.json")
        expect(openapi.status).toBe(200)
        expect(Object.keys(openapi.body.paths)).toEqual(
          expect.arrayContaining(["/v1/wallets", "/v1/wallets/{address}", "/v1/settings"])
        )
        // Twice: the first request loads Scalar's page, the second is served from what the first built.
        for (const _ of [1, 2]) {
          const docs = yield* call("GET", "/docs")
          expect(docs.status).toBe(200)
          expect(docs.text).toContain("<html")
          expect(docs.text).toContain(`<script id="api-reference" type="application/json">`)
        }
        const errors = yield* call("GET", "/docs/errors")
        for (
          const code of [
            "unauthorized",
            "not_found",
            "invalid_address",
            "invalid_request",
            "unsupported_currency",
            "payload_too_large"
          ]
        ) {
          expect(errors.text).toContain(`id="${code}"`)
        }
      }))

    it.effect("answers health and readiness without a key", () =>
      Effect.gen(function*() {
        expect((yield* call("GET", "/healthz")).body).toEqual({ status: "ok" })
        const ready = yield* call("GET", "/readyz")
        expect(ready.status).toBe(200)
        expect(ready.body.status).toBe("ready")
      }))

    it.effect("answers unknown routes in the error envelope", () =>
      Effect.gen(function*() {
        expectError(yield* call("GET", "/v1/nothing-here"), 404, "not_found")
      }))
  })
})
