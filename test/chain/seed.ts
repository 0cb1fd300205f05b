/**
 * Seeds a test node with Robinhood-Chain-like history, in chronological order and with the real timestamps:
 * `Stock` tokens AAPL, CRWD, SGOV, MU, TSLA, F (+ one unlisted token), AggregatorV3 feeds for all but F, mints,
 * transfers (including between two addresses of one person, and to and from an exchange), a burn, the real
 * multiplier announcements of `test/fixtures/multiplier-events-4663.json` (staged, so each change lands silently at
 * its effectiveAt; CRWD's 4:1 split announced twice), CRWD's trading and oracle pauses around the split, and price
 * rounds around the changes.
 *
 * It returns a token list in the format of `packages/workers/assets/robinhood/tokens-4663.json` (plus
 * `feedAddress`) and a manifest of everything it did, for tests to assert against.
 *
 * CLI: `npx tsx test/chain/seed.ts [--port 8545] [--chain-id 31337] [--out <dir>] [--exit]` starts a node, seeds
 * it, writes `<dir>/tokens.json` and `<dir>/seed-manifest.json` when `--out` is given, and keeps serving (the
 * offline demo) unless `--exit`.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { encodeDeployData, encodeFunctionData, getAddress, type Hex, parseUnits } from "viem"
import { loadArtifact } from "./artifacts.js"
import { startTestNode, type TestNode, type TestNodeOptions } from "./node.js"

/** Before the first fixture event (2026-07-02); a seeded node must start no later. */
export const SEED_GENESIS_TIMESTAMP = Date.UTC(2026, 5, 30) / 1000

const ONE = 10n ** 18n
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
const MULTIPLIER_TOPIC = "0x2205df4534432b2f60654a3fdb48737ffdaf3e9edb1a498bd985bc026b15b055"

export const SEED_SYMBOLS = ["AAPL", "CRWD", "SGOV", "MU", "TSLA", "F"] as const
export type SeedSymbol = (typeof SEED_SYMBOLS)[number]
/** F has no Chainlink feed on Robinhood Chain either. */
export const SYMBOLS_WITH_FEED: ReadonlyArray<SeedSymbol> = ["AAPL", "CRWD", "SGOV", "MU", "TSLA"]

export interface TokenListEntry {
  readonly symbol: string
  readonly name: string
  readonly address: string
  readonly isin: string
  readonly decimals: number
  readonly currentMultiplier: string
  readonly status: string
  readonly feedAddress?: string
}

export interface TokenList {
  readonly source: string
  readonly chainId: number
  readonly fetchedAt: string
  readonly note: string
  readonly tokens: ReadonlyArray<TokenListEntry>
}

export interface SeedHolder {
  readonly label: string
  /** Addresses of the same person share it. */
  readonly person: string
  readonly address: string
}

export type SeedTransferKind = "mint" | "burn" | "transfer" | "self" | "to_exchange" | "from_exchange"

export interface SeedTransfer {
  readonly symbol: string
  readonly token: string
  readonly kind: SeedTransferKind
  readonly from: string
  readonly to: string
  readonly value: bigint
  readonly block: number
  readonly timestamp: number
  readonly txHash: string
  /** Of the `Transfer` log (the `TransferWithScaledUI` log follows it). */
  readonly logIndex: number
}

export interface SeedMultiplierChange {
  readonly symbol: string
  readonly token: string
  readonly oldMultiplier: bigint
  readonly newMultiplier: bigint
  readonly announcedAt: number
  readonly announcementBlock: number
  readonly txHash: string
  readonly logIndex: number
  readonly effectiveAt: number
  /** The same change announced again (CRWD). */
  readonly reannouncement: boolean
  /** The last block with timestamp < effectiveAt, and the first with timestamp >= effectiveAt. */
  readonly lastBlockBefore: number
  readonly firstBlockAtOrAfter: number
}

export interface SeedPause {
  readonly symbol: string
  readonly token: string
  readonly kind: "Paused" | "Unpaused" | "OraclePaused" | "OracleUnpaused"
  readonly block: number
  readonly timestamp: number
  readonly txHash: string
  readonly logIndex: number
}

export interface SeedPrice {
  readonly symbol: string
  readonly feed: string
  readonly roundId: bigint
  /** 8 decimals; includes the multiplier, as Robinhood's feeds do. */
  readonly answer: bigint
  readonly updatedAt: number
  readonly block: number
}

export interface SeedManifest {
  readonly chainId: number
  readonly issuer: string
  readonly holders: ReadonlyArray<SeedHolder>
  readonly tokens: ReadonlyArray<{
    readonly symbol: string
    readonly address: string
    readonly feedAddress?: string
    readonly deployBlock: number
  }>
  /** A `Stock` token missing from the token list (found by `supportsInterface`). */
  readonly unlistedToken: { readonly symbol: string; readonly address: string; readonly deployBlock: number }
  readonly transfers: ReadonlyArray<SeedTransfer>
  readonly multiplierChanges: ReadonlyArray<SeedMultiplierChange>
  readonly pauses: ReadonlyArray<SeedPause>
  readonly prices: ReadonlyArray<SeedPrice>
  /** Raw balances after seeding, by symbol then address (non-zero only). */
  readonly finalBalances: Readonly<Record<string, Readonly<Record<string, bigint>>>>
  /** `uiMultiplier()` at the head after seeding, by symbol. */
  readonly finalMultipliers: Readonly<Record<string, bigint>>
  readonly headBlock: number
  readonly headTimestamp: number
}

export interface SeedResult {
  readonly tokenList: TokenList
  readonly manifest: SeedManifest
}

interface FixtureEvent {
  readonly symbol: string
  readonly announcedAt: string
  readonly effectiveAt: string
  readonly oldMultiplier: string
  readonly newMultiplier: string
}

interface RpcReceipt {
  readonly status: Hex
  readonly blockNumber: Hex
  readonly transactionHash: Hex
  readonly contractAddress: Hex | null
  readonly logs: ReadonlyArray<{ readonly topics: ReadonlyArray<Hex>; readonly logIndex: Hex }>
}

const at = (iso: string): number => Date.parse(iso) / 1000
const units = (amount: string): bigint => parseUnits(amount, 18)
const price = (usd: string): bigint => parseUnits(usd, 8)
const toHex = (n: number | bigint): Hex => `0x${n.toString(16)}`

export const formatMultiplier = (raw: bigint): string => `${raw / ONE}.${(raw % ONE).toString().padStart(18, "0")}`

const readJson = <T>(relative: string): T => JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8")) as T

type Label = "alice" | "alice-2" | "bob" | "carol" | "exchange"
type PauseAction = "pause" | "unpause" | "pauseOracle" | "unpauseOracle"

type Step =
  | { readonly at: number; readonly kind: "deploy-token"; readonly symbol: string }
  | { readonly at: number; readonly kind: "deploy-feed"; readonly symbol: SeedSymbol }
  | {
    readonly at: number
    readonly kind: "mint"
    readonly symbol: SeedSymbol
    readonly to: Label
    readonly amount: string
  }
  | {
    readonly at: number
    readonly kind: "burn"
    readonly symbol: SeedSymbol
    readonly from: Label
    readonly amount: string
  }
  | {
    readonly at: number
    readonly kind: "transfer"
    readonly symbol: SeedSymbol
    readonly from: Label
    readonly to: Label
    readonly amount: string
  }
  | { readonly at: number; readonly kind: "announce"; readonly event: FixtureEvent }
  | { readonly at: number; readonly kind: PauseAction; readonly symbol: SeedSymbol }
  | { readonly at: number; readonly kind: "price"; readonly symbol: SeedSymbol; readonly usd: string }

/** The unlisted token's symbol. */
export const UNLISTED_SYMBOL = "XSTK"

const PAUSE_EVENTS: Record<PauseAction, SeedPause["kind"]> = {
  pause: "Paused",
  unpause: "Unpaused",
  pauseOracle: "OraclePaused",
  unpauseOracle: "OracleUnpaused"
}

const PERSON: Record<Label, string> = {
  alice: "alice",
  "alice-2": "alice",
  bob: "bob",
  carol: "carol",
  exchange: "exchange"
}

export interface SeedOptions {
  /**
   * A price round of each fed token a minute before the first mints (the demo: every lot then has a market-value
   * basis). Tests keep the default, where the first mints precede the first rounds and their basis is unknown.
   */
  readonly openingQuotes?: boolean | undefined
}

/** Everything the seed does, before sorting by time. Amounts are in token units (18 decimals), prices in USD. */
const plan = (events: ReadonlyArray<FixtureEvent>, options: SeedOptions): ReadonlyArray<Step> => {
  const steps: Array<Step> = []
  const deployAt = at("2026-07-01T12:00:00Z")
  ;[...SEED_SYMBOLS, UNLISTED_SYMBOL].forEach((symbol, i) =>
    steps.push({ at: deployAt + i, kind: "deploy-token", symbol })
  )
  SYMBOLS_WITH_FEED.forEach((symbol, i) => steps.push({ at: deployAt + 60 + i, kind: "deploy-feed", symbol }))

  const mint = (iso: string, symbol: SeedSymbol, to: Label, amount: string) =>
    steps.push({ at: at(iso), kind: "mint", symbol, to, amount })
  const transfer = (iso: string, symbol: SeedSymbol, from: Label, to: Label, amount: string) =>
    steps.push({ at: at(iso), kind: "transfer", symbol, from, to, amount })
  const quote = (iso: string, symbol: SeedSymbol, usd: string) =>
    steps.push({ at: at(iso), kind: "price", symbol, usd })
  const issuerAction = (iso: string, symbol: SeedSymbol, kind: PauseAction) => steps.push({ at: at(iso), kind, symbol })

  if (options.openingQuotes === true) {
    quote("2026-07-01T13:59:00Z", "AAPL", "212.10")
    quote("2026-07-01T13:59:01Z", "CRWD", "479.80")
    quote("2026-07-01T13:59:02Z", "SGOV", "100.45")
    quote("2026-07-01T13:59:03Z", "MU", "121.05")
    quote("2026-07-01T13:59:04Z", "TSLA", "300.90")
  }
  mint("2026-07-01T14:00:00Z", "CRWD", "alice", "10")
  mint("2026-07-01T14:00:01Z", "CRWD", "bob", "5")
  mint("2026-07-01T14:00:02Z", "AAPL", "alice", "20")
  mint("2026-07-01T14:00:03Z", "AAPL", "carol", "7.5")
  mint("2026-07-01T14:00:04Z", "SGOV", "bob", "100")
  mint("2026-07-01T14:00:05Z", "SGOV", "carol", "50")
  mint("2026-07-01T14:00:06Z", "MU", "alice", "3")
  mint("2026-07-01T14:00:07Z", "TSLA", "bob", "2")
  mint("2026-07-01T14:00:08Z", "TSLA", "carol", "4")
  mint("2026-07-01T14:00:09Z", "F", "alice", "1000")
  mint("2026-07-01T14:00:10Z", "F", "bob", "250")
  mint("2026-07-01T14:00:11Z", "CRWD", "exchange", "40")

  quote("2026-07-01T14:30:00Z", "AAPL", "212.44")
  quote("2026-07-01T14:30:01Z", "CRWD", "480.12")
  quote("2026-07-01T14:30:02Z", "SGOV", "100.46")
  quote("2026-07-01T14:30:03Z", "MU", "121.30")
  quote("2026-07-01T14:30:04Z", "TSLA", "301.75")

  transfer("2026-07-01T20:00:00Z", "CRWD", "alice", "bob", "1")
  // CRWD's 4:1 split: trading paused from 02:00 CEST on the effective date to the US open.
  issuerAction("2026-07-02T00:00:00Z", "CRWD", "pause")
  quote("2026-07-02T13:25:00Z", "CRWD", "482.40")
  issuerAction("2026-07-02T13:29:00Z", "CRWD", "pauseOracle")
  issuerAction("2026-07-02T13:31:00Z", "CRWD", "unpause")
  issuerAction("2026-07-02T13:35:00Z", "CRWD", "unpauseOracle")
  quote("2026-07-02T13:36:00Z", "CRWD", "481.50")
  transfer("2026-07-02T14:00:00Z", "CRWD", "bob", "exchange", "2")
  transfer("2026-07-03T15:00:00Z", "CRWD", "exchange", "carol", "1.25")

  quote("2026-07-08T20:09:00Z", "SGOV", "100.58")
  quote("2026-07-08T20:16:00Z", "SGOV", "100.49")
  transfer("2026-07-10T16:00:00Z", "AAPL", "alice", "alice-2", "5")
  transfer("2026-07-15T16:00:00Z", "SGOV", "bob", "bob", "1")

  quote("2026-07-24T15:05:00Z", "MU", "118.42")
  transfer("2026-07-24T15:05:30Z", "MU", "alice", "carol", "1")
  quote("2026-07-24T15:12:00Z", "MU", "118.40")

  steps.push({ at: at("2026-08-01T15:00:00Z"), kind: "mint", symbol: "AAPL", to: "carol", amount: "2.5" })
  transfer("2026-08-01T15:30:00Z", "TSLA", "bob", "carol", "0.5")
  quote("2026-08-01T16:00:00Z", "TSLA", "309.10")

  quote("2026-08-07T15:05:00Z", "SGOV", "100.61")
  quote("2026-08-07T15:12:00Z", "SGOV", "100.44")
  steps.push({ at: at("2026-08-10T15:00:00Z"), kind: "burn", symbol: "SGOV", from: "bob", amount: "10" })

  quote("2026-08-14T15:08:00Z", "AAPL", "229.35")
  quote("2026-08-14T15:14:00Z", "AAPL", "229.41")
  transfer("2026-08-14T16:00:00Z", "AAPL", "carol", "exchange", "2.5")
  transfer("2026-08-20T16:00:00Z", "AAPL", "exchange", "bob", "1")

  quote("2026-08-31T23:55:00Z", "SGOV", "100.66")
  quote("2026-09-01T00:02:00Z", "SGOV", "100.45")
  transfer("2026-09-01T14:00:00Z", "AAPL", "alice-2", "alice", "1")
  transfer("2026-09-02T16:00:00Z", "F", "alice", "exchange", "100")
  quote("2026-09-02T20:00:00Z", "TSLA", "315.02")

  for (const event of events) {
    if ((SEED_SYMBOLS as ReadonlyArray<string>).includes(event.symbol)) {
      steps.push({ at: at(event.announcedAt), kind: "announce", event })
    }
  }
  return steps
}

/** Seeds `node`, which must have started at or before `SEED_GENESIS_TIMESTAMP` and have mined nothing yet. */
export const seedChain = async (node: TestNode, options: SeedOptions = {}): Promise<SeedResult> => {
  const genesis = await node.block("latest")
  if (genesis.timestamp >= at("2026-07-01T12:00:00Z")) {
    throw new Error(
      `seedChain needs a node started with genesisTimestamp <= ${SEED_GENESIS_TIMESTAMP} (head is at ${genesis.timestamp})`
    )
  }
  const stockArtifact = loadArtifact("Stock")
  const feedArtifact = loadArtifact("PriceFeed")
  const fixture = readJson<{ events: ReadonlyArray<FixtureEvent> }>("../fixtures/multiplier-events-4663.json")
  const realList = readJson<{ tokens: ReadonlyArray<TokenListEntry> }>(
    "../../packages/workers/assets/robinhood/tokens-4663.json"
  )

  const issuer = node.accounts[0]!.address
  const labels: ReadonlyArray<Label> = ["alice", "alice-2", "bob", "carol", "exchange"]
  const holders: ReadonlyArray<SeedHolder> = labels.map((label, i) => ({
    label,
    person: PERSON[label],
    address: node.accounts[i + 1]!.address
  }))
  const addressOf = (label: Label): Hex => holders.find((h) => h.label === label)!.address as Hex

  const blocks: Array<{ number: number; timestamp: number }> = [{
    number: genesis.number,
    timestamp: genesis.timestamp
  }]
  const tokens = new Map<string, { address: Hex; deployBlock: number }>()
  const feeds = new Map<string, Hex>()
  const transfers: Array<SeedTransfer> = []
  const announcements: Array<Omit<SeedMultiplierChange, "lastBlockBefore" | "firstBlockAtOrAfter">> = []
  const pauses: Array<SeedPause> = []
  const prices: Array<SeedPrice> = []
  const balances = new Map<string, Map<string, bigint>>()

  const send = async (from: Hex, to: Hex | undefined, data: Hex, timestamp: number) => {
    await node.setNextBlockTimestamp(timestamp)
    const hash = await node.request<Hex>("eth_sendTransaction", [
      { from, ...(to === undefined ? {} : { to }), data, gas: toHex(3_000_000) }
    ])
    const receipt = await node.request<RpcReceipt>("eth_getTransactionReceipt", [hash])
    if (receipt.status !== "0x1") throw new Error(`seed transaction ${hash} reverted`)
    const block = Number(receipt.blockNumber)
    blocks.push({ number: block, timestamp })
    return { receipt, block, txHash: hash.toLowerCase() }
  }

  const logIndexOf = (receipt: RpcReceipt, topic: string): number => {
    const log = receipt.logs.find((l) => l.topics[0] === topic)
    if (log === undefined) throw new Error(`no log ${topic} in ${receipt.transactionHash}`)
    return Number(log.logIndex)
  }

  const credit = (symbol: string, address: string, delta: bigint) => {
    const book = balances.get(symbol) ?? new Map<string, bigint>()
    balances.set(symbol, book)
    book.set(address, (book.get(address) ?? 0n) + delta)
  }

  const token = (symbol: string): Hex => tokens.get(symbol)!.address
  const callToken = (symbol: string, data: Hex, from: Hex, timestamp: number) =>
    send(from, token(symbol), data, timestamp)

  const recordTransfer = (
    step: { symbol: SeedSymbol; at: number },
    kind: SeedTransferKind,
    from: string,
    to: string,
    value: bigint,
    result: Awaited<ReturnType<typeof send>>
  ) => {
    transfers.push({
      symbol: step.symbol,
      token: token(step.symbol),
      kind,
      from,
      to,
      value,
      block: result.block,
      timestamp: step.at,
      txHash: result.txHash,
      logIndex: logIndexOf(result.receipt, TRANSFER_TOPIC)
    })
  }

  const steps = [...plan(fixture.events, options)].sort((a, b) => a.at - b.at)
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]!.at <= steps[i - 1]!.at) throw new Error(`two seed steps at ${steps[i]!.at}`)
  }

  const zero = "0x0000000000000000000000000000000000000000"
  for (const step of steps) {
    switch (step.kind) {
      case "deploy-token": {
        const name = realList.tokens.find((t) => t.symbol === step.symbol)?.name ?? "Unlisted Stock • Test Token"
        const data = encodeDeployData({
          abi: stockArtifact.abi,
          bytecode: stockArtifact.bytecode,
          args: [name, step.symbol, issuer]
        })
        const { receipt, block } = await send(issuer, undefined, data, step.at)
        tokens.set(step.symbol, { address: getAddress(receipt.contractAddress!), deployBlock: block })
        break
      }
      case "deploy-feed": {
        const data = encodeDeployData({
          abi: feedArtifact.abi,
          bytecode: feedArtifact.bytecode,
          args: [`Robinhood ${step.symbol} / USD`, 1, issuer]
        })
        const { receipt } = await send(issuer, undefined, data, step.at)
        feeds.set(step.symbol, getAddress(receipt.contractAddress!))
        break
      }
      case "mint": {
        const value = units(step.amount)
        const to = addressOf(step.to)
        const data = encodeFunctionData({ abi: stockArtifact.abi, functionName: "mint", args: [to, value] })
        recordTransfer(step, "mint", zero, to, value, await callToken(step.symbol, data, issuer, step.at))
        credit(step.symbol, to, value)
        break
      }
      case "burn": {
        const value = units(step.amount)
        const from = addressOf(step.from)
        const data = encodeFunctionData({ abi: stockArtifact.abi, functionName: "burn", args: [from, value] })
        recordTransfer(step, "burn", from, zero, value, await callToken(step.symbol, data, issuer, step.at))
        credit(step.symbol, from, -value)
        break
      }
      case "transfer": {
        const value = units(step.amount)
        const from = addressOf(step.from)
        const to = addressOf(step.to)
        const data = encodeFunctionData({ abi: stockArtifact.abi, functionName: "transfer", args: [to, value] })
        const kind: SeedTransferKind = step.to === "exchange"
          ? "to_exchange"
          : step.from === "exchange"
          ? "from_exchange"
          : PERSON[step.from] === PERSON[step.to]
          ? "self"
          : "transfer"
        recordTransfer(step, kind, from, to, value, await callToken(step.symbol, data, from, step.at))
        credit(step.symbol, from, -value)
        credit(step.symbol, to, value)
        break
      }
      case "announce": {
        const e = step.event
        const oldMultiplier = BigInt(e.oldMultiplier)
        const newMultiplier = BigInt(e.newMultiplier)
        const effectiveAt = at(e.effectiveAt)
        const data = encodeFunctionData({
          abi: stockArtifact.abi,
          functionName: "updateMultiplier",
          args: [newMultiplier, BigInt(effectiveAt)]
        })
        const result = await callToken(e.symbol, data, issuer, step.at)
        const reannouncement = announcements.some((a) => a.symbol === e.symbol && a.effectiveAt === effectiveAt)
        announcements.push({
          symbol: e.symbol,
          token: token(e.symbol),
          oldMultiplier,
          newMultiplier,
          announcedAt: step.at,
          announcementBlock: result.block,
          txHash: result.txHash,
          logIndex: logIndexOf(result.receipt, MULTIPLIER_TOPIC),
          effectiveAt,
          reannouncement
        })
        break
      }
      case "pause":
      case "unpause":
      case "pauseOracle":
      case "unpauseOracle": {
        const data = encodeFunctionData({ abi: stockArtifact.abi, functionName: step.kind })
        const result = await callToken(step.symbol, data, issuer, step.at)
        pauses.push({
          symbol: step.symbol,
          token: token(step.symbol),
          kind: PAUSE_EVENTS[step.kind],
          block: result.block,
          timestamp: step.at,
          txHash: result.txHash,
          logIndex: Number(result.receipt.logs[0]!.logIndex)
        })
        break
      }
      case "price": {
        const feed = feeds.get(step.symbol)!
        const answer = price(step.usd)
        const data = encodeFunctionData({ abi: feedArtifact.abi, functionName: "postRound", args: [answer, 0n] })
        const result = await send(issuer, feed, data, step.at)
        const round = prices.filter((p) => p.symbol === step.symbol).length + 1
        prices.push({
          symbol: step.symbol,
          feed,
          roundId: (1n << 64n) | BigInt(round),
          answer,
          updatedAt: step.at,
          block: result.block
        })
        break
      }
    }
  }

  const last = steps.at(-1)!
  const endAt = Math.max(last.at, at("2026-09-03T00:00:00Z")) + 1
  await node.request("evm_mine", [endAt])
  const head = await node.block("latest")
  blocks.push({ number: head.number, timestamp: head.timestamp })

  const multiplierChanges: Array<SeedMultiplierChange> = announcements.map((a) => {
    const before = blocks.filter((b) => b.timestamp < a.effectiveAt).at(-1)!
    const after = blocks.find((b) => b.timestamp >= a.effectiveAt)!
    return { ...a, lastBlockBefore: before.number, firstBlockAtOrAfter: after.number }
  })

  for (const change of announcements) {
    const fixtureEvent = fixture.events.find((e) =>
      e.symbol === change.symbol && at(e.announcedAt) === change.announcedAt
    )!
    if (BigInt(fixtureEvent.oldMultiplier) !== change.oldMultiplier) {
      throw new Error(`seed diverged from the fixture at ${change.symbol} ${fixtureEvent.announcedAt}`)
    }
  }

  const finalMultipliers: Record<string, bigint> = {}
  const finalBalances: Record<string, Record<string, bigint>> = {}
  for (const symbol of SEED_SYMBOLS) {
    const address = token(symbol)
    const read = async (data: Hex) => BigInt(await node.request<Hex>("eth_call", [{ to: address, data }, "latest"]))
    finalMultipliers[symbol] = await read(encodeFunctionData({ abi: stockArtifact.abi, functionName: "uiMultiplier" }))
    const book: Record<string, bigint> = {}
    for (const [holder, expected] of balances.get(symbol) ?? []) {
      const actual = await read(
        encodeFunctionData({ abi: stockArtifact.abi, functionName: "balanceOf", args: [holder as Hex] })
      )
      if (actual !== expected) throw new Error(`${symbol} balance of ${holder}: chain ${actual}, seed ${expected}`)
      if (expected !== 0n) book[holder] = expected
    }
    finalBalances[symbol] = book
  }

  const tokenList: TokenList = {
    source: "test/chain/seed.ts (local test chain)",
    chainId: node.chainId,
    fetchedAt: new Date(head.timestamp * 1000).toISOString(),
    note: "Seeded test tokens with the real symbols, names and ISINs; addresses are the local deployments.",
    tokens: SEED_SYMBOLS.map((symbol) => {
      const real = realList.tokens.find((t) => t.symbol === symbol)!
      const feed = feeds.get(symbol)
      return {
        symbol,
        name: real.name,
        address: token(symbol),
        isin: real.isin,
        decimals: 18,
        currentMultiplier: formatMultiplier(finalMultipliers[symbol]!),
        status: "ASSET_STATUS_ACTIVE",
        ...(feed === undefined ? {} : { feedAddress: feed })
      }
    })
  }

  const unlisted = tokens.get(UNLISTED_SYMBOL)!
  const manifest: SeedManifest = {
    chainId: node.chainId,
    issuer,
    holders,
    tokens: SEED_SYMBOLS.map((symbol) => {
      const feed = feeds.get(symbol)
      return {
        symbol,
        address: token(symbol),
        deployBlock: tokens.get(symbol)!.deployBlock,
        ...(feed === undefined ? {} : { feedAddress: feed })
      }
    }),
    unlistedToken: { symbol: UNLISTED_SYMBOL, address: unlisted.address, deployBlock: unlisted.deployBlock },
    transfers,
    multiplierChanges,
    pauses,
    prices,
    finalBalances,
    finalMultipliers,
    headBlock: head.number,
    headTimestamp: head.timestamp
  }
  return { tokenList, manifest }
}

/** Starts a node whose clock allows the seed's dates, and seeds it. */
export const startSeededNode = async (
  options: Omit<TestNodeOptions, "genesisTimestamp"> & SeedOptions = {}
): Promise<{ readonly node: TestNode } & SeedResult> => {
  const { openingQuotes, ...nodeOptions } = options
  const node = await startTestNode({ ...nodeOptions, genesisTimestamp: SEED_GENESIS_TIMESTAMP })
  try {
    return { node, ...(await seedChain(node, { openingQuotes })) }
  } catch (error) {
    await node.close()
    throw error
  }
}

/** JSON with bigints as decimal strings. */
export const toJson = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2) + "\n"

export const writeSeedFiles = (dir: string, result: SeedResult): { tokens: string; manifest: string } => {
  mkdirSync(dir, { recursive: true })
  const tokens = join(dir, "tokens.json")
  const manifest = join(dir, "seed-manifest.json")
  writeFileSync(tokens, toJson(result.tokenList))
  writeFileSync(manifest, toJson(result.manifest))
  return { tokens, manifest }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2)
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : undefined
  }
  const started = Date.now()
  const port = option("--port")
  const chainId = option("--chain-id")
  const { node, tokenList, manifest } = await startSeededNode({
    ...(port === undefined ? {} : { port: Number(port) }),
    ...(chainId === undefined ? {} : { chainId: Number(chainId) })
  })
  console.log(
    `seeded chain ${node.chainId} in ${Date.now() - started} ms: ${manifest.headBlock} blocks, ` +
      `${tokenList.tokens.length} tokens; ${node.httpUrl} ${node.wsUrl}`
  )
  const out = option("--out")
  if (out !== undefined) {
    const written = writeSeedFiles(out, { tokenList, manifest })
    console.log(`wrote ${written.tokens} and ${written.manifest}`)
  }
  if (args.includes("--exit")) {
    await node.close()
  } else {
    const stop = () => void node.close().then(() => process.exit(0))
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
  }
}
