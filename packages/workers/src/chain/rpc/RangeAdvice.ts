/**
 * How to shrink an `eth_getLogs` range after a provider refused it. Providers say it in their own words; each
 * pattern below names the provider whose message it matches (the messages as those providers send them), in the
 * order they are tried: a stated cap first, then a suggested range, then "too much: halve".
 */

export type RangeAdvice =
  /** The provider states its cap: never ask for more than `blocks` again. */
  | { readonly kind: "ceiling"; readonly blocks: number }
  /** The provider suggests a range that works for this query. */
  | { readonly kind: "suggested"; readonly blocks: number }
  /** Too many results, too large, too slow: halve. */
  | { readonly kind: "halve" }

interface Pattern {
  /** Whose message this is. */
  readonly provider: string
  readonly pattern: RegExp
  readonly advice: (match: RegExpMatchArray) => RangeAdvice | undefined
}

const number = (text: string): number => Number(text.replace(/[,.]/g, ""))

const ceiling = (blocks: number): RangeAdvice | undefined =>
  Number.isFinite(blocks) && blocks > 0 ? { kind: "ceiling", blocks } : undefined

const halve = (): RangeAdvice => ({ kind: "halve" })

const cap = (provider: string, pattern: RegExp): Pattern => ({
  provider,
  pattern,
  advice: (m) => ceiling(number(m[1]!))
})

const tooMuch = (provider: string, pattern: RegExp): Pattern => ({ provider, pattern, advice: halve })

export const RANGE_PATTERNS: ReadonlyArray<Pattern> = [
  // Stated caps.
  {
    provider: "Alchemy, Aurora: `... with up to a 2K block range ...`",
    pattern: /up to an? ([\d,.]+)(K?) block range/i,
    advice: (m) => ceiling(number(m[1]!) * (m[2] === "" ? 1 : 1000))
  },
  cap(
    "Arbitrum Nitro (Robinhood Chain), QuickNode, 1RPC, Blast, BlockPI: `eth_getLogs is limited to a 1000 block range`",
    /limited to an? ([\d,.]+) (?:block )?range/i
  ),
  cap("Infura-style: `range 1000000 exceeds limit of 10000`", /range \d+ exceeds limit of ([\d,.]+)/i),
  cap("Hyperliquid: `query exceeds max block range 5000`", /exceeds max block range ([\d,.]+)/i),
  cap(
    "PublicNode, Erigon: `max block range = 5000`, `maximum block range: 5000`",
    /max(?:imum)? block range(?: =|:)? ([\d,.]+)/i
  ),
  cap(
    "Moonriver, Frontier: `block range is too wide (maximum 1024)`",
    /block range is too wide \(maximum ([\d,.]+)\)/i
  ),
  cap("Ankr (TAC): `maximum [from, to] blocks distance: 10000`", /maximum \[from, to\] blocks distance: (\d+)/i),
  cap("Reth-style: `block range is bigger than range limit 5000`", /(?:bigger|larger) than range limit ([\d,.]+)/i),
  cap(
    "Coinbase (Base node): `please limit the query to at most 1000 blocks`",
    /limit the query to at most ([\d,.]+) blocks/i
  ),
  cap(
    "Avalanche: `requested too many blocks from 1 to 5000, maximum is set to 2048`",
    /requested too many blocks from \d+ to \d+, maximum is set to (\d+)/i
  ),
  cap(
    "thirdweb: `Maximum allowed number of requested blocks is 1000`",
    /Maximum allowed number of requested blocks is ([\d,.]+)/i
  ),
  cap(
    "Blast (paid): `exceeds the range allowed for your plan (10000 > 5000)`",
    /exceeds the range allowed for your plan \(\d+ > (\d+)\)/i
  ),
  // Suggested ranges.
  {
    provider: "Alchemy (`this block range should work: [0x.., 0x..]`), Infura, zkSync (`Try with this block range`)",
    pattern: /(?:should work|Try with this block range):? \[0x([0-9a-f]+),\s*0x([0-9a-f]+)\]/i,
    advice: (m) => {
      const blocks = parseInt(m[2]!, 16) - parseInt(m[1]!, 16) + 1
      return blocks > 0 ? { kind: "suggested", blocks } : undefined
    }
  },
  // Too many results or too much work, no number: halve.
  tooMuch("geth, Infura, zkEVM: `query returned more than 10000 results`", /query returned more than \d+ results/i),
  tooMuch("Arbitrum Nitro: `logs matched by query exceeds limit of 10000`", /logs matched by query exceeds limit/i),
  tooMuch("Alchemy: `Log response size exceeded`", /Log response size exceeded|response size/i),
  tooMuch(
    "LlamaRPC, Ankr: `query exceeds max results`",
    /query exceeds max results|exceeds? (?:the )?max(?:imum)? (?:results|logs)|too many (?:logs|results)/i
  ),
  tooMuch("Optimism: `backend response too large`", /backend response too large/i),
  tooMuch(
    "Ankr (`block range is too wide`), Optimism (`Block range is too large`), Base (`block range too large`)",
    /block range (?:is )?too (?:wide|large|high)/i
  ),
  tooMuch("Chainstack: `Block range limit exceeded.`", /Block range limit exceeded/i),
  tooMuch("geth, Erigon time-outs: `query timeout exceeded`", /query timeout|query timed out|timeout exceeded/i)
]

/** How to shrink an `eth_getLogs` range after a provider error, if the error is about the range at all. */
export const rangeAdvice = (message: string): RangeAdvice | undefined => {
  for (const { advice, pattern } of RANGE_PATTERNS) {
    const m = message.match(pattern)
    if (m === null) continue
    const result = advice(m)
    if (result !== undefined) return result
  }
  return undefined
}
