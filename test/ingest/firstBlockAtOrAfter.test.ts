import { describe, expect, it } from "@effect/vitest"
import { ChainClient, type ChainClientService } from "@scaledger/domain/chain/ChainClient"
import { firstBlockAtOrAfter } from "@scaledger/workers/ingest/Activation"
import { Effect, Option } from "effect"
import * as fc from "fast-check"

/** A chain whose block `n` has time `times[n]` (strictly increasing), counting the reads and the round trips. */
const chainOf = (times: ReadonlyArray<number>) => {
  const counts = { roundTrips: 0, reads: 0 }
  const read = (n: number) => {
    if (n < 0 || n >= times.length) throw new Error(`block ${n} read outside the chain`)
    return times[n]!
  }
  const client = {
    blockTimestamp: (n: number) =>
      Effect.sync(() => {
        counts.roundTrips++
        counts.reads++
        return read(n)
      }),
    blockTimestamps: (numbers: ReadonlyArray<number>) =>
      Effect.sync(() => {
        counts.roundTrips++
        counts.reads += numbers.length
        return new Map(numbers.map((n) => [n, read(n)] as const))
      })
  } as unknown as ChainClientService
  return { client, counts }
}

/** The definition: the first block in `[lo, hi]` at or after `time`, by looking at each. */
const linear = (times: ReadonlyArray<number>, time: number, lo: number, hi: number) => {
  for (let n = lo; n <= hi; n++) if (times[n]! >= time) return Option.some(n)
  return Option.none()
}

const run = (times: ReadonlyArray<number>, time: number, lo: number, hi: number) => {
  const { client, counts } = chainOf(times)
  const found = Effect.runSync(firstBlockAtOrAfter(time, lo, hi).pipe(Effect.provideService(ChainClient, client)))
  return { found, counts }
}

describe("firstBlockAtOrAfter", () => {
  it("finds what a block-by-block look finds, for any range and time", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 400 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: -50, max: 13_000 }),
        (gaps, a, b, offset) => {
          const times: Array<number> = []
          let t = 1_700_000_000
          for (const gap of gaps) times.push(t += gap)
          const lo = a % times.length
          const hi = lo + (b % (times.length - lo))
          const time = times[0]! + offset
          expect(run(times, time, lo, hi).found).toEqual(linear(times, time, lo, hi))
        }
      ),
      { numRuns: 500 }
    )
  })

  it("is none for an empty range and for a time after the range's last block", () => {
    const times = [10, 20, 30, 40]
    expect(run(times, 25, 3, 2).found).toEqual(Option.none())
    expect(run(times, 41, 0, 3).found).toEqual(Option.none())
    expect(run(times, 31, 0, 2).found).toEqual(Option.none())
    expect(run(times, 30, 2, 2).found).toEqual(Option.some(2))
    expect(run(times, 5, 1, 3).found).toEqual(Option.some(1))
  })

  it("asks the node in few round trips, each a batch: 7 over a million blocks (a halving search takes 21)", () => {
    const times = Array.from({ length: 1_000_001 }, (_, n) => 1_700_000_000 + 2 * n)
    const { found, counts } = run(times, times[654_321]! - 1, 0, 1_000_000)
    expect(found).toEqual(Option.some(654_321))
    expect(counts.roundTrips).toBe(7)
    expect(counts.reads).toBeLessThanOrEqual(7 * 8 + 1)
  })
})
