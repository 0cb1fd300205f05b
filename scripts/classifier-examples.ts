/**
 * `npm run classifier:examples`: writes packages/workers/assets/classifier/examples.json, the embedded model's
 * labelled examples. Each example is one movement as the model sees it (`MovementFeatures`), built from the public
 * call pattern of a known protocol function: which contract the tokens go to, who sends the transaction, which
 * selector it carries, which Stock-token flows the transaction shows. Sources are listed in the README.md beside
 * the file. Deterministic: a fixed seed, so the file is the same on every run.
 */
import type * as Classification from "@scaledger/domain/classification/index"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { toFunctionSelector } from "viem"

type Features = Classification.MovementFeatures
type Label = Classification.ModelClass

const SEED = 4663
let state = SEED
/** mulberry32 */
const random = (): number => {
  state = (state + 0x6d2b79f5) | 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const chance = (p: number) => random() < p
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
const address = () => "0x" + Array.from({ length: 40 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")
const hash = () => "0x" + Array.from({ length: 64 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")
const randomSelector = () =>
  "0x" + Array.from({ length: 8 }, () => "0123456789abcdef"[Math.floor(random() * 16)]).join("")
const amount = () => `${int(1, 500)}.${String(int(0, 999_999)).padStart(6, "0")}`

const STOCKS = ["AAPL", "TSLA", "NVDA", "MSFT", "AMZN", "GOOGL", "META", "SPY", "COIN", "HOOD"]

interface Protocol {
  readonly source: string
  /** Function signatures from the protocol's published ABI; the selector is computed from them. */
  readonly signatures: ReadonlyArray<string>
  readonly label: Label
  /** Never in training: measures how the model does on a protocol it has not seen. */
  readonly heldOutOnly?: boolean
  readonly make: (ctx: Ctx) => Partial<Features> & Pick<Features, "direction" | "tokenFlows">
}

interface Ctx {
  readonly wallet: string
  readonly counterparty: string
  readonly token: string
  readonly amount: string
  readonly selector: string
}

const other = () => address()
const stockOrNot = (token: string, p: number) => chance(p) ? [pick(STOCKS.filter((s) => s !== token))] : []

/** A swap: the Stock token goes out to a pool or router, another asset comes back (a Stock token only sometimes). */
const swapOut = (via: "pool" | "router" | "solver") => (c: Ctx) => {
  const back = stockOrNot(c.token, 0.5)
  return {
    direction: "out" as const,
    txFrom: via === "solver" ? other() : c.wallet,
    txTo: via === "router" ? c.counterparty : other(),
    tokenFlows: [
      { token: c.token, direction: "out" as const, amount: c.amount },
      ...back.map((token) => ({ token, direction: "in" as const, amount: amount() }))
    ],
    priorIn: chance(0.3) ? int(1, 6) : 0,
    priorOut: chance(0.4) ? int(1, 6) : 0
  }
}
const swapIn = (via: "pool" | "router" | "solver") => (c: Ctx) => {
  const paid = stockOrNot(c.token, 0.5)
  return {
    direction: "in" as const,
    txFrom: via === "solver" ? other() : c.wallet,
    txTo: via === "router" ? c.counterparty : other(),
    tokenFlows: [
      ...paid.map((token) => ({ token, direction: "out" as const, amount: amount() })),
      { token: c.token, direction: "in" as const, amount: c.amount }
    ],
    priorIn: chance(0.4) ? int(1, 6) : 0,
    priorOut: chance(0.3) ? int(1, 6) : 0
  }
}
const lend = (direction: "in" | "out", direct: boolean) => (c: Ctx) => ({
  direction,
  txFrom: c.wallet,
  txTo: direct ? c.counterparty : other(),
  tokenFlows: [{ token: c.token, direction, amount: c.amount }],
  priorIn: direction === "out" ? (chance(0.3) ? int(1, 3) : 0) : (chance(0.3) ? int(1, 3) : 0),
  priorOut: direction === "in" ? int(1, 4) : (chance(0.4) ? int(1, 4) : 0)
})
const bridgeOut = (direct: boolean) => (c: Ctx) => ({
  direction: "out" as const,
  txFrom: c.wallet,
  txTo: direct ? c.counterparty : other(),
  tokenFlows: [{ token: c.token, direction: "out" as const, amount: c.amount }],
  priorIn: chance(0.4) ? int(1, 3) : 0,
  priorOut: chance(0.3) ? int(1, 3) : 0
})
/** Arrivals are executed by a relayer, a sequencer alias or a messaging executor, not by the wallet. */
const bridgeIn = (direct: boolean) => (c: Ctx) => ({
  direction: "in" as const,
  txFrom: other(),
  txTo: direct ? c.counterparty : other(),
  tokenFlows: [{ token: c.token, direction: "in" as const, amount: c.amount }],
  priorIn: chance(0.3) ? int(1, 3) : 0,
  priorOut: chance(0.5) ? int(1, 3) : 0
})
/** A person's smart-contract wallet (Safe, ERC-4337 account) paying the wallet. */
const walletIn = (direct: boolean) => (c: Ctx) => ({
  direction: "in" as const,
  txFrom: other(),
  txTo: direct ? c.counterparty : other(),
  tokenFlows: [{ token: c.token, direction: "in" as const, amount: c.amount }],
  priorIn: chance(0.4) ? int(1, 8) : 0,
  priorOut: chance(0.3) ? int(1, 8) : 0
})
/** The wallet pays a smart-contract wallet: a plain ERC-20 transfer called on the token contract. */
const walletOut = (c: Ctx) => ({
  direction: "out" as const,
  txFrom: chance(0.85) ? c.wallet : other(),
  txTo: other(),
  tokenFlows: [{ token: c.token, direction: "out" as const, amount: c.amount }],
  priorIn: chance(0.3) ? int(1, 8) : 0,
  priorOut: chance(0.5) ? int(1, 8) : 0
})

const SWAP: Label = { type: "swap", relationship: "contract" }
const POST: Label = { type: "collateral_post", relationship: "contract" }
const WITHDRAW: Label = { type: "collateral_withdraw", relationship: "contract" }
const BRIDGE_OUT: Label = { type: "bridge.out", relationship: "self" }
const BRIDGE_IN: Label = { type: "bridge.in", relationship: "self" }
const PAY_OUT: Label = { type: "transfer.out", relationship: "counterparty" }
const PAY_IN: Label = { type: "transfer.in", relationship: "counterparty" }

const UNI_V2 = [
  "swapExactTokensForTokens(uint256,uint256,address[],address,uint256)",
  "swapTokensForExactTokens(uint256,uint256,address[],address,uint256)",
  "swapExactTokensForTokensSupportingFeeOnTransferTokens(uint256,uint256,address[],address,uint256)",
  "swapExactTokensForETH(uint256,uint256,address[],address,uint256)"
]
const UNI_V3 = [
  "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))",
  "exactInput((bytes,address,uint256,uint256,uint256))",
  "exactInputSingle((address,address,uint24,address,uint256,uint256,uint160))",
  "multicall(uint256,bytes[])"
]

export const PROTOCOLS: ReadonlyArray<Protocol> = [
  { source: "Uniswap V2 Router02 (pair)", signatures: UNI_V2, label: SWAP, make: swapOut("pool") },
  { source: "Uniswap V2 Router02 (pair)", signatures: UNI_V2, label: SWAP, make: swapIn("pool") },
  { source: "Uniswap V3 SwapRouter / SwapRouter02 (pool)", signatures: UNI_V3, label: SWAP, make: swapOut("pool") },
  { source: "Uniswap V3 SwapRouter / SwapRouter02 (pool)", signatures: UNI_V3, label: SWAP, make: swapIn("pool") },
  {
    source: "Uniswap Universal Router",
    signatures: ["execute(bytes,bytes[],uint256)"],
    label: SWAP,
    make: swapOut("pool")
  },
  {
    source: "1inch AggregationRouterV5",
    signatures: ["swap(address,(address,address,address,address,uint256,uint256,uint256),bytes,bytes)"],
    label: SWAP,
    make: swapIn("router")
  },
  {
    source: "0x Exchange Proxy",
    signatures: ["transformERC20(address,address,uint256,uint256,(uint32,bytes)[])"],
    label: SWAP,
    make: swapIn("router")
  },
  {
    source: "CoW Protocol GPv2Settlement (solver-sent)",
    signatures: [
      "settle(address[],uint256[],(uint256,uint256,address,uint256,uint256,uint32,bytes32,uint256,uint256,uint256,bytes)[],(address,uint256,bytes)[][3])"
    ],
    label: SWAP,
    make: (c) => chance(0.5) ? swapOut("solver")(c) : swapIn("solver")(c)
  },
  {
    source: "Curve StableSwap pool (held out)",
    signatures: ["exchange(int128,int128,uint256,uint256)"],
    label: SWAP,
    heldOutOnly: true,
    make: (c) => chance(0.5) ? swapOut("router")(c) : swapIn("router")(c)
  },
  {
    source: "Balancer V2 Vault (held out)",
    signatures: ["swap((bytes32,uint8,address,address,uint256,bytes),(address,bool,address,bool),uint256,uint256)"],
    label: SWAP,
    heldOutOnly: true,
    make: (c) => chance(0.5) ? swapOut("router")(c) : swapIn("router")(c)
  },
  {
    source: "Aave V3 Pool (aToken holds the asset)",
    signatures: ["supply(address,uint256,address,uint16)", "deposit(address,uint256,address,uint16)"],
    label: POST,
    make: lend("out", false)
  },
  {
    source: "Aave V3 Pool (aToken holds the asset)",
    signatures: ["withdraw(address,uint256,address)"],
    label: WITHDRAW,
    make: lend("in", false)
  },
  {
    source: "Compound III Comet",
    signatures: ["supply(address,uint256)", "supplyTo(address,address,uint256)"],
    label: POST,
    make: lend("out", true)
  },
  {
    source: "Compound III Comet",
    signatures: ["withdraw(address,uint256)", "withdrawTo(address,address,uint256)"],
    label: WITHDRAW,
    make: lend("in", true)
  },
  {
    source: "Morpho Blue",
    signatures: ["supplyCollateral((address,address,address,address,uint256),uint256,address,bytes)"],
    label: POST,
    make: lend("out", true)
  },
  {
    source: "Morpho Blue",
    signatures: ["withdrawCollateral((address,address,address,address,uint256),uint256,address,address)"],
    label: WITHDRAW,
    make: lend("in", true)
  },
  {
    source: "ERC-4626 vault",
    signatures: ["deposit(uint256,address)", "mint(uint256,address)"],
    label: POST,
    make: lend("out", true)
  },
  {
    source: "ERC-4626 vault",
    signatures: ["withdraw(uint256,address,address)", "redeem(uint256,address,address)"],
    label: WITHDRAW,
    make: lend("in", true)
  },
  {
    source: "Compound V2 cToken (held out)",
    signatures: ["mint(uint256)"],
    label: POST,
    heldOutOnly: true,
    make: lend("out", true)
  },
  {
    source: "Compound V2 cToken (held out)",
    signatures: ["redeemUnderlying(uint256)", "redeem(uint256)"],
    label: WITHDRAW,
    heldOutOnly: true,
    make: lend("in", true)
  },
  {
    source: "Arbitrum token bridge (L2GatewayRouter / L1GatewayRouter)",
    signatures: [
      "outboundTransfer(address,address,uint256,bytes)",
      "outboundTransfer(address,address,uint256,uint256,uint256,bytes)",
      "outboundTransferCustomRefund(address,address,address,uint256,uint256,uint256,bytes)"
    ],
    label: BRIDGE_OUT,
    make: bridgeOut(false)
  },
  {
    source: "Arbitrum token bridge (gateway, retryable execution)",
    signatures: ["finalizeInboundTransfer(address,address,address,uint256,bytes)"],
    label: BRIDGE_IN,
    make: bridgeIn(true)
  },
  {
    source: "OP Stack L2StandardBridge",
    signatures: [
      "withdraw(address,uint256,uint32,bytes)",
      "withdrawTo(address,address,uint256,uint32,bytes)",
      "bridgeERC20To(address,address,address,uint256,uint32,bytes)"
    ],
    label: BRIDGE_OUT,
    make: bridgeOut(true)
  },
  {
    source: "OP Stack StandardBridge",
    signatures: [
      "finalizeBridgeERC20(address,address,address,address,uint256,bytes)",
      "finalizeDeposit(address,address,address,address,uint256,bytes)"
    ],
    label: BRIDGE_IN,
    make: bridgeIn(false)
  },
  {
    source: "LayerZero V2 OFT adapter",
    signatures: ["send((uint32,bytes32,uint256,uint256,bytes,bytes,bytes),(uint256,uint256),address)"],
    label: BRIDGE_OUT,
    make: bridgeOut(true)
  },
  {
    source: "LayerZero V2 EndpointV2 (executor delivers)",
    signatures: ["lzReceive((uint32,bytes32,uint64),address,bytes32,bytes,bytes)"],
    label: BRIDGE_IN,
    make: bridgeIn(false)
  },
  {
    source: "Across SpokePool",
    signatures: [
      "depositV3(address,address,address,address,uint256,uint256,uint256,address,uint32,uint32,uint32,bytes)"
    ],
    label: BRIDGE_OUT,
    make: bridgeOut(true)
  },
  {
    source: "Wormhole Token Bridge (held out)",
    signatures: ["transferTokens(address,uint256,uint16,bytes32,uint256,uint32)"],
    label: BRIDGE_OUT,
    heldOutOnly: true,
    make: bridgeOut(true)
  },
  {
    source: "Wormhole Token Bridge (held out)",
    signatures: ["completeTransfer(bytes)"],
    label: BRIDGE_IN,
    heldOutOnly: true,
    make: bridgeIn(true)
  },
  {
    source: "Safe (smart-account wallet) paying out",
    signatures: [
      "execTransaction(address,uint256,bytes,uint8,uint256,uint256,uint256,address,address,bytes)"
    ],
    label: PAY_IN,
    make: walletIn(true)
  },
  {
    source: "ERC-4337 EntryPoint v0.6 (smart account paying out)",
    signatures: [
      "handleOps((address,uint256,bytes,bytes,uint256,uint256,uint256,uint256,uint256,bytes,bytes)[],address)"
    ],
    label: PAY_IN,
    make: walletIn(false)
  },
  {
    source: "ERC-20 transfer to a smart-account wallet",
    signatures: ["transfer(address,uint256)"],
    label: PAY_OUT,
    make: walletOut
  },
  {
    source: "Sablier V2 Lockup stream withdrawal (held out)",
    signatures: ["withdraw(uint256,address,uint128)"],
    label: PAY_IN,
    heldOutOnly: true,
    make: (c) => ({ ...walletIn(true)(c), txFrom: c.wallet })
  }
]

const PER_PROTOCOL = 60
/** Share of the seen protocols' examples kept out of training. */
const HELD_OUT_SHARE = 0.2

const examples: Array<{
  readonly id: string
  readonly source: string
  readonly signature: string
  readonly split: "train" | "heldout"
  readonly label: Label
  readonly features: Features
}> = []

for (const protocol of PROTOCOLS) {
  for (let i = 0; i < PER_PROTOCOL; i++) {
    const signature = pick(protocol.signatures)
    const selector = toFunctionSelector(signature)
    const ctx: Ctx = { wallet: address(), counterparty: address(), token: pick(STOCKS), amount: amount(), selector }
    const made = protocol.make(ctx)
    const flow = made.tokenFlows.find((t) => t.direction === made.direction)!
    // What an indexer often lacks: the transaction's input or its sender and target.
    const knowsTx = chance(0.9)
    // Aggregators, bots and unverified contracts call the same pools through selectors of their own.
    const proprietary = chance(0.15)
    const features: Features = {
      account: "acct_examples",
      chainId: 4663,
      txHash: hash(),
      direction: made.direction,
      token: flow.token,
      amount: flow.amount,
      wallet: ctx.wallet,
      counterparty: ctx.counterparty,
      counterpartyIsContract: true,
      txFrom: knowsTx ? made.txFrom ?? null : null,
      txTo: knowsTx ? made.txTo ?? null : null,
      methodSelector: knowsTx && chance(0.92) ? (proprietary ? randomSelector() : selector) : null,
      tokenFlows: made.tokenFlows,
      priorIn: made.priorIn ?? 0,
      priorOut: made.priorOut ?? 0,
      confirmedRelationship: null
    }
    examples.push({
      id: `${examples.length + 1}`,
      source: protocol.source,
      signature: proprietary ? "unknown" : signature,
      split: protocol.heldOutOnly === true || chance(HELD_OUT_SHARE) ? "heldout" : "train",
      label: protocol.label,
      features
    })
  }
}

const file = Path.resolve(import.meta.dirname, "..", "packages", "workers", "assets", "classifier", "examples.json")
Fs.mkdirSync(Path.dirname(file), { recursive: true })
const header = {
  description: "Labelled movements for the embedded classifier; see README.md in this folder for the sources.",
  generator: "scripts/classifier-examples.ts",
  seed: SEED,
  protocols: PROTOCOLS.map((p) => ({
    source: p.source,
    label: p.label,
    heldOutOnly: p.heldOutOnly === true,
    functions: p.signatures.map((signature) => ({ signature, selector: toFunctionSelector(signature) }))
  }))
}
Fs.writeFileSync(
  file,
  JSON.stringify({ ...header, examples: [] }, null, 2).replace(
    `"examples": []`,
    `"examples": [\n${examples.map((e) => "    " + JSON.stringify(e)).join(",\n")}\n  ]`
  ) + "\n"
)
console.log(`${examples.length} examples written to ${Path.relative(process.cwd(), file)}`)
