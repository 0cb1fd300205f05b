import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { activityLine, type Labels } from "../../src/exports/Formats.js"
import { incomeOf } from "../../src/ledger/Accrual.js"
import { Ledger, type LedgerEvent, type RateTable } from "../../src/ledger/index.js"
import type { LedgerState } from "../../src/ledger/LedgerState.js"
import { isCompact, PageEncoder, type PageKind, PageReader } from "../../src/ledger/StoredPage.js"
import type { StoredRow } from "../../src/ledger/StoredRows.js"
import { address, round, transfer, user } from "./fixtures.js"
import { interpret, type Op, OP_KINDS, settingsFor } from "./generate.js"

/**
 * Movement, disposal and open lot rows are stored compactly (`Ledger.storedMovementRows`, `storedDisposalRows`,
 * `storedLotRowMaker`) and expanded when read: through the database's JSON (movements and disposals in stored pages,
 * `StoredPage`), each must give the report's row byte for byte.
 */
const dateOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 10)

/**
 * EUR rates on some dates only, some carried forward already: figures are converted at an exact rate, at a rate
 * borrowed from an earlier date, at none (a gap of more than 7 days), or at a stale one.
 */
const sparseRates = (start: number, end: number, seed: number): RateTable => {
  const rates: Array<RateTable["rates"][number]> = []
  let k = seed
  for (let t = start - 86_400; t <= end + 86_400; t += 86_400) {
    k = (k * 1_103_515_245 + 12_345) % 2_147_483_648
    const date = dateOf(t)
    if (k % 5 === 0) continue
    const carried = k % 7 === 0
    rates.push({
      date,
      rate: k % 3 === 0 ? "1.0" : `0.9${k % 97}`,
      source: "ecb-via-test",
      rateDate: carried ? dateOf(t - (k % 11) * 86_400) : date,
      carriedForward: carried
    })
  }
  return { currency: "EUR", rates }
}

/** Operations days to weeks apart, so figures fall on many dates, with dividend steps and splits among them. */
const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom(...OP_KINDS),
  wallet: fc.nat(2),
  other: fc.nat(2),
  token: fc.nat(2),
  amount: fc.integer({ min: 1, max: 1000 }),
  gap: fc.integer({ min: 0, max: 20 * 86_400 }),
  classified: fc.boolean()
})

/** Rows through stored pages of 7 rows (`StoredPage`), each page's document as the database keeps it. */
const throughPages = (kind: PageKind, rows: ReadonlyArray<unknown>): Array<unknown> => {
  const out: Array<unknown> = []
  const encoder = new PageEncoder(kind)
  let text = ""
  const flush = () => {
    const page = new PageReader(kind, text + encoder.end())
    for (let i = 0; i < page.length; i++) {
      const { keys, row } = page.row(i)
      expect(keys).toBeUndefined()
      out.push(row)
    }
  }
  for (const row of rows) {
    // Every row the ledger stores is compact: its keys are its own figures.
    expect(isCompact(row, kind)).toBe(true)
    text = (encoder.size === 0 ? "" : text) + encoder.compact(row as StoredRow)
    if (encoder.size === 7) flush()
  }
  if (encoder.size > 0) flush()
  return out
}

/** Labels with a comma and quotes (the CSV quotes them), for the addresses of the own wallets. */
const labelsOf = (state: LedgerState): Labels =>
  new Map([...state.context.classify.own.keys()].map((key, i) => [key, `own ${i}, "main"`]))

const storedThenExpanded = (state: LedgerState) => ({
  movements: throughPages("events", [...Ledger.storedMovementRows(state)]).map((row) =>
    JSON.stringify(Ledger.expandEventRow(row))
  ),
  // The activity file reads only what it writes of a stored movement (`expandActivityRow`).
  activity: throughPages("events", [...Ledger.storedMovementRows(state)]).map((row) =>
    activityLine(Ledger.expandActivityRow(row) as Ledger.MovementActivity, labelsOf(state))
  ),
  disposals: throughPages("disposals", [...Ledger.storedDisposalRows(state)]).map((row) =>
    JSON.stringify(
      Ledger.expandDisposalRow(
        row,
        JSON.parse(JSON.stringify(Ledger.storedSteps(state, state.books.get((row as StoredRow).v[3] as string)!)))
      )
    )
  ),
  lots: [...Ledger.openLotsOf(state)].map((open) =>
    JSON.stringify(
      Ledger.expandLotRow(
        JSON.parse(JSON.stringify(Ledger.storedLotRowMaker(state)(open))),
        JSON.parse(JSON.stringify(Ledger.storedSteps(state, open.book)))
      )
    )
  )
})

/** A state with lots that accrued dividend steps: one lot bought before two steps of AAPL, one between them. */
const steppedState = () => {
  const [a, exchange] = [address(0xa), address(0xe)]
  const step = (id: string, from: string, to: string, time: string, block: number): LedgerEvent => ({
    id,
    kind: "multiplier",
    token: "AAPL",
    tokenAddress: address(0xaa),
    from,
    to,
    effectiveAt: Date.parse(time) / 1000,
    block,
    logIndex: -1,
    stepKind: "dividend"
  })
  const buy = (id: string, time: string, block: number) =>
    transfer({
      id,
      token: "AAPL",
      from: exchange,
      to: a,
      qty: "1",
      time,
      block,
      classification: user("transfer.in", "exchange")
    })
  return Either.getOrThrow(Ledger.build({
    wallets: [{ address: a, self: true }],
    country: "US",
    prices: { AAPL: [round(1, "100", "2023-01-01T00:00:00Z")] },
    events: [
      buy("first", "2023-02-01T15:00:00Z", 1),
      step("m:1", "1000000000000000000", "1010000000000000000", "2023-03-01T00:00:00Z", 2),
      buy("second", "2023-04-01T15:00:00Z", 3),
      step("m:2", "1010000000000000000", "1020000000000000000", "2023-05-01T00:00:00Z", 4),
      transfer({
        id: "sale",
        token: "AAPL",
        from: a,
        to: exchange,
        qty: "0.5",
        time: "2023-06-01T15:00:00Z",
        block: 5,
        classification: user("transfer.out", "exchange")
      })
    ]
  }))
}

describe("stored movement, disposal and lot rows", () => {
  it("expand into the report's rows byte for byte", () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 1_000_000 }),
          priced: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
          ops: fc.array(opArb, { minLength: 5, maxLength: 80 }),
          country: fc.constantFrom("US" as const, "SG" as const, "DE" as const),
          withRates: fc.boolean()
        }),
        ({ country, ops, priced, seed, withRates }) => {
          const firstPrices = priced.flatMap((on, token): Array<Op> =>
            on
              ? [{ kind: "price", wallet: 0, other: 0, token, amount: 100 + token * 50, gap: 0, classified: false }]
              : []
          )
          const generated = interpret([...firstPrices, ...ops])
          // Ids as the chain record makes them (`<tx hash>:<log index>`, which stored rows do not repeat), or not.
          const history = seed % 2 === 0 ? generated : {
            ...generated,
            events: generated.events.map((e) => e.kind === "transfer" ? { ...e, id: `${e.txHash}:${e.logIndex}` } : e)
          }
          const first = history.events[0]
          if (first === undefined) return
          const start = first.kind === "transfer" ? first.timestamp : first.effectiveAt
          const state = Either.getOrThrow(Ledger.build({
            ...settingsFor(history, country),
            ...(withRates ? { rates: sparseRates(start, history.end, seed) } : {}),
            events: history.events
          }))
          const expanded = storedThenExpanded(state)
          expect(expanded.movements).toEqual([...Ledger.movementRows(state)].map((row) => JSON.stringify(row)))
          expect(expanded.activity).toEqual(
            [...Ledger.movementRows(state)].map((row) => activityLine(row, labelsOf(state)))
          )
          expect(expanded.disposals).toEqual([...Ledger.disposalRows(state)].map((row) => JSON.stringify(row)))
          expect(expanded.lots).toEqual([...Ledger.lotRows(state)].map((row) => JSON.stringify(row)))
        }
      ),
      { numRuns: 200 }
    )
  })

  it("keep an unknown acquisition date's null holding period", () => {
    const [a, b, exchange] = [address(0xa), address(0xb), address(0xe)]
    const state = Either.getOrThrow(Ledger.build({
      wallets: [{ address: a, self: true }, { address: b, self: true }],
      country: "US",
      prices: { TSLA: [round(1, "100", "2023-01-01T00:00:00Z")] },
      events: [
        transfer({
          id: "buy",
          token: "TSLA",
          from: exchange,
          to: a,
          qty: "1",
          time: "2023-06-01T15:00:00Z",
          block: 1,
          classification: user("transfer.in", "exchange")
        }),
        // Nothing recorded at B: A's lot for these has no known acquisition date.
        transfer({ id: "move", token: "TSLA", from: b, to: a, qty: "2", time: "2023-06-02T15:00:00Z", block: 2 }),
        transfer({
          id: "sell",
          token: "TSLA",
          from: a,
          to: exchange,
          qty: "3",
          time: "2025-06-03T15:00:00Z",
          block: 3,
          classification: user("transfer.out", "exchange")
        })
      ]
    }))
    const expected = [...Ledger.disposalRows(state)]
    expect(expected.map((d) => d.holdingPeriod)).toEqual(["long", null])
    expect(storedThenExpanded(state).disposals).toEqual(expected.map((row) => JSON.stringify(row)))
  })

  it("store the steps a lot accrued as spans of its token's steps, stored once, and read older rows whole", () => {
    const state = steppedState()
    const open = [...Ledger.openLotsOf(state)]
    const steps = JSON.parse(JSON.stringify(Ledger.storedSteps(state, open[0]!.book))) as Array<Ledger.StoredStep>
    expect(steps.map((step) => step[0])).toEqual(["m:1", "m:2"])
    const rows = open.map((lot) => JSON.parse(JSON.stringify(Ledger.storedLotRowMaker(state)(lot))))
    // The first lot accrued both steps, the second only the later one: one span each.
    expect(rows.map((row) => row.v[9].slice(1))).toEqual([[[0, 2]], [[1, 2]]])
    const expected = [...Ledger.lotRows(state)].map((row) => JSON.stringify(row))
    expect(rows.map((row) => JSON.stringify(Ledger.expandLotRow(row, steps)))).toEqual(expected)
    // A row an older build stored, each step's income whole: read as it is, without the steps.
    const whole = (raw: string, parts: Array<Array<unknown>>) =>
      parts.flatMap((part) =>
        part.length !== 2 ? [part] : Array.from({ length: (part[1] as number) - (part[0] as number) }, (_, i) => {
          const step = steps[(part[0] as number) + i]!
          return [1, step[0], step[1], incomeOf(BigInt(raw), BigInt(step[4]!)).toString(), step[2], step[3]]
        })
      )
    const older = rows.map((row) => ({
      ...row,
      v: row.v.map((value: unknown, i: number) => (i === 9 ? whole(row.v[3], value as Array<Array<unknown>>) : value))
    }))
    expect(older.map((row) => JSON.stringify(Ledger.expandLotRow(row)))).toEqual(expected)
    // What a sale estimate orders and filters lots by, read without the steps: the same as the expanded lot says,
    // from a compact row and from a lot stored whole.
    const heads = [...Ledger.lotRows(state)].map(({ acquiredAt, id, location, raw, wallet }) => ({
      id,
      location,
      wallet,
      acquiredAt,
      raw
    }))
    expect(heads.map((head) => head.acquiredAt)).toEqual([...new Set(heads.map((head) => head.acquiredAt))])
    expect(rows.map((row) => Ledger.lotRowHead(row))).toEqual(heads)
    expect([...Ledger.lotRows(state)].map((lot) => Ledger.lotRowHead(lot))).toEqual(heads)
    // A row citing a step that is not given is a fault of the store, said as such (not a lot without income).
    expect(() => Ledger.expandLotRow(rows[0], steps.slice(0, 1))).toThrow(/dividend step 1 of its token/)
    // The sale of half the first lot: its slice's basis cites both steps the same way, its income of half the lot.
    const [disposal] = [...Ledger.storedDisposalRows(state)].map((row) => JSON.parse(JSON.stringify(row)))
    expect(disposal.v[16].slice(1)).toEqual([[0, 2]])
    const sold = [...Ledger.disposalRows(state)].map((row) => JSON.stringify(row))
    expect([JSON.stringify(Ledger.expandDisposalRow(disposal, steps))]).toEqual(sold)
    expect(
      JSON.stringify(
        Ledger.expandDisposalRow({
          ...disposal,
          v: disposal.v.map((value: unknown, i: number) =>
            i === 16 ? whole(disposal.v[5], value as Array<Array<unknown>>) : value
          )
        })
      )
    ).toEqual(sold[0])
  })

  it("leave a row stored whole (an older build's, an income or split row) as it is", () => {
    const row = { id: "m:1:0xabc", type: "split", wallet: "0xabc", from: "1", to: "2" }
    expect(Ledger.expandEventRow(row)).toBe(row)
    expect(Ledger.expandDisposalRow(row)).toBe(row)
  })
})
