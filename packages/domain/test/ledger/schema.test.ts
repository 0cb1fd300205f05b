import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyRate,
  convert,
  Ledger,
  LedgerInput,
  LedgerReport,
  rateOn,
  type RateTable
} from "../../src/ledger/index.js"
import { address, at, round, transfer, units, user } from "./fixtures.js"

const A = address(0xa)
const EXCHANGE = address(0xe)

describe("schemas and the public surface", () => {
  const json = {
    wallets: [{ address: A, self: true }],
    country: "US",
    labels: { [EXCHANGE]: { relationship: "exchange", classifiedBy: "user", confirmed: true } },
    prices: { TSLA: [round(1, "100", "2026-01-01T00:00:00Z")] },
    rates: {
      currency: "EUR",
      rates: [{
        date: "2026-01-05",
        rate: "0.9",
        source: "ecb-via-eurofxref",
        rateDate: "2026-01-05",
        carriedForward: false
      }]
    },
    events: [
      transfer({ id: "buy", token: "TSLA", from: EXCHANGE, to: A, qty: "2", time: "2026-01-05T15:00:00Z", block: 1 }),
      {
        id: "split",
        kind: "multiplier",
        token: "TSLA",
        tokenAddress: address(0x70c),
        from: units("1"),
        to: units("2"),
        effectiveAt: at("2026-01-06T13:30:00Z"),
        block: 2,
        logIndex: -1,
        stepKind: "split"
      }
    ],
    asOf: at("2026-01-10T00:00:00Z")
  }

  it("decodes an input given as JSON and runs it", () => {
    const input = Schema.decodeUnknownSync(LedgerInput)(JSON.parse(JSON.stringify(json)))
    const report = Either.getOrThrow(Ledger.run(input))
    expect(report.positions[0]).toMatchObject({
      balance: "2",
      sharesEquivalent: "4",
      costBasisUsd: "200",
      costBasisConverted: "180",
      costBasis: "€180.00"
    })
    expect(report.movements[0]).toMatchObject({ relationship: "exchange", classifiedBy: "user" })
    // the report is plain JSON and decodes with its own schema
    expect(Schema.decodeUnknownSync(LedgerReport)(JSON.parse(JSON.stringify(report)))).toEqual(report)
  })

  it("rejects malformed input at the schema", () => {
    const bad = { ...json, events: [{ ...json.events[0], raw: "1.5" }] }
    expect(Either.isLeft(Schema.decodeUnknownEither(LedgerInput)(bad))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(LedgerInput)({ ...json, country: "FR" }))).toBe(true)
    // A time after 9999-12-31 has no YYYY-MM-DD date: refused here, not thrown by the ledger later.
    const last = { ...json.events[0], timestamp: 253_402_300_799 }
    expect(Either.isRight(Schema.decodeUnknownEither(LedgerInput)({ ...json, events: [last] }))).toBe(true)
    const after = { ...json.events[0], timestamp: 253_402_300_800 + 86_400 }
    expect(Either.isLeft(Schema.decodeUnknownEither(LedgerInput)({ ...json, events: [after] }))).toBe(true)
  })

  it("can leave the per-event lists out and stream them instead", () => {
    const input = Schema.decodeUnknownSync(LedgerInput)(json)
    const state = Either.getOrThrow(Ledger.build({
      ...input,
      events: [
        ...input.events,
        transfer({
          id: "sell",
          token: "TSLA",
          from: A,
          to: EXCHANGE,
          qty: "1",
          time: "2026-01-07T15:00:00Z",
          block: 3,
          classification: user("transfer.out", "exchange")
        })
      ]
    }))
    const full = Ledger.report(state, input.asOf)
    const lean = Ledger.report(state, input.asOf, { rows: false })
    expect(lean.rowsIncluded).toBe(false)
    expect(lean.disposals).toEqual([])
    expect({
      ...lean,
      rowsIncluded: true,
      disposals: full.disposals,
      income: full.income,
      splits: full.splits,
      movements: full.movements
    }).toEqual(full)
    expect([...Ledger.disposalRows(state)]).toEqual(full.disposals)
    expect([...Ledger.movementRows(state)]).toEqual(full.movements)
    expect([...Ledger.splitRows(state)]).toEqual(full.splits)
    expect([...Ledger.incomeRows(state)]).toEqual(full.income)
  })

  it("convert (decimal strings) and the ledger's fixed-point conversion agree", () => {
    const table: RateTable = {
      currency: "JPY",
      rates: [{
        date: "2026-01-05",
        rate: "157.123456",
        source: "ecb-via-frankfurter",
        rateDate: "2026-01-05",
        carriedForward: false
      }]
    }
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), (wad) => {
        const text = formatWadForTest(wad)
        const quote = rateOn("2026-01-05", table)!
        expect(convert(text, "2026-01-05", table)!.amount).toBe(formatWadForTest(applyRate(wad, quote)))
      })
    )
  })
})

const formatWadForTest = (value: bigint): string => {
  const digits = value.toString().padStart(19, "0")
  const whole = digits.slice(0, -18).replace(/^0+(?=\d)/, "")
  const fraction = digits.slice(-18).replace(/0+$/, "")
  return fraction.length > 0 ? `${whole}.${fraction}` : whole
}
