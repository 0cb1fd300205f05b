/**
 * Random but valid chain histories for property tests and the benchmark: a list of operations is interpreted
 * against a model of the chain (balances, collateral posted, tokens in transit), so every transfer is one the chain
 * could have made (complete history), and the model's balances are the expected answer.
 */
import type { Classification, LedgerEvent, LedgerSettings, PriceRound } from "../../src/ledger/index.js"
import { address, txHash, ZERO } from "./fixtures.js"

export type OpKind =
  | "buy"
  | "mint"
  | "sell"
  | "burn"
  | "self"
  | "selfToOther"
  | "aiSell"
  | "collateralPost"
  | "collateralWithdraw"
  | "bridgeOut"
  | "bridgeIn"
  | "dividend"
  | "split"
  | "price"

export interface Op {
  readonly kind: OpKind
  readonly wallet: number
  readonly other: number
  readonly token: number
  /** 1..1000: a share of the available balance (per mille) or of 1,000 tokens for purchases. */
  readonly amount: number
  /** Seconds since the previous operation. */
  readonly gap: number
  readonly classified: boolean
}

export const OP_KINDS: ReadonlyArray<OpKind> = [
  "buy",
  "mint",
  "sell",
  "burn",
  "self",
  "selfToOther",
  "aiSell",
  "collateralPost",
  "collateralWithdraw",
  "bridgeOut",
  "bridgeIn",
  "dividend",
  "split",
  "price"
]

export const TOKENS = ["AAPL", "CRWD", "TSLA"] as const
export const OWN = [address(0xa1), address(0xa2), address(0xa3)]
/** Own in fact, but only registered in the "later" settings. */
export const UNREGISTERED_OWN = address(0xa4)
export const EXCHANGE = address(0xe1)
export const LENDER = address(0x1e4d)
export const BRIDGE = address(0xb41d)
const TOKEN_ADDRESS = TOKENS.map((_, i) => address(0x7000 + i))
const ONE = 10n ** 18n

export interface History {
  readonly events: Array<LedgerEvent>
  readonly prices: Record<string, Array<PriceRound>>
  /** Chain balance per "address|token" (own addresses only). */
  readonly balances: Map<string, bigint>
  /** Collateral posted per "address|token". */
  readonly posted: Map<string, bigint>
  readonly inTransit: Map<string, bigint>
  readonly start: number
  readonly end: number
}

const cls = (type: Classification["type"], relationship: Classification["relationship"]): Classification => ({
  type,
  relationship,
  classifiedBy: "user",
  confirmed: true
})

export const interpret = (ops: ReadonlyArray<Op>, start = 1_735_689_600): History => {
  const events: Array<LedgerEvent> = []
  const prices: Record<string, Array<PriceRound>> = { AAPL: [], CRWD: [], TSLA: [] }
  const balances = new Map<string, bigint>()
  const posted = new Map<string, bigint>()
  const inTransit = new Map<string, bigint>()
  const multipliers = TOKENS.map(() => ONE)
  let time = start
  let block = 1
  let n = 0
  const get = (m: Map<string, bigint>, k: string) => m.get(k) ?? 0n
  const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, get(m, k) + v)
  const push = (
    op: Op,
    from: string,
    to: string,
    raw: bigint,
    classification: Classification | undefined
  ) => {
    const id = `e${n++}`
    events.push({
      id,
      kind: "transfer",
      token: TOKENS[op.token]!,
      tokenAddress: TOKEN_ADDRESS[op.token]!,
      from,
      to,
      raw: raw.toString(),
      block,
      logIndex: 0,
      txHash: txHash(n),
      timestamp: time,
      ...(classification === undefined ? {} : { classification })
    })
  }
  for (const op of ops) {
    time += op.gap
    block += 1
    const token = TOKENS[op.token]!
    const w = OWN[op.wallet % OWN.length]!
    const key = `${w.toLowerCase()}|${token}`
    const balance = get(balances, key)
    const share = (available: bigint) => (available * BigInt(op.amount)) / 1000n
    switch (op.kind) {
      case "buy":
      case "mint": {
        const raw = BigInt(op.amount) * ONE / 7n
        push(
          op,
          op.kind === "mint" ? ZERO : EXCHANGE,
          w,
          raw,
          op.classified
            ? cls(op.kind === "mint" ? "mint" : "transfer.in", op.kind === "mint" ? null : "exchange")
            : undefined
        )
        add(balances, key, raw)
        break
      }
      case "sell":
      case "burn":
      case "aiSell": {
        const raw = share(balance)
        const to = op.kind === "burn" ? ZERO : EXCHANGE
        const classification: Classification | undefined = op.kind === "aiSell"
          ? { type: "transfer.out", relationship: "counterparty", classifiedBy: "ai_labeled", confirmed: false }
          : op.classified
          ? cls(op.kind === "burn" ? "burn" : "transfer.out", op.kind === "burn" ? null : "exchange")
          : undefined
        push(op, w, to, raw, classification)
        add(balances, key, -raw)
        break
      }
      case "self": {
        const to = OWN[op.other % OWN.length]!
        const raw = share(balance)
        push(op, w, to, raw, undefined)
        add(balances, key, -raw)
        add(balances, `${to.toLowerCase()}|${token}`, raw)
        break
      }
      case "selfToOther": {
        const raw = share(balance)
        push(op, w, UNREGISTERED_OWN, raw, undefined)
        add(balances, key, -raw)
        add(balances, `${UNREGISTERED_OWN.toLowerCase()}|${token}`, raw)
        break
      }
      case "collateralPost": {
        const raw = share(balance)
        push(op, w, LENDER, raw, cls("collateral_post", "contract"))
        add(balances, key, -raw)
        add(posted, key, raw)
        break
      }
      case "collateralWithdraw": {
        const raw = share(get(posted, key))
        push(op, LENDER, w, raw, cls("collateral_withdraw", "contract"))
        add(balances, key, raw)
        add(posted, key, -raw)
        break
      }
      case "bridgeOut": {
        const raw = share(balance)
        push(op, w, BRIDGE, raw, cls("bridge.out", "contract"))
        add(balances, key, -raw)
        add(inTransit, token, raw)
        break
      }
      case "bridgeIn": {
        const raw = share(get(inTransit, token))
        push(op, BRIDGE, w, raw, cls("bridge.in", "contract"))
        add(balances, key, raw)
        add(inTransit, token, -raw)
        break
      }
      case "dividend":
      case "split": {
        const from = multipliers[op.token]!
        const to = op.kind === "split"
          ? from * BigInt(2 + (op.amount % 3))
          : from + (from * BigInt(op.amount)) / 1_000_000n + 1n
        multipliers[op.token] = to
        events.push({
          id: `e${n++}`,
          kind: "multiplier",
          token,
          tokenAddress: TOKEN_ADDRESS[op.token]!,
          from: from.toString(),
          to: to.toString(),
          effectiveAt: time,
          block,
          logIndex: -1,
          stepKind: op.kind
        })
        break
      }
      case "price": {
        prices[token]!.push({
          roundId: String(prices[token]!.length + 1),
          answer: (BigInt(op.amount) * 10n ** 8n + BigInt(op.gap % 100) * 10n ** 6n).toString(),
          updatedAt: time,
          feed: address(0xfeed + op.token)
        })
        break
      }
    }
  }
  return { events, prices, balances, posted, inTransit, start, end: time }
}

export const settingsFor = (
  history: History,
  country: LedgerSettings["country"],
  registerOther = false
): LedgerSettings => ({
  wallets: [
    ...OWN.map((a) => ({ address: a, self: true })),
    { address: EXCHANGE, self: false },
    ...(registerOther ? [{ address: UNREGISTERED_OWN, self: true }] : [])
  ],
  country,
  prices: history.prices
})

/** A small fast PRNG (mulberry32) for the benchmark's operations. */
export const mulberry32 = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}

const WEIGHTS: Record<OpKind, number> = {
  buy: 20,
  mint: 3,
  sell: 14,
  burn: 2,
  self: 10,
  selfToOther: 2,
  aiSell: 2,
  collateralPost: 3,
  collateralWithdraw: 3,
  bridgeOut: 2,
  bridgeIn: 2,
  dividend: 0,
  split: 0,
  price: 20
}

const MONTH = 30 * 86_400
const YEAR = 365 * 86_400

/**
 * `count` operations about 100 s apart (1,000,000 span about three years), with a dividend step per token every
 * 30 days (the monthly payers' pace, e.g. SGOV) and a split of a random token once a year.
 */
export const randomOps = (count: number, seed: number): Array<Op> => {
  const rand = mulberry32(seed)
  const kinds = OP_KINDS.flatMap((kind) => Array.from({ length: WEIGHTS[kind] }, () => kind))
  const ops: Array<Op> = []
  let time = 0
  let nextDividend = MONTH
  let nextSplit = YEAR
  const op = (kind: OpKind, token: number, gap: number): Op => ({
    kind,
    wallet: Math.floor(rand() * 3),
    other: Math.floor(rand() * 3),
    token,
    amount: 1 + Math.floor(rand() * 1000),
    gap,
    classified: rand() < 0.5
  })
  while (ops.length < count) {
    const gap = Math.floor(rand() * 200)
    time += gap
    if (time >= nextDividend) {
      nextDividend += MONTH
      for (let token = 0; token < 3; token++) ops.push(op("dividend", token, 0))
    }
    if (time >= nextSplit) {
      nextSplit += YEAR
      ops.push(op("split", Math.floor(rand() * 3), 0))
    }
    ops.push(op(kinds[Math.floor(rand() * kinds.length)]!, Math.floor(rand() * 3), gap))
  }
  return ops.slice(0, count)
}
