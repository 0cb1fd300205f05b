import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  Ledger,
  type LedgerEvent,
  type LedgerSettings,
  type PriceTable,
  type RateTable
} from "../../src/ledger/index.js"
import { interpret, randomOps, settingsFor } from "./generate.js"

/**
 * An incremental build resumes from a checkpoint (the state after the events up to some block) with the inputs
 * recorded since: more price rounds, more dates in the rate table. It must give the same report, and the same rows,
 * as a rebuild of every event with the newest inputs.
 */
const caseArb = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  count: fc.integer({ min: 5, max: 120 }),
  country: fc.constantFrom("US" as const, "SG" as const, "DE" as const),
  cut: fc.nat(),
  withRates: fc.boolean()
})

const dateOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 10)

/** EUR rates on every date from the first event to `end` (the rate service gives every date). */
const ratesUntil = (start: number, end: number): RateTable => {
  const rates: Array<RateTable["rates"][number]> = []
  for (let t = start - 86_400; t <= end + 86_400; t += 86_400) {
    const date = dateOf(t)
    rates.push({ date, rate: `0.9${t % 7}`, source: "ecb-via-test", rateDate: date, carriedForward: false })
  }
  return { currency: "EUR", rates }
}

/** The rounds recorded by time `t`. */
const pricesUntil = (table: PriceTable, t: number): PriceTable =>
  Object.fromEntries(Object.entries(table).map(([token, rounds]) => [token, rounds.filter((r) => r.updatedAt <= t)]))

const rows = (state: ReturnType<typeof build>, from?: Ledger.RowCounts) =>
  JSON.stringify([
    [...Ledger.movementRows(state, from?.movements)],
    [...Ledger.disposalRows(state, from?.disposals)],
    [...Ledger.incomeRows(state, from?.income)],
    [...Ledger.splitRows(state, from?.splits)]
  ])

const build = (settings: LedgerSettings, events: ReadonlyArray<LedgerEvent>) =>
  Either.getOrThrow(Ledger.build({ ...settings, events }))

describe("incremental builds from a checkpoint", () => {
  it("resuming with newer inputs equals rebuilding with them, report and rows byte for byte", () => {
    fc.assert(
      fc.property(caseArb, ({ count, country, cut, seed, withRates }) => {
        const history = interpret(randomOps(count, seed))
        const { events } = history
        if (events.length === 0) return
        const first = events[0]!.kind === "transfer" ? events[0].timestamp : events[0]!.effectiveAt
        const at = cut % (events.length + 1)
        const last = events[at - 1]
        const lastTime = last === undefined ? first - 1 : last.kind === "transfer" ? last.timestamp : last.effectiveAt
        const newest: LedgerSettings = {
          ...settingsFor(history, country),
          ...(withRates ? { rates: ratesUntil(first, history.end) } : {})
        }
        // What was recorded when the checkpoint was built: rounds and rates up to its last event.
        const then: LedgerSettings = {
          ...newest,
          prices: pricesUntil(newest.prices!, lastTime),
          ...(withRates ? { rates: ratesUntil(first, lastTime) } : {})
        }
        const checkpoint = build(then, events.slice(0, at))
        const resumed = Either.getOrThrow(
          Ledger.apply(
            Either.getOrThrow(Ledger.withInputs(checkpoint, { prices: newest.prices, rates: newest.rates })),
            events.slice(at)
          )
        )
        const rebuilt = build(newest, events)
        expect(JSON.stringify(Ledger.report(resumed, history.end))).toBe(
          JSON.stringify(Ledger.report(rebuilt, history.end))
        )
        // The rows an incremental build writes: those after the checkpoint's counts, appended to the stored ones.
        expect(rows(resumed, Ledger.rowCounts(checkpoint))).toBe(rows(rebuilt, Ledger.rowCounts(checkpoint)))
        expect(rows(checkpoint)).toBe(rows(build(newest, events.slice(0, at))))
      }),
      { numRuns: 120 }
    )
  })

  it("refuses newer inputs that are not valid settings, leaving the state usable", () => {
    const history = interpret(randomOps(20, 7))
    const state = build(settingsFor(history, "US"), history.events)
    const bad = Ledger.withInputs(state, { prices: { AAPL: [{ roundId: "1", answer: "x", updatedAt: 1, feed: "f" }] } })
    expect(Either.isLeft(bad)).toBe(true)
    expect(Ledger.report(state, history.end).positions.length).toBeGreaterThanOrEqual(0)
  })
})
