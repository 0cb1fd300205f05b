import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { parse } from "csv-parse/sync"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import * as Http from "node:http"
import { call, newKey, type Reply, restServer } from "../support/RestHarness.js"
import { seedStoredLedger, seedSyntheticLedger, SYNTHETIC_COUNTERPARTY, SYNTHETIC_TOKEN } from "./syntheticLedger.js"

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const NASTY_LABEL = "=HYPERLINK(\"http://x\"),\nsecond line"

const expectCode = (reply: Reply, status: number, code: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body.error.code).toBe(code)
  return reply.body.error
}

/** An account with one watched wallet (labelled) and a settled synthetic ledger of `events` movements. */
const setUp = (name: string, events: number, label = NASTY_LABEL, seed = seedSyntheticLedger) =>
  Effect.gen(function*() {
    const { key } = yield* newKey(name)
    const { id } = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(name)))
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO wallets (account_id, address, address_key, label, self)
               VALUES (${id}, ${WALLET}, ${WALLET.toLowerCase()}, ${label}, true)`.pipe(Effect.orDie)
    yield* seed(id, WALLET, events).pipe(Effect.orDie)
    return { key, accountId: id }
  })

const exportsOf = (accountId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ n: string }>`SELECT count(*) AS n FROM exports WHERE account_id = ${accountId}`
  ).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const serverPort = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)

/** `POST /v1/exports` over a raw socket with `key`; the caller writes the body and reads the answer. */
const exportRequest = (port: number, key: string, onResponse: (response: Http.IncomingMessage) => void) =>
  Http.request({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: "/v1/exports",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
  }, onResponse)

/** Starts an export over a raw socket, reads its first bytes, and hangs up: a client that goes away. */
const abandonExport = (key: string) =>
  Effect.gen(function*() {
    const port = yield* serverPort
    return yield* Effect.promise(() =>
      new Promise<number>((resolve, reject) => {
        const request = exportRequest(port, key, (response) => {
          response.once("data", () => {
            request.destroy()
            resolve(response.statusCode ?? 0)
          })
        })
        request.on(
          "error",
          (error) => (error as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(error)
        )
        request.end(JSON.stringify({ format: "activity" }))
      })
    )
  })

/** Reads a whole export over a raw socket: its status, its text, and whether the response ended as HTTP ends one. */
const readExport = (key: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const port = yield* serverPort
    return yield* Effect.promise(() =>
      new Promise<{ status: number; text: string; complete: boolean }>((resolve, reject) => {
        const request = exportRequest(port, key, (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (text += chunk))
          response.on("error", () => undefined)
          response.on("close", () => resolve({ status: response.statusCode ?? 0, text, complete: response.complete }))
        })
        request.on("error", reject)
        request.end(JSON.stringify(body))
      })
    )
  })

const suite = (name: string, database: typeof TestDatabase.postgres) =>
  layer(restServer(database), { timeout: 120_000 })(`exports on ${name}`, (it) => {
    describe("the export endpoints", () => {
      it.effect("streams activity as RFC 4180 CSV, stores it, and serves the same bytes with an ETag", () =>
        Effect.gen(function*() {
          const { key } = yield* setUp(`exports-a-${name}`, 12)
          const reply = yield* call("POST", "/v1/exports", { key, body: { format: "activity" } })
          expect(reply.status, reply.text).toBe(200)
          expect(reply.headers["content-type"]).toBe("text/csv; charset=utf-8")
          const today = new Date().toISOString().slice(0, 10)
          expect(reply.headers["content-disposition"]).toBe(
            `attachment; filename="scaledger-activity-${today}.csv"`
          )
          expect(reply.headers["cache-control"]).toBe("no-store")
          const id = reply.headers["scaledger-export-id"]!
          expect(id).toMatch(/^exp_/)

          const records: Array<Record<string, string>> = parse(reply.text, { columns: true })
          expect(records).toHaveLength(12)
          expect(reply.text.split("\r\n")[0]).toBe(
            "date,block,tx_hash,log_index,event_id,wallet,wallet_label,type,token,amount,shares,counterparty," +
              "relationship,classified_by,needs_review,taxable,multiplier_from,multiplier_to,income,currency,rate," +
              "rate_source,rate_date,carried_forward"
          )
          expect(records[3]).toEqual({
            date: "2026-01-01",
            block: "1000003",
            tx_hash: `0x${"3".padStart(64, "0")}`,
            log_index: "3",
            event_id: "evt_3",
            wallet: WALLET,
            // The label survives quoting (comma, quotes, newline) and gets the formula guard.
            wallet_label: `'${NASTY_LABEL}`,
            type: "transfer.in",
            token: "AAPL",
            amount: "1.5",
            shares: "1.500849120091638654",
            counterparty: SYNTHETIC_COUNTERPARTY,
            relationship: "exchange",
            classified_by: "rule",
            needs_review: "false",
            taxable: "true",
            // A movement carries no income: empty cells, never 0.
            multiplier_from: "",
            multiplier_to: "",
            income: "",
            currency: "",
            rate: "",
            rate_source: "",
            rate_date: "",
            carried_forward: ""
          })

          const sha256 = createHash("sha256").update(reply.text, "utf8").digest("hex")
          const again = yield* call("GET", `/v1/exports/${id}`, { key })
          expect(again.status).toBe(200)
          expect(again.text).toBe(reply.text)
          expect(again.headers["etag"]).toBe(`"${sha256}"`)
          expect(again.headers["content-type"]).toBe("text/csv; charset=utf-8")
          const notModified = yield* call("GET", `/v1/exports/${id}`, {
            key,
            headers: { "if-none-match": `"${sha256}"` }
          })
          expect(notModified.status).toBe(304)
          expect(notModified.text).toBe("")
          expect((yield* call("GET", `/v1/exports/${id}`, { key, headers: { "if-none-match": "\"other\"" } })).status)
            .toBe(200)

          const list = yield* call("GET", "/v1/exports", { key })
          expect(list.body.exports).toEqual([
            expect.objectContaining({
              id,
              format: "activity",
              fileName: `scaledger-activity-${today}.csv`,
              rows: 12,
              bytes: Buffer.byteLength(reply.text),
              sha256,
              from: null,
              to: null,
              wallet: null
            })
          ])
          expect(list.body.nextCursor).toBeNull()

          // Another account sees none of it.
          const stranger = yield* newKey(`exports-stranger-${name}`)
          expectCode(yield* call("GET", `/v1/exports/${id}`, { key: stranger.key }), 404, "not_found")
          expect((yield* call("GET", "/v1/exports", { key: stranger.key })).body.exports).toEqual([])
          // The database refuses to change a completed export.
          const sql = yield* SqlClient.SqlClient
          const changed = yield* Effect.either(sql`UPDATE exports SET row_count = 0 WHERE id = ${id}`)
          expect(changed._tag).toBe("Left")
          const rewritten = yield* Effect.either(
            sql`UPDATE export_chunks SET data = ${Buffer.from("x")} WHERE export_id = ${id}`
          )
          expect(rewritten._tag).toBe("Left")
        }))

      it.effect("exports the compact rows a build writes with the figures of the same movements stored whole", () =>
        Effect.gen(function*() {
          const { key } = yield* setUp(`exports-compact-${name}`, 1_005, "Main", seedStoredLedger)
          const reply = yield* call("POST", "/v1/exports", { key, body: { format: "activity" } })
          expect(reply.status, reply.text).toBe(200)
          const records: Array<Record<string, string>> = parse(reply.text, { columns: true })
          // Two pages (1,000 rows per page), in order.
          expect(records).toHaveLength(1_005)
          const txHash = `0x${(1_003).toString(16).padStart(64, "0")}`
          expect(records[1_003]).toMatchObject({
            date: "2026-01-01",
            block: "1001003",
            tx_hash: txHash,
            log_index: "2",
            event_id: `${txHash}:2`,
            wallet: WALLET,
            wallet_label: "Main",
            type: "transfer.in",
            token: "AAPL",
            amount: "1.5",
            shares: "1.500849120091638654",
            counterparty: SYNTHETIC_COUNTERPARTY,
            relationship: "exchange",
            classified_by: "rule",
            needs_review: "false",
            taxable: "false"
          })
        }))

      it.effect(
        "filters by day and wallet, paginates the list, and refuses bad requests",
        () =>
          Effect.gen(function*() {
            const { key } = yield* setUp(`exports-b-${name}`, 12_000, "plain")
            // Events 0-4999 are on 2026-01-01, 5000-9999 on 01-02, the rest on 01-03.
            const day = yield* call("POST", "/v1/exports", {
              key,
              body: { format: "taxtool", from: "2026-01-02", to: "2026-01-02", wallet: WALLET.toLowerCase() }
            })
            expect(day.status, day.text).toBe(200)
            const rows: Array<Record<string, string>> = parse(day.text, { columns: true })
            expect(rows).toHaveLength(5000)
            expect(rows[0]).toEqual({
              Date: new Date((1767225600 + 5000 * 17) * 1000).toISOString().slice(0, 19).replace("T", " "),
              "Sent Amount": "",
              "Sent Currency": "",
              "Received Amount": "1.500849120091638654",
              "Received Currency": "AAPL",
              Label: "",
              "Fee Amount": "",
              "Fee Currency": "",
              "Net Worth Amount": "318.66",
              "Net Worth Currency": "USD",
              Description: "transfer.in",
              TxHash: `0x${(5000).toString(16).padStart(64, "0")}`
            })
            // No body at all is the default format, like `{}`.
            const noBody = yield* call("POST", "/v1/exports", { key })
            expect(noBody.status, noBody.text).toBe(200)
            expect(noBody.headers["content-disposition"]).toContain("scaledger-positions-")
            const first = yield* call("POST", "/v1/exports", { key, body: {} })
            expect(first.headers["content-disposition"]).toContain("scaledger-positions-")
            expect(first.text.split("\r\n")[0]).toBe(
              "wallet,wallet_label,token,balance,multiplier,multiplier_at_acquisition,shares_equivalent,cost_basis," +
                "unreported_income,encumbered,currency,rate,rate_source,rate_date,carried_forward"
            )
            const page1 = yield* call("GET", "/v1/exports?limit=2", { key })
            expect(page1.body.exports).toHaveLength(2)
            expect(page1.body.exports[0]).toMatchObject({ format: "taxtool", rows: 5000, from: "2026-01-02" })
            const page2 = yield* call("GET", `/v1/exports?limit=2&cursor=${page1.body.nextCursor}`, { key })
            expect(page2.body.exports.map((e: any) => e.format)).toEqual(["positions"])
            expect(page2.body.exports[0].id).toBe(first.headers["scaledger-export-id"])
            expect(page2.body.nextCursor).toBeNull()
            expectCode(yield* call("GET", "/v1/exports?cursor=bogus", { key }), 400, "invalid_request")

            const unsupported = expectCode(
              yield* call("POST", "/v1/exports", { key, body: { format: "xlsx" } }),
              400,
              "unsupported_format"
            )
            expect(unsupported.details.supported).toEqual(["positions", "activity", "multipliers", "gains", "taxtool"])
            expectCode(
              yield* call("POST", "/v1/exports", { key, body: { format: "gains", from: "2026-02-30" } }),
              400,
              "invalid_date"
            )
            expectCode(
              yield* call("POST", "/v1/exports", { key, body: { from: "2026-03-01", to: "2026-02-01" } }),
              400,
              "invalid_date"
            )
            expectCode(yield* call("POST", "/v1/exports", { key, body: { wallet: "0x1234" } }), 400, "invalid_address")
            // A field of the wrong type is the one issue listed (not also "Expected null" for the nullable body).
            const wrongType = expectCode(
              yield* call("POST", "/v1/exports", { key, body: { format: 5 } }),
              400,
              "invalid_request"
            )
            expect(wrongType.details.issues.map((issue: { path: ReadonlyArray<string> }) => issue.path)).toEqual([[
              "format"
            ]])
            // A long value refused is quoted by its first 64 characters, not sent back whole.
            for (
              const [body, code] of [
                [{ format: "x".repeat(100_000) }, "unsupported_format"],
                [{ wallet: `0x${"z".repeat(100_000)}` }, "invalid_address"]
              ] as const
            ) {
              const long = yield* call("POST", "/v1/exports", { key, body })
              expectCode(long, 400, code)
              expect(JSON.stringify(long.body).length, code).toBeLessThan(1_000)
              expect(long.body.error.message, code).toContain("…")
            }
            expectCode(
              yield* call("POST", "/v1/exports", { key, body: { wallet: `0x${"ab".repeat(20)}` } }),
              404,
              "not_found"
            )
            expectCode(
              yield* call("POST", "/v1/exports", { key, body: { format: "gains", extra: 1 } }),
              400,
              "invalid_request"
            )
            expectCode(yield* call("GET", "/v1/exports/exp_missing", { key }), 404, "not_found")
            expectCode(yield* call("POST", "/v1/exports", { body: {} }), 401, "unauthorized")
            // None of the refused requests left anything behind.
            expect((yield* call("GET", "/v1/exports", { key })).body.exports).toHaveLength(3)
          }),
        90_000
      )

      it.effect("limits multiplier changes to the days they took effect on, not the day of their block", () =>
        Effect.gen(function*() {
          const { key } = yield* setUp(`exports-m-${name}`, 1)
          const sql = yield* SqlClient.SqlClient
          // In force a minute before midnight UTC; the first block after it is on the next day.
          yield* sql`
            INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier, kind,
                                            status, source, block, block_time)
            VALUES (31337, ${SYNTHETIC_TOKEN.toLowerCase()}, '2026-03-31T23:59:00Z', 1000000000000000000,
                    1000500000000000000, 'dividend', 'active', 'chain_storage', 4242, '2026-04-01T00:00:11Z')`
            .pipe(Effect.orDie)
          const rowsOn = (day: string) =>
            Effect.map(
              call("POST", "/v1/exports", { key, body: { format: "multipliers", from: day, to: day } }),
              (reply) => {
                expect(reply.status, reply.text).toBe(200)
                return parse(reply.text, { columns: true }) as Array<Record<string, string>>
              }
            )
          expect((yield* rowsOn("2026-03-31")).map((r) => [r.block, r.date, r.effective_at])).toEqual([
            ["4242", "2026-04-01", "2026-03-31T23:59:00.000Z"]
          ])
          expect(yield* rowsOn("2026-04-01")).toEqual([])
        }))

      it.effect("quotes at most the start of a long malformed date in its message", () =>
        Effect.gen(function*() {
          const { key } = yield* setUp(`exports-l-${name}`, 1)
          const reply = yield* call("POST", "/v1/exports", {
            key,
            body: { format: "activity", from: "9".repeat(100_000) }
          })
          const error = expectCode(reply, 400, "invalid_date")
          expect(error.message).toBe(`from must be a date, YYYY-MM-DD: ${"9".repeat(64)}…`)
        }))

      it.effect("answers 409 during a replay and stores nothing", () =>
        Effect.gen(function*() {
          const { accountId, key } = yield* setUp(`exports-c-${name}`, 3)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ledger_builds SET replay_version = 2, requested_version = 2 WHERE account_id = ${accountId}`
            .pipe(Effect.orDie)
          const reply = yield* call("POST", "/v1/exports", { key, body: { format: "gains" } })
          expectCode(reply, 409, "replay_in_progress")
          expect(reply.headers["retry-after"]).toBe("1")
          expect(yield* exportsOf(accountId)).toBe(0)
        }))

      it.effect("a failure after the headers breaks the connection: no truncated file looks complete", () =>
        Effect.gen(function*() {
          const { accountId, key } = yield* setUp(`exports-f-${name}`, 2_500, "plain")
          const sql = yield* SqlClient.SqlClient
          // The last of the three pages cannot be read: the writer fails after the first two went out.
          yield* sql`UPDATE ledger_event_pages SET lines = 'not a page' WHERE account_id = ${accountId}
                     AND first_ord = (SELECT max(first_ord) FROM ledger_event_pages WHERE account_id = ${accountId})`
            .pipe(Effect.orDie)
          const reply = yield* readExport(key, { format: "activity" })
          expect(reply.status).toBe(200)
          expect(reply.text.startsWith("date,block,")).toBe(true)
          // The response is cut off, as a client must see it (a chunked body without its last chunk), not ended.
          expect(reply.complete).toBe(false)
          expect(yield* exportsOf(accountId)).toBe(0)
        }))

      it.effect(
        "a client that hangs up mid-stream leaves no export behind, and the next export works",
        () =>
          Effect.gen(function*() {
            const { accountId, key } = yield* setUp(`exports-d-${name}`, 30_000)
            expect(yield* abandonExport(key)).toBe(200)
            // Real time (the test clock does not move by itself): long enough for a writer that kept going to commit.
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1500)))
            // The abandoned export's transaction was rolled back, not left open waiting for a reader (PostgreSQL).
            const sql = yield* SqlClient.SqlClient
            const open = yield* sql<{ n: string }>`
            SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND state LIKE 'idle in transaction%'`.pipe(Effect.orDie)
            expect(Number(open[0]!.n)).toBe(0)
            const done = yield* call("POST", "/v1/exports", { key, body: { format: "gains" } })
            expect(done.status).toBe(200)
            const list = yield* call("GET", "/v1/exports", { key })
            expect(list.body.exports.map((e: any) => e.id)).toEqual([done.headers["scaledger-export-id"]])
            expect(yield* exportsOf(accountId)).toBe(1)
          }),
        90_000
      )
    })
  })

suite("postgres", TestDatabase.postgres)
suite("pglite", TestDatabase.pglite)
