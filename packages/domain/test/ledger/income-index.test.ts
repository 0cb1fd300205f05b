import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Ledger, type LedgerEvent, type LedgerSettings, type RateTable } from "../../src/ledger/index.js"
import type { LedgerState } from "../../src/ledger/LedgerState.js"
import { formatUsd } from "../../src/ledger/LotFigures.js"
import { address, multiplier, round, runLedger, transfer, user } from "./fixtures.js"
import { interpret, randomOps, settingsFor } from "./generate.js"

const A = address(0xa)
const B = address(0xb)
const EXCHANGE = address(0xe)
const buy = user("transfer.in", "exchange")
const sell = user("transfer.out", "exchange")

const build = (settings: LedgerSettings, events: ReadonlyArray<LedgerEvent>) =>
  Either.getOrThrow(Ledger.build({ ...settings, events }))

/** n/d × 1e18, rounded half to even: an exact fraction as an 18-decimal fixed-point figure. */
const roundHalfEven18 = (n: bigint, d: bigint): bigint => {
  const scaled = n * 10n ** 18n
  const q = scaled / d
  const twice = (scaled - q * d) * 2n
  return twice > d || (twice === d && (q & 1n) === 1n) ? q + 1n : q
}
const toUnits = (decimal: string): bigint => {
  const [whole, fraction = ""] = decimal.split(".")
  return BigInt(whole! + fraction.padEnd(18, "0"))
}

describe("the income index: a lot's income is its raw amount × the index's growth, rounded once", () => {
  // Three dividend steps at awkward prices: per step the income has more than 18 decimals.
  const prices = {
    TSLA: [round(1, "333.33333333", "2025-01-01T00:00:00Z"), round(2, "271.82818284", "2025-03-01T00:00:00Z")]
  }
  const steps = [
    ["1", "1.000333333333333333"],
    ["1.000333333333333333", "1.000777777777777777"],
    ["1.000777777777777777", "1.001234567890123456"]
  ] as const
  const events: Array<LedgerEvent> = [
    transfer({
      id: "buy",
      token: "TSLA",
      from: EXCHANGE,
      to: A,
      qty: "7.123456789",
      time: "2025-01-02T00:00:00Z",
      block: 1,
      classification: buy
    }),
    ...steps.map(([from, to], i) =>
      multiplier({
        id: `d${i}`,
        token: "TSLA",
        from,
        to,
        time: `2025-0${i + 2}-15T00:00:00Z`,
        block: 2 + i,
        stepKind: "dividend"
      })
    )
  ]

  it("equals the exact sum of the steps' incomes, rounded half to even once", () => {
    const report = runLedger(
      { wallets: [{ address: A, self: true }], country: "US", prices },
      events,
      "2025-12-31T00:00:00Z"
    )
    const raw = toUnits("7.123456789")
    // Σ raw × (m' − m) × answer / (m × 1e8), as one exact fraction, in attoUSD.
    let n = 0n
    let d = 1n
    steps.forEach(([from, to], i) => {
      const answer = i === 0 ? 33_333_333_333n : 27_182_818_284n
      const stepN = raw * (toUnits(to) - toUnits(from)) * answer
      const stepD = toUnits(from) * 10n ** 8n
      n = n * stepD + stepN * d
      d = d * stepD
    })
    const acquisition = roundHalfEven18(raw * 33_333_333_333n, 10n ** 8n * 10n ** 18n)
    const income = roundHalfEven18(n, d * 10n ** 18n)
    const lot = report.lots[0]!
    expect(toUnits(lot.basisUsd!)).toBe(acquisition + income)
    expect(lot.components.map((c) => c.kind)).toEqual(["acquisition", "income", "income", "income"])
    expect(toUnits(report.tokens[0]!.accruedIncomeAddedToBasisUsd!)).toBe(income)
  })

  it("keeps the basis of a lot split by a sale to the last digit (slice + rest = whole)", () => {
    const settings: LedgerSettings = { wallets: [{ address: A, self: true }], country: "US", prices }
    const whole = runLedger(settings, events, "2025-12-31T00:00:00Z").lots[0]!
    const sold = runLedger(
      settings,
      [
        ...events,
        transfer({
          id: "sell",
          token: "TSLA",
          from: A,
          to: EXCHANGE,
          qty: "2.333333333",
          time: "2025-06-01T00:00:00Z",
          block: 9,
          classification: sell
        })
      ],
      "2025-12-31T00:00:00Z"
    )
    const rest = sold.lots[0]!
    const slice = sold.disposals[0]!
    expect(toUnits(rest.basisUsd!) + toUnits(slice.basisUsd!)).toBe(toUnits(whole.basisUsd!))
  })

  it("a dividend step leaves the lot records untouched (O(1) per token, not per lot)", () => {
    const settings: LedgerSettings = { wallets: [{ address: A, self: true }], country: "US", prices }
    const before = build(settings, events.slice(0, 1))
    const after = Either.getOrThrow(Ledger.apply(before, events.slice(1)))
    const lotOf = (state: LedgerState) => state.books.get("TSLA")!.pools.get(A.toLowerCase())!.lots[0]
    expect(lotOf(after)).toBe(lotOf(before))
    expect(after.books.get("TSLA")!.accrual.steps.length).toBe(3)
  })

  it("a step without a price makes the lots it reached unknown, not the later ones", () => {
    const unpriced = { TSLA: [round(1, "100", "2025-03-01T00:00:00Z")] }
    const report = runLedger(
      { wallets: [{ address: A, self: true }], country: "US", prices: unpriced },
      [
        transfer({
          id: "early",
          token: "TSLA",
          from: EXCHANGE,
          to: A,
          qty: "1",
          time: "2025-03-02T00:00:00Z",
          block: 1,
          classification: buy
        }),
        multiplier({
          id: "d0",
          token: "TSLA",
          from: "1",
          to: "1.01",
          time: "2025-01-15T00:00:00Z",
          block: 2,
          stepKind: "dividend"
        }),
        transfer({
          id: "late",
          token: "TSLA",
          from: EXCHANGE,
          to: A,
          qty: "1",
          time: "2025-03-03T00:00:00Z",
          block: 3,
          classification: buy
        })
      ],
      "2025-12-31T00:00:00Z"
    )
    expect(report.lots.map((l) => [l.id, l.basisUsd])).toEqual([["early", null], ["late", "100"]])
    expect(report.lots[0]!.nullReasons).toEqual([{ reason: "missing_price", eventId: "d0" }])
  })
})

describe("an income record's lot ids are the lots held at the step, whatever the pool does later", () => {
  const prices = { TSLA: [round(1, "100", "2025-01-01T00:00:00Z")] }
  const settings: LedgerSettings = {
    wallets: [{ address: A, self: true }, { address: B, self: true }],
    country: "US",
    prices
  }
  const t = (day: number) => `2025-01-${String(day).padStart(2, "0")}T00:00:00Z`
  const acquire = (id: string, to: string, day: number, block: number) =>
    transfer({ id, token: "TSLA", from: EXCHANGE, to, qty: "1", time: t(day), block, classification: buy })
  const history = (moved: string): Array<LedgerEvent> => [
    acquire("a1", A, 1, 1),
    acquire(moved === "front" ? "b1" : "x", B, moved === "front" ? 2 : 4, 2),
    acquire("a2", A, 3, 3),
    acquire("a3", A, 5, 4),
    transfer({ id: "s1", token: "TSLA", from: A, to: EXCHANGE, qty: "1", time: t(6), block: 5, classification: sell }),
    multiplier({ id: "d", token: "TSLA", from: "1", to: "1.01", time: t(7), block: 6, stepKind: "dividend" }),
    // After the step: a2 sold, then B's older lot moves to A (in front of a3, or between a2 and a3 before the sale).
    ...(moved === "front"
      ? [
        transfer({
          id: "s2",
          token: "TSLA",
          from: A,
          to: EXCHANGE,
          qty: "1",
          time: t(8),
          block: 7,
          classification: sell
        }),
        transfer({ id: "m", token: "TSLA", from: B, to: A, qty: "1", time: t(9), block: 8 })
      ]
      : [transfer({ id: "m", token: "TSLA", from: B, to: A, qty: "1", time: t(9), block: 8 })])
  ]

  for (const moved of ["front", "middle"]) {
    it(`keeps them when a lot is later inserted in the ${moved} of the pool`, () => {
      const report = runLedger(settings, history(moved), "2025-12-31T00:00:00Z")
      const atA = report.income.find((e) => e.wallet === A)!
      expect(atA.lotIds).toEqual(["a2", "a3"])
      expect(report.lots.filter((l) => l.wallet === A).map((l) => l.id)).toEqual(
        moved === "front" ? ["b1", "a3"] : ["a2", "x", "a3"]
      )
    })
  }
})

const caseArb = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  count: fc.integer({ min: 5, max: 120 }),
  country: fc.constantFrom("US" as const, "SG" as const, "DE" as const),
  chunk: fc.integer({ min: 1, max: 40 }),
  withRates: fc.boolean()
})

type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never

const ratesFor = (start: number, end: number): RateTable => {
  const rates: Array<RateTable["rates"][number]> = []
  for (let t = start - 86_400; t <= end + 86_400; t += 86_400) {
    const date = new Date(t * 1000).toISOString().slice(0, 10)
    rates.push({ date, rate: `1.0${t % 9}`, source: "test", rateDate: date, carriedForward: false })
  }
  return { currency: "SGD", rates }
}

/** A random history of `caseArb` with its settings. */
const caseOf = ({ count, country, seed, withRates }: Omit<Case, "chunk">) => {
  const history = interpret(randomOps(count, seed))
  const settings: LedgerSettings = {
    ...settingsFor(history, country),
    ...(withRates ? { rates: ratesFor(history.start, history.end) } : {})
  }
  return { events: history.events, history, settings }
}

describe("streaming: released rows and streamed lots give the report of the whole state", () => {
  it("apply in chunks, releasing each chunk's rows, reports like one build; lotRows lists the report's lots", () => {
    fc.assert(
      fc.property(caseArb, ({ chunk, count, country, seed, withRates }) => {
        const { events, history, settings } = caseOf({ count, country, seed, withRates })
        if (events.length === 0) return
        const whole = build(settings, events)
        let streamed = Either.getOrThrow(Ledger.empty(settings))
        const written: Array<string> = []
        for (let i = 0; i < events.length; i += chunk) {
          const before = Ledger.rowCounts(streamed)
          // Half the runs give each state up to the next apply (lots changed in place), half keep it.
          streamed = Either.getOrThrow(Ledger.apply(streamed, events.slice(i, i + chunk), { consume: seed % 2 === 0 }))
          for (const row of Ledger.movementRows(streamed, before.movements)) written.push(JSON.stringify(row))
          for (const row of Ledger.disposalRows(streamed, before.disposals)) written.push(JSON.stringify(row))
          streamed = Ledger.release(streamed)
        }
        expect([...Ledger.movementRows(streamed)]).toEqual([])
        expect(Ledger.rowCounts(streamed)).toEqual(Ledger.rowCounts(whole))
        const expected = Ledger.report(whole, history.end, { rows: false })
        expect(JSON.stringify(Ledger.report(streamed, history.end, { rows: false }))).toBe(JSON.stringify(expected))
        expect(JSON.stringify([...Ledger.lotRows(streamed)])).toBe(JSON.stringify(expected.lots))
        expect(Ledger.report(streamed, history.end, { rows: false, lots: false }).lots).toEqual([])
        // The rows written chunk by chunk are the whole build's rows.
        expect(written.sort()).toEqual(
          [...Ledger.movementRows(whole), ...Ledger.disposalRows(whole)].map((row) => JSON.stringify(row)).sort()
        )
      }),
      { numRuns: 80 }
    )
  })

  it("release takes the gains the stored disposal rows gathered: the same totals as computing them again", () => {
    fc.assert(
      fc.property(caseArb, ({ chunk, count, country, seed, withRates }) => {
        const { events, settings } = caseOf({ count, country, seed, withRates })
        if (events.length === 0) return
        let computed = Either.getOrThrow(Ledger.empty(settings))
        let given = computed
        for (let i = 0; i < events.length; i += chunk) {
          const next = events.slice(i, i + chunk)
          computed = Ledger.release(Either.getOrThrow(Ledger.apply(computed, next)))
          given = Either.getOrThrow(Ledger.apply(given, next))
          const gains: Array<Ledger.DisposalGains> = []
          for (const _ of Ledger.storedDisposalRows(given, given.disposals.base, gains)) void _
          // One per disposal held, each that of its own row.
          expect(gains.map((g) => [formatUsd(g.gainUsd), formatUsd(g.gain)])).toEqual(
            [...Ledger.disposalRows(given, given.disposals.base)].map((row) => [row.gainUsd, row.gain])
          )
          given = Ledger.release(given, gains)
        }
        const totals = (state: LedgerState) =>
          JSON.stringify(state.released, (_, v) => typeof v === "bigint" ? v.toString() : v instanceof Map ? [...v] : v)
        expect(totals(given)).toBe(totals(computed))
      }),
      { numRuns: 60 }
    )
  })

  it("release counts each disposal's given gains in its own year, and computes them when not one each", () => {
    const [a, exchange] = [address(0xa), address(0xe)]
    const sale = (id: string, time: string, block: number) =>
      transfer({
        id,
        token: "TSLA",
        from: a,
        to: exchange,
        qty: "1",
        time,
        block,
        classification: user("transfer.out", "exchange")
      })
    const state = build({
      wallets: [{ address: a, self: true }],
      country: "US",
      prices: { TSLA: [round(1, "100", "2023-01-01T00:00:00Z")] }
    }, [
      transfer({
        id: "buy",
        token: "TSLA",
        from: exchange,
        to: a,
        qty: "2",
        time: "2023-06-01T15:00:00Z",
        block: 1,
        classification: user("transfer.in", "exchange")
      }),
      sale("sell-2023", "2023-12-01T15:00:00Z", 2),
      sale("sell-2024", "2024-03-01T15:00:00Z", 3)
    ])
    expect(Ledger.rowCounts(state).disposals).toBe(2)
    const released = Ledger.release(state, [{ gainUsd: 1n, gain: 2n }, { gainUsd: 3n, gain: 4n }]).released
    expect(released.realised.get(2023)).toMatchObject({ knownUsd: 1n, knownConverted: 2n, count: 1 })
    expect(released.realised.get(2024)).toMatchObject({ knownUsd: 3n, knownConverted: 4n, count: 1 })
    // Not one per disposal held: not trusted.
    expect(Ledger.release(state, [{ gainUsd: 1n, gain: 2n }]).released).toEqual(Ledger.release(state).released)
  })

  it("a released state still applies new events like the full one", () => {
    const history = interpret(randomOps(80, 11))
    const settings = settingsFor(history, "US")
    const cut = Math.floor(history.events.length / 2)
    const whole = build(settings, history.events)
    const resumed = Either.getOrThrow(
      Ledger.apply(Ledger.release(build(settings, history.events.slice(0, cut))), history.events.slice(cut))
    )
    const from = Ledger.rowCounts(build(settings, history.events.slice(0, cut)))
    expect(JSON.stringify([...Ledger.disposalRows(resumed, from.disposals)])).toBe(
      JSON.stringify([...Ledger.disposalRows(whole, from.disposals)])
    )
    expect(JSON.stringify(Ledger.report(resumed, history.end, { rows: false }))).toBe(
      JSON.stringify(Ledger.report(whole, history.end, { rows: false }))
    )
  })
})
