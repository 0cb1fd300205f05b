import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Ledger } from "../../src/ledger/index.js"
import { interpret, randomOps, settingsFor } from "./generate.js"

/**
 * An incremental build applies a few events to the state in place and reports again with the figures kept from the
 * last report: a queue's sums follow its logged changes (lots appended, taken from the head) instead of being made
 * from every lot. Each such report must equal a report made from scratch, byte for byte.
 */
describe("queue sums kept between reports", () => {
  it("follow appends and takes: every report with the kept figures equals one made from scratch", () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 1_000_000 }),
          count: fc.integer({ min: 5, max: 150 }),
          country: fc.constantFrom("US" as const, "SG" as const, "DE" as const),
          step: fc.integer({ min: 1, max: 6 })
        }),
        ({ count, country, seed, step }) => {
          const history = interpret(randomOps(count, seed))
          const { events } = history
          const cache = new Ledger.FiguresCache()
          let state = Either.getOrThrow(Ledger.empty(settingsFor(history, country)))
          for (let at = 0; at < events.length; at += step) {
            state = Either.getOrThrow(Ledger.apply(state, events.slice(at, at + step), { consume: true }))
            const kept = Ledger.report(state, history.end, { rows: false, lots: false, cache })
            const fresh = Ledger.report(state, history.end, { rows: false, lots: false })
            expect(JSON.stringify(kept)).toBe(JSON.stringify(fresh))
          }
        }
      ),
      { numRuns: 150 }
    )
  })
})
