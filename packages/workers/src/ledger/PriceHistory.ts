/**
 * The price rounds the ledger worker builds with, kept between builds: each build reads only the rounds recorded
 * since the last read (a feed adds tens a day per token; an account's history holds hundreds of thousands), and a
 * token's rounds stay the same array while none arrive, so the ledger's parse of them is reused (`indexPrices`).
 */
import type { SqlError } from "@effect/sql/SqlError"
import type { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import type { LedgerToken } from "@scaledger/db/ledger/LedgerInputs"
import type { PriceRound, PriceTable } from "@scaledger/domain/ledger/LedgerInput"
import { Effect } from "effect"

/** `roundsFor`'s order: by `updatedAt`, then round id as a number. */
const compareRounds = (a: PriceRound, b: PriceRound): number =>
  a.updatedAt - b.updatedAt || a.roundId.length - b.roundId.length ||
  (a.roundId < b.roundId ? -1 : a.roundId > b.roundId ? 1 : 0)

/** `held` with `added` (both in order) in order; a round of the same feed and id as one held replaces it. */
const mergeRounds = (
  held: ReadonlyArray<PriceRound>,
  added: ReadonlyArray<PriceRound>
): ReadonlyArray<PriceRound> => {
  if (added.length === 0) return held
  if (held.length === 0) return added
  // The usual case: rounds newer than every round held.
  if (compareRounds(held[held.length - 1]!, added[0]!) < 0) return held.concat(added)
  const byId = new Map<string, PriceRound>()
  for (const round of held) byId.set(`${round.feed.toLowerCase()}:${round.roundId}`, round)
  for (const round of added) byId.set(`${round.feed.toLowerCase()}:${round.roundId}`, round)
  return [...byId.values()].sort(compareRounds)
}

/**
 * Per token key, the rounds read so far and the snapshot they were read at. Reads are one at a time: each reads
 * every held token's new rounds with the snapshot it moves to, so a token held but not asked for stays complete.
 */
export const makePriceHistory = (rounds: PriceRounds) =>
  Effect.map(Effect.makeSemaphore(1), (lock) => {
    const chains = new Map<
      number,
      { snapshot: string | undefined; readonly held: Map<string, ReadonlyArray<PriceRound>> }
    >()

    const pricesFor = (chainId: number, tokens: ReadonlyArray<LedgerToken>): Effect.Effect<PriceTable, SqlError> =>
      lock.withPermits(1)(Effect.gen(function*() {
        let chain = chains.get(chainId)
        if (chain === undefined) chains.set(chainId, chain = { snapshot: undefined, held: new Map() })
        const { held } = chain
        const missing = new Set(tokens.map((token) => token.key.toLowerCase()).filter((key) => !held.has(key)))
        const read = yield* rounds.roundsRecordedSince(chainId, [...missing], [...held.keys()], chain.snapshot)
        for (const [key, added] of Object.entries(read.rounds)) {
          held.set(key, missing.has(key) ? added : mergeRounds(held.get(key) ?? [], added))
        }
        chain.snapshot = read.snapshot
        return Object.fromEntries(tokens.map((token) => [token.symbol, held.get(token.key.toLowerCase()) ?? []]))
      }))

    return { pricesFor } as const
  })
