/**
 * The `bench:ledger` account (an active trader over two own addresses, five tokens, a dividend step per token
 * every 20,000 blocks) generated in memory, without a database: `npx tsx packages/domain/bench/trader.ts [events]`.
 * The same events `test/bench/ledger.ts` writes to PostgreSQL, for profiling the pure ledger alone.
 */
import type { LedgerEvent, PriceTable } from "../src/ledger/LedgerInput.js"

export const TOKENS = ["AAPL", "CRWD", "SGOV", "MU", "TSLA"]
export const BASE_TIME = Date.UTC(2024, 0, 2) / 1000
const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const hex64 = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
export const tokenAddress = (t: number) => hex40(0xa000 + t)

/** A round per token every 500 blocks. */
export const traderPrices = (events: number): PriceTable =>
  Object.fromEntries(TOKENS.map((symbol, t) => [
    symbol,
    Array.from({ length: Math.ceil(events / 500) + 1 }, (_, r) => ({
      roundId: String(r + 1),
      answer: String((100 + t * 10 + (r % 50)) * 1e8),
      updatedAt: BASE_TIME + r * 500 - 1,
      feed: hex40(0xf000 + t)
    }))
  ]))

/** The account's own addresses for a seed. */
export const traderWallets = (seed: number) => [hex40(0x100000 * seed + 1), hex40(0x100000 * seed + 2)] as const

/** Events `from`..`to` (block numbers, inclusive), in chain order: multiplier steps before the block's transfer. */
export const traderEvents = (to: number, seed = 1, from = 1): Array<LedgerEvent> => {
  const [w1, w2] = traderWallets(seed)
  const exchange = hex40(0x100000 * seed + 3)
  const zero = hex40(0)
  const out: Array<LedgerEvent> = []
  for (let i = from; i <= to; i++) {
    if (i % 4000 === 0) {
      const k = i / 4000
      const t = k % 5
      const step = Math.floor(k / 5)
      out.push({
        kind: "multiplier",
        id: `m:${k}`,
        token: TOKENS[t]!,
        tokenAddress: tokenAddress(t),
        from: (10n ** 18n + BigInt(step) * 100000000000000n).toString(),
        to: (10n ** 18n + BigInt(step + 1) * 100000000000000n).toString(),
        effectiveAt: BASE_TIME + i,
        block: i,
        logIndex: -1,
        stepKind: "dividend"
      })
    }
    const r = i % 10
    const f = r < 3 ? zero : r === 3 || r === 4 || r === 5 ? w1 : r === 6 || r === 9 ? exchange : w2
    const t2 = r < 3 ? w1 : r === 3 ? w2 : r === 4 || r === 5 || r === 7 ? exchange : r === 6 ? w2 : w1
    const t = Math.floor(i / 10) % 5
    out.push({
      kind: "transfer",
      id: `t:${i}`,
      token: TOKENS[t]!,
      tokenAddress: tokenAddress(t),
      from: f,
      to: t2,
      raw: "1000000000000000000",
      block: i,
      logIndex: 0,
      txHash: hex64(seed * 10_000_000 + i),
      timestamp: BASE_TIME + i
    })
  }
  return out
}
