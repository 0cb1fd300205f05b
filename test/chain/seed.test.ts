import { readFileSync } from "node:fs"
import { createPublicClient, custom, decodeEventLog, type Hex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadArtifact } from "./artifacts.js"
import type { TestNode } from "./node.js"
import { SEED_SYMBOLS, type SeedManifest, startSeededNode, type TokenList, UNLISTED_SYMBOL } from "./seed.js"

const stock = loadArtifact("Stock")
const feedAbi = loadArtifact("PriceFeed").abi

let node: TestNode
let manifest: SeedManifest
let tokenList: TokenList
let seedMs: number

const client = () => createPublicClient({ transport: custom(node.provider) })
const readStock = <T>(address: string, functionName: string, args: ReadonlyArray<unknown>, blockNumber?: number) =>
  client().readContract({
    address: address as Hex,
    abi: stock.abi,
    functionName,
    args,
    ...(blockNumber === undefined ? {} : { blockNumber: BigInt(blockNumber) })
  } as never) as Promise<T>

beforeAll(async () => {
  const started = Date.now()
  const seeded = await startSeededNode()
  seedMs = Date.now() - started
  node = seeded.node
  manifest = seeded.manifest
  tokenList = seeded.tokenList
})

afterAll(async () => {
  await node.close()
})

const allLogs = () =>
  client().getLogs({
    address: manifest.tokens.map((t) => t.address as Hex),
    fromBlock: 0n,
    toBlock: BigInt(manifest.headBlock)
  })

describe("seed", () => {
  it("is quick", () => {
    expect(seedMs).toBeLessThan(10_000)
  })

  it("writes a token list in the bundled list's format, with feeds for all but F, and no unlisted token", () => {
    const bundled = JSON.parse(
      readFileSync(new URL("../../packages/workers/assets/robinhood/tokens-4663.json", import.meta.url), "utf8")
    ) as TokenList
    expect(Object.keys(tokenList).sort()).toEqual(Object.keys(bundled).sort())
    expect(tokenList.chainId).toBe(31337)
    expect(tokenList.tokens.map((t) => t.symbol)).toEqual([...SEED_SYMBOLS])
    const bundledKeys = Object.keys(bundled.tokens[0]!).sort()
    for (const token of tokenList.tokens) {
      const { feedAddress, ...rest } = token
      expect(Object.keys(rest).sort()).toEqual(bundledKeys)
      expect(feedAddress === undefined).toBe(token.symbol === "F")
      const real = bundled.tokens.find((t) => t.symbol === token.symbol)!
      expect([token.name, token.isin, token.decimals]).toEqual([real.name, real.isin, 18])
      expect(token.currentMultiplier).toBe(real.currentMultiplier)
    }
    expect(tokenList.tokens.map((t) => t.address)).not.toContain(manifest.unlistedToken.address)
  })

  it("every Transfer on chain is in the manifest, in order, with its block, transaction and log index", async () => {
    const transfers = (await allLogs())
      .map((log) => ({ log, event: decodeEventLog({ abi: stock.abi, data: log.data, topics: log.topics }) }))
      .filter((x) => x.event.eventName === "Transfer")
      .map(({ log, event }) => {
        const args = event.args as unknown as { from: string; to: string; value: bigint }
        return {
          token: log.address.toLowerCase(),
          from: args.from,
          to: args.to,
          value: args.value,
          block: Number(log.blockNumber),
          txHash: log.transactionHash,
          logIndex: log.logIndex
        }
      })
    expect(transfers).toEqual(
      manifest.transfers.map((t) => ({
        token: t.token.toLowerCase(),
        from: t.from,
        to: t.to,
        value: t.value,
        block: t.block,
        txHash: t.txHash,
        logIndex: t.logIndex
      }))
    )
    const kinds = manifest.transfers.map((t) => t.kind)
    for (const kind of ["mint", "burn", "transfer", "self", "to_exchange", "from_exchange"]) {
      expect(kinds).toContain(kind)
    }
    const self = manifest.transfers.find((t) => t.kind === "self" && t.from !== t.to)!
    const person = (a: string) => manifest.holders.find((h) => h.address === a)!.person
    expect(person(self.from)).toBe(person(self.to))
  })

  it("replays the real multiplier announcements at their real times, CRWD's twice", async () => {
    const fixture = JSON.parse(
      readFileSync(new URL("../fixtures/multiplier-events-4663.json", import.meta.url), "utf8")
    ) as {
      events: ReadonlyArray<
        { symbol: string; announcedAt: string; effectiveAt: string; oldMultiplier: string; newMultiplier: string }
      >
    }
    const expected = fixture.events.filter((e) => (SEED_SYMBOLS as ReadonlyArray<string>).includes(e.symbol))
    expect(
      manifest.multiplierChanges.map((c) => [c.symbol, c.announcedAt, c.effectiveAt, c.oldMultiplier, c.newMultiplier])
    )
      .toEqual(expected.map((e) => [
        e.symbol,
        Date.parse(e.announcedAt) / 1000,
        Date.parse(e.effectiveAt) / 1000,
        BigInt(e.oldMultiplier),
        BigInt(e.newMultiplier)
      ]))
    expect(manifest.multiplierChanges.filter((c) => c.reannouncement).map((c) => c.symbol)).toEqual(["CRWD"])

    const logs = (await allLogs()).filter((l) =>
      l.topics[0] === "0x2205df4534432b2f60654a3fdb48737ffdaf3e9edb1a498bd985bc026b15b055"
    )
    expect(logs.map((l) => [Number(l.blockNumber), l.transactionHash, l.logIndex])).toEqual(
      manifest.multiplierChanges.map((c) => [c.announcementBlock, c.txHash, c.logIndex])
    )
    for (const change of manifest.multiplierChanges) {
      expect((await node.block(change.announcementBlock)).timestamp).toBe(change.announcedAt)
      expect((await node.block(change.lastBlockBefore)).timestamp).toBeLessThan(change.effectiveAt)
      expect((await node.block(change.firstBlockAtOrAfter)).timestamp).toBeGreaterThanOrEqual(change.effectiveAt)
      expect(await readStock<bigint>(change.token, "uiMultiplier", [], change.lastBlockBefore)).toBe(
        change.oldMultiplier
      )
      expect(await readStock<bigint>(change.token, "uiMultiplier", [], change.firstBlockAtOrAfter)).toBe(
        change.newMultiplier
      )
    }
  })

  it("ends with the balances and multipliers the manifest states; TSLA never changed", async () => {
    for (const token of manifest.tokens) {
      for (const [holder, raw] of Object.entries(manifest.finalBalances[token.symbol]!)) {
        expect(await readStock<bigint>(token.address, "balanceOf", [holder])).toBe(raw)
      }
      expect(await readStock<bigint>(token.address, "uiMultiplier", [])).toBe(manifest.finalMultipliers[token.symbol])
    }
    expect(manifest.finalMultipliers.TSLA).toBe(10n ** 18n)
    expect(manifest.finalMultipliers.CRWD).toBe(4n * 10n ** 18n)
    expect(await readStock<boolean>(manifest.unlistedToken.address, "supportsInterface", ["0xa60bf13d"])).toBe(true)
    expect(manifest.unlistedToken.symbol).toBe(UNLISTED_SYMBOL)
  })

  it("paused CRWD around its split and posted prices with 8 decimals", async () => {
    expect(manifest.pauses.map((p) => p.kind)).toEqual(["Paused", "OraclePaused", "Unpaused", "OracleUnpaused"])
    const split = manifest.multiplierChanges[0]!
    expect(manifest.pauses[0]!.timestamp).toBeLessThan(split.effectiveAt)
    expect(manifest.pauses[2]!.timestamp).toBeGreaterThan(split.effectiveAt)

    for (const token of manifest.tokens.filter((t) => t.feedAddress !== undefined)) {
      const feed = token.feedAddress as Hex
      const rounds = manifest.prices.filter((p) => p.symbol === token.symbol)
      expect(rounds.length).toBeGreaterThan(0)
      const latest = await client().readContract(
        { address: feed, abi: feedAbi, functionName: "latestRoundData" } as never
      ) as ReadonlyArray<bigint>
      expect([latest[0], latest[1], latest[3]]).toEqual([
        rounds.at(-1)!.roundId,
        rounds.at(-1)!.answer,
        BigInt(rounds.at(-1)!.updatedAt)
      ])
      for (const round of rounds) {
        const r = await client().readContract(
          { address: feed, abi: feedAbi, functionName: "getRoundData", args: [round.roundId] } as never
        ) as ReadonlyArray<bigint>
        expect(r[1]).toBe(round.answer)
      }
    }
    expect(manifest.tokens.find((t) => t.symbol === "F")!.feedAddress).toBeUndefined()
  })
})
