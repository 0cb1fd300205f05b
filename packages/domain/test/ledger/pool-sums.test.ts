import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Ledger } from "../../src/ledger/index.js"
import type { LotRecord } from "../../src/ledger/LedgerState.js"
import { insertLot, newQueue, takeFifo } from "../../src/ledger/Lots.js"
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

const lot = (id: string, acquiredAt: number, raw: bigint): LotRecord => ({
  id,
  seq: acquiredAt,
  acquiredAt,
  raw,
  multiplier: 10n ** 18n,
  price: null,
  acquisitionUsd: null,
  spans: [],
  incomeAdjust: 0n,
  accruingFrom: 0,
  sourceEventId: id,
  nullReasons: [],
  dateUnknown: false
})

/**
 * A log keeps the lots it names alive: a queue logs its changes only once figures kept of it may follow them, so a
 * full build (no report until its end) keeps no consumed lot for a log.
 */
describe("a queue's change log", () => {
  it("is kept only from `logChanges` on, each append and take then logged", () => {
    const queue = newQueue()
    insertLot(queue, lot("a", 1, 5n))
    takeFifo(queue, 2n)
    expect(queue.changes).toEqual([])
    expect(queue.changesFrom).toBe(queue.version)
    const from = queue.version
    Ledger.logChanges(queue)
    const b = lot("b", 2, 1n)
    insertLot(queue, b)
    takeFifo(queue, 3n)
    expect(queue.changesFrom).toBe(from)
    expect(queue.changes).toHaveLength(2)
    expect(queue.changes[0]).toEqual({ added: b })
    // An insert before the head cannot be followed: the log starts again after it.
    insertLot(queue, lot("c", 0, 1n))
    expect(queue.changes).toEqual([])
    expect(queue.changesFrom).toBe(queue.version)
  })

  it("is kept for every open queue once a report with kept figures saw it, and none before", () => {
    const history = interpret(randomOps(60, 7))
    let state = Either.getOrThrow(Ledger.empty(settingsFor(history, "US")))
    state = Either.getOrThrow(Ledger.apply(state, history.events, { consume: true }))
    const queues = [...Ledger.openPoolsOf(state)].map((pool) => pool.queue)
    expect(queues.length).toBeGreaterThan(0)
    expect(queues.every((queue) => !queue.logged && queue.changes.length === 0)).toBe(true)
    Ledger.report(state, history.end, { rows: false, lots: false, cache: new Ledger.FiguresCache() })
    expect(queues.every((queue) => queue.logged)).toBe(true)
  })
})
