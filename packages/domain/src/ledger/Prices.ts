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

/**
 * Parses a price table once (cached per table object, so a replay with new wallets or labels reuses it).
 * Returns an error message when rounds are not sorted by `updatedAt`.
 */
export const indexPrices = (table: PriceTable): PriceIndex | string => {
  const cached = indexes.get(table)
  if (cached !== undefined) return cached
  const index = new Map<string, PriceSeries>()
  let problem: string | null = null
  for (const token of Object.keys(table).sort()) {
    const rounds = table[token]!
    const times: Array<number> = []
    const refs: Array<PriceRef> = []
    for (let i = 0; i < rounds.length; i++) {
      const round = rounds[i]!
      if (i > 0 && round.updatedAt < rounds[i - 1]!.updatedAt) {
        problem = `price rounds of ${token} are not sorted by updatedAt (round ${round.roundId})`
        break
      }
      if (!/^\d+$/.test(round.answer)) {
        problem = `price round ${round.roundId} of ${token}: answer is not an integer`
        break
      }
      times.push(round.updatedAt)
      refs.push({ round, answer: BigInt(round.answer) })
    }
    if (problem !== null) break
    index.set(token, { times, refs })
  }
  const result = problem ?? index
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
