import { expect, layer } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ensureBundledHistory } from "@scaledger/workers/fx/FxWorker"
import { Ajv2020 } from "ajv/dist/2020.js"
import { ConfigProvider, Effect, Layer } from "effect"
import { ALICE, ledgerScenario, watchAndSettle } from "../support/LedgerScenario.js"
import { call, newKey, type Reply, restServer } from "../support/RestHarness.js"

/**
 * SPEC.md's resources, endpoints, statuses, error codes and headers, checked against the service on the local chain
 * scenario (real positions, lots, income and multiplier changes), one table for every REST endpoint the spec names:
 * each answer has the spec's fields with the spec's types (amounts decimal strings, dates ISO days, integers), and
 * validates against the schema the served OpenAPI document declares for its status.
 */

const DECIMAL = /^-?\d+(\.\d+)?$/
const DAY = /^\d{4}-\d{2}-\d{2}$/
const USD_MONEY = /^-?\$\d{1,3}(,\d{3})*\.\d{2}$/

type Check = (value: unknown, where: string) => void
const decimal: Check = (v, w) => expect(v, w).toMatch(DECIMAL)
const decimalOrNull: Check = (v, w) => v === null || decimal(v, w)
const day: Check = (v, w) => expect(v, w).toMatch(DAY)
const int: Check = (v, w) => expect(Number.isInteger(v), `${w}: ${JSON.stringify(v)}`).toBe(true)
const str: Check = (v, w) => expect(typeof v, w).toBe("string")
const bool: Check = (v, w) => expect(typeof v, w).toBe("boolean")
const arr: Check = (v, w) => expect(Array.isArray(v), w).toBe(true)
const money: Check = (v, w) => v === null || expect(v, w).toMatch(USD_MONEY)

/** Checks the named fields (dotted paths) of one object. */
const fields = (object: any, shape: Record<string, Check>, where: string) => {
  for (const [path, check] of Object.entries(shape)) {
    const value = path.split(".").reduce((o, key) => o?.[key], object)
    expect(value, `${where}: ${path} is missing`).not.toBeUndefined()
    check(value, `${where}: ${path}`)
  }
}

const WALLET = {
  address: str,
  label: str,
  self: bool,
  "watchingFrom.block": (v: unknown, w: string) => v === null || int(v, w),
  "watchingFrom.date": (v: unknown, w: string) => v === null || day(v, w),
  "backfill.status": str,
  "backfill.coverageGaps": arr
}
const POSITION = {
  token: str,
  balance: decimal,
  "multiplier.at": decimal,
  "multiplier.from": decimalOrNull,
  sharesEquivalent: decimal,
  costBasis: money,
  unreportedIncome: money,
  encumbered: decimal
}
const LOT = { acquired: day, qty: decimal, basis: decimalOrNull, rate: decimalOrNull }
const EVENT = { id: str, block: int, type: str, token: str, taxable: bool, needsReview: bool }
const ERROR = (code: string) => (reply: Reply, where: string) => {
  expect(reply.body?.error?.code, where).toBe(code)
  expect(reply.body.error.docUrl, where).toMatch(new RegExp(`/docs/errors#${code}$`))
  expect(reply.headers["request-id"], where).toBe(reply.body.error.requestId)
}

const basisRecord = (record: any, where: string) => {
  fields(record, { token: str, currency: str, lots: arr, accruedIncomeAddedToBasis: decimalOrNull }, where)
  expect(record.lotMatching, where).toBe("fifo")
  for (const lot of record.lots) fields(lot, LOT, `${where} lot`)
}

const event = (e: any, where: string) => {
  fields(e, EVENT, where)
  expect(e.walletTransaction === null || typeof e.walletTransaction === "object", where).toBe(true)
  if (e.type === "income.multiplier_increase" || e.type === "split") {
    fields(e, { from: decimal, to: decimal }, where)
    expect(e.walletTransaction, where).toBeNull()
  }
  if (e.type === "income.multiplier_increase") {
    fields(e, {
      "income.usd": decimalOrNull,
      "income.rate": decimalOrNull,
      "income.rateDate": (v, w) => v === null || day(v, w)
    }, where)
  }
  if (e.counterparty !== undefined) {
    str(e.counterparty, where)
    expect([null, "self", "exchange", "counterparty", "contract"], where).toContain(e.relationship)
  }
}

interface Row {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: string
  /** The OpenAPI path the request is an operation of. */
  readonly operation: string
  readonly body?: unknown
  readonly status: number
  readonly check?: (reply: Reply, where: string) => void
}

const ScenarioDatabase = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.orDie
)

const Scenario = Layer.mergeAll(restServer(ScenarioDatabase), ledgerScenario(ScenarioDatabase)).pipe(
  Layer.provideMerge(
    Layer.mergeAll(ChainStore.Default, LedgerStore.Default, WalletsRepo.Default).pipe(
      Layer.provideMerge(ScenarioDatabase)
    )
  ),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ CHAIN_ID: 31337 })))
)

layer(Scenario, { timeout: 180_000, excludeTestServices: true })("SPEC.md conformance of the REST API", (it) => {
  it.scoped("every endpoint answers the spec's status, fields, types, codes and headers, as the OpenAPI says", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("spec-conformance")
      yield* watchAndSettle("spec-conformance")
      const doc = (yield* call("GET", "/v1/openapi.json")).body
      const ajv = new Ajv2020({ strict: false, allErrors: true })
      ajv.addSchema(doc, "openapi.json")

      // An event to review: a movement that needs it. The rows that ask for a replay (review, adding and deleting
      // a wallet) come last: the ledger reads answer 409 until it is stored.
      const review = (yield* call("GET", "/v1/events?needsReview=true", { key })).body.events
      expect(review.length, "the scenario has movements needing review").toBeGreaterThan(0)
      const reviewable = review.find((e: any) => e.counterparty !== undefined)
      expect(reviewable, "a movement needing review").toBeDefined()
      const income = (yield* call("GET", "/v1/events?type=income.multiplier_increase", { key })).body.events
      expect(income.length).toBeGreaterThan(0)

      const rows: ReadonlyArray<Row> = [
        {
          method: "GET",
          path: "/v1/wallets",
          operation: "/v1/wallets",
          status: 200,
          check: (r, w) => {
            expect(r.body.wallets.length, w).toBe(1)
            for (const wallet of r.body.wallets) fields(wallet, WALLET, w)
          }
        },
        {
          method: "GET",
          path: "/v1/positions",
          operation: "/v1/positions",
          status: 200,
          check: (r, w) => {
            expect(r.body.positions.length, w).toBeGreaterThan(0)
            for (const position of r.body.positions) fields(position, POSITION, `${w} ${position.token}`)
          }
        },
        {
          method: "GET",
          path: `/v1/positions?wallet=${ALICE.toLowerCase()}&currency=EUR`,
          operation: "/v1/positions",
          status: 200,
          // `currency` is accepted by name, not acted on: figures stay in the account's currency (USD).
          check: (r, w) => {
            for (const position of r.body.positions) fields(position, POSITION, `${w} ${position.token}`)
          }
        },
        {
          method: "GET",
          path: "/v1/basis?token=AAPL&lotMatching=lifo",
          operation: "/v1/basis",
          status: 200,
          check: (r, w) => {
            basisRecord(r.body, w)
            expect(r.body.lots.length, w).toBeGreaterThan(0)
          }
        },
        {
          method: "GET",
          path: "/v1/basis",
          operation: "/v1/basis",
          status: 200,
          check: (r, w) => {
            for (const record of r.body.records) basisRecord(record, `${w} ${record.token}`)
          }
        },
        {
          method: "GET",
          path: "/v1/events?limit=500",
          operation: "/v1/events",
          status: 200,
          check: (r, w) => {
            for (const e of r.body.events) event(e, `${w} ${e.id}`)
            const types = new Set(r.body.events.map((e: any) => e.type))
            expect(types.has("income.multiplier_increase"), w).toBe(true)
          }
        },
        {
          method: "GET",
          path: "/v1/events?type=income.multiplier_increase&from=2026-01-01&to=2026-12-31&needsReview=false",
          operation: "/v1/events",
          status: 200,
          check: (r, w) => {
            expect(r.body.events.length, w).toBe(income.length)
            for (const e of r.body.events) {
              event(e, w)
              expect(e.walletTransaction, w).toBeNull()
            }
          }
        },
        {
          method: "GET",
          path: "/v1/events?needsReview=true",
          operation: "/v1/events",
          status: 200,
          check: (r, w) => {
            for (const e of r.body.events) expect(e.needsReview, w).toBe(true)
          }
        },
        {
          method: "GET",
          path: "/v1/portfolio",
          operation: "/v1/portfolio",
          status: 200,
          check: (r, w) => {
            fields(r.body, {
              "summary.positionCount": int,
              "summary.pricedPositions": int,
              "summary.positionsWithBasis": int,
              "summary.fxCurrency": str,
              "summary.valueUsd": decimalOrNull,
              alerts: arr,
              positions: arr,
              totals: (v, x) => expect(typeof v, x).toBe("object"),
              recentActivity: arr
            }, w)
            for (const alert of r.body.alerts) fields(alert, { kind: str, severity: str }, w)
            for (const position of r.body.positions) fields(position, POSITION, w)
          }
        },
        {
          method: "GET",
          path: "/v1/multiplier?token=CRWD",
          operation: "/v1/multiplier",
          status: 200,
          check: (r, w) => {
            fields(r.body, { token: str, changes: arr, "coverage.from": day, "coverage.gaps": arr }, w)
            expect(r.body.changes.length, w).toBeGreaterThan(0)
            for (const change of r.body.changes) {
              fields(change, { block: int, date: day, from: decimal, to: decimal, source: str }, w)
            }
          }
        },
        {
          method: "GET",
          path: "/v1/multiplier?token=CRWD&at=2026-07-01&from=2026-06-01",
          operation: "/v1/multiplier",
          status: 200,
          check: (r, w) => expect(r.body.at, w).toEqual({ date: "2026-07-01", multiplier: "1" })
        },
        {
          method: "GET",
          path: "/v1/multiplier",
          operation: "/v1/multiplier",
          status: 400,
          check: ERROR("invalid_request")
        },
        {
          method: "GET",
          path: "/v1/fx/SGD/2025-05-10",
          operation: "/v1/fx/{currency}/{date}",
          status: 200,
          // A Saturday: the last published day, carried forward.
          check: (r, w) => {
            fields(r.body, { quote: str, date: day, rate: decimal, source: str, carriedForward: bool }, w)
            expect(r.body, w).toMatchObject({ quote: "SGD", date: "2025-05-09", carriedForward: true })
            expect(r.body.source, w).toMatch(/^ecb-via-/)
          }
        },
        {
          method: "GET",
          path: "/v1/fx/HUF/2025-05-09",
          operation: "/v1/fx/{currency}/{date}",
          status: 400,
          check: ERROR("unsupported_currency")
        },
        {
          method: "POST",
          path: "/v1/exports",
          operation: "/v1/exports",
          body: { format: "taxtool" },
          status: 200,
          check: (r, w) => {
            expect(r.headers["content-type"], w).toBe("text/csv; charset=utf-8")
            expect(r.headers["content-disposition"], w).toMatch(
              /^attachment; filename="scaledger-taxtool-\d{4}-\d{2}-\d{2}\.csv"$/
            )
            expect(r.headers["cache-control"], w).toBe("no-store")
            expect(r.text.startsWith("Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Label,"), w)
              .toBe(true)
          }
        },
        {
          method: "POST",
          path: "/v1/exports",
          operation: "/v1/exports",
          status: 200,
          // No body: the default format, positions.
          check: (r, w) =>
            expect(r.headers["content-disposition"], w).toMatch(/filename="scaledger-positions-\d{4}-\d{2}-\d{2}\.csv"/)
        },
        {
          method: "POST",
          path: "/v1/exports",
          operation: "/v1/exports",
          body: { format: "pdf" },
          status: 400,
          check: (r, w) => {
            ERROR("unsupported_format")(r, w)
            expect(r.body.error.details.supported, w).toEqual([
              "positions",
              "activity",
              "multipliers",
              "gains",
              "taxtool"
            ])
          }
        },
        {
          method: "POST",
          path: "/v1/webhooks",
          operation: "/v1/webhooks",
          body: { url: "https://93.184.215.14/hook", description: "ops", kinds: ["accrued-income"] },
          status: 201,
          check: (r, w) => {
            fields(r.body, { id: str, url: str, description: str, kinds: arr, secret: str, enabled: bool }, w)
            expect(r.body.enabled, w).toBe(true)
          }
        },
        {
          method: "POST",
          path: "/v1/webhooks",
          operation: "/v1/webhooks",
          body: { url: "https://93.184.215.14/hook", kinds: ["price-moon"] },
          status: 400,
          check: ERROR("unknown_alert_kind")
        },
        {
          method: "GET",
          path: "/v1/webhooks",
          operation: "/v1/webhooks",
          status: 200,
          check: (r, w) => {
            expect(r.body.webhooks.length, w).toBe(1)
            expect(r.body.webhooks[0].secret, `${w}: the secret is shown only at creation`).toBeUndefined()
          }
        },
        { method: "GET", path: "/v1/webhooks/deliveries", operation: "/v1/webhooks/deliveries", status: 200 },
        {
          method: "PATCH",
          path: `/v1/events/${encodeURIComponent(income[0].id)}`,
          operation: "/v1/events/{id}",
          body: { relationship: "self" },
          status: 400,
          check: ERROR("not_reviewable")
        },
        {
          method: "PATCH",
          path: "/v1/events/no-such-event",
          operation: "/v1/events/{id}",
          body: { relationship: "self" },
          status: 404,
          check: ERROR("not_found")
        },
        {
          method: "PATCH",
          path: `/v1/events/${encodeURIComponent(reviewable.id)}`,
          operation: "/v1/events/{id}",
          body: { relationship: "self", label: "my other wallet", note: "cold storage" },
          status: 200,
          check: (r, w) => {
            fields(r.body, {
              id: str,
              counterparty: str,
              relationship: str,
              taxable: bool,
              needsReview: bool,
              alsoSettled: int,
              stillNeedingReview: int
            }, w)
            expect(r.body, w).toMatchObject({
              id: reviewable.id,
              relationship: "self",
              taxable: false,
              needsReview: false
            })
          }
        },
        {
          method: "POST",
          path: "/v1/wallets",
          operation: "/v1/wallets",
          body: { address: "0x00000000000000000000000000000000000000c7", label: "cold" },
          status: 201,
          check: (r, w) => {
            fields(r.body, WALLET, w)
            expect(r.body.backfill.status, w).toBe("running")
          }
        },
        {
          method: "POST",
          path: "/v1/wallets",
          operation: "/v1/wallets",
          body: { address: "0x12" },
          status: 400,
          check: ERROR("invalid_address")
        },
        {
          method: "DELETE",
          path: "/v1/wallets/0x00000000000000000000000000000000000000c7",
          operation: "/v1/wallets/{address}",
          status: 204
        }
      ]

      for (const row of rows) {
        const where = `${row.method} ${row.path}`
        const reply = yield* call(row.method, row.path, { key, ...(row.body === undefined ? {} : { body: row.body }) })
        expect(reply.status, `${where}: ${reply.text.slice(0, 300)}`).toBe(row.status)
        expect(reply.headers["request-id"], where).toMatch(/^req_/)
        const declared = doc.paths[row.operation]?.[row.method.toLowerCase()]?.responses?.[String(row.status)]
        expect(declared, `${where}: status ${row.status} is declared`).toBeDefined()
        if (reply.headers["content-type"]?.startsWith("application/json")) {
          const pointer = declared.$ref
            ? `openapi.json${declared.$ref}`
            : `openapi.json#/paths/${
              row.operation.replace(/\//g, "~1")
            }/${row.method.toLowerCase()}/responses/${row.status}`
          const valid = ajv.validate({ $ref: `${pointer}/content/application~1json/schema` }, reply.body)
          expect(valid, `${where}: ${JSON.stringify(ajv.errors?.slice(0, 3))}`).toBe(true)
        }
        row.check?.(reply, where)
      }
    }))
})
