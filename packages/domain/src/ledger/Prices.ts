import type { PriceRound, PriceTable } from "./LedgerInput.js"

/** A round a figure was priced with; `answer` is the parsed 8-decimal price of one token. */
export interface PriceRef {
  readonly round: PriceRound
  readonly answer: bigint
}

export interface PriceSeries {
  readonly times: ReadonlyArray<number>
  readonly refs: ReadonlyArray<PriceRef>
}

export type PriceIndex = ReadonlyMap<string, PriceSeries>

const indexes = new WeakMap<PriceTable, PriceIndex | string>()
const series = new WeakMap<ReadonlyArray<PriceRound>, PriceSeries | string>()

/** One token's rounds parsed (cached per array); a message when they are not sorted or an answer is not an integer. */
const seriesOf = (token: string, rounds: ReadonlyArray<PriceRound>): PriceSeries | string => {
  const cached = series.get(rounds)
  if (cached !== undefined) return cached
  const times: Array<number> = []
  const refs: Array<PriceRef> = []
  let result: PriceSeries | string = { times, refs }
  for (let i = 0; i < rounds.length; i++) {
    const round = rounds[i]!
    if (i > 0 && round.updatedAt < rounds[i - 1]!.updatedAt) {
      result = `price rounds of ${token} are not sorted by updatedAt (round ${round.roundId})`
      break
    }
    if (!/^\d+$/.test(round.answer)) {
      result = `price round ${round.roundId} of ${token}: answer is not an integer`
      break
    }
    times.push(round.updatedAt)
    refs.push({ round, answer: BigInt(round.answer) })
  }
  // A message names its token: kept per array only when parsed well (an array may be another token's too).
  if (typeof result !== "string") series.set(rounds, result)
  return result
}

/**
 * Parses a price table once (cached per table object, so a replay with new wallets or labels reuses it, and per
 * token's array of rounds, so a table made again around the same arrays is not parsed again). Returns an error
 * message when rounds are not sorted by `updatedAt`.
 */
export const indexPrices = (table: PriceTable): PriceIndex | string => {
  const cached = indexes.get(table)
  if (cached !== undefined) return cached
  const index = new Map<string, PriceSeries>()
  let result: PriceIndex | string = index
  for (const token of Object.keys(table).sort()) {
    const parsed = seriesOf(token, table[token]!)
    if (typeof parsed === "string") {
      result = parsed
      break
    }
    index.set(token, parsed)
  }
  indexes.set(table, result)
  return result
}

/** The last round with updatedAt ≤ t; null without one, or when that round's answer is not a positive price. */
export const priceAt = (index: PriceIndex, token: string, t: number): PriceRef | null => {
  const series = index.get(token)
  if (series === undefined) return null
  const { times } = series
  let lo = 0
  let hi = times.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (times[mid]! <= t) lo = mid + 1
    else hi = mid
  }
  if (lo === 0) return null
  const ref = series.refs[lo - 1]!
  return ref.answer > 0n ? ref : null
}
