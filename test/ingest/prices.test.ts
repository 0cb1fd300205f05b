import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { ReadHealthStore } from "@scaledger/db/chain/ReadHealth"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ChainClient, type ChainClientService, type RoundData } from "@scaledger/domain/chain/ChainClient"
import { ContractReverted } from "@scaledger/domain/chain/ChainErrors"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import { ReadHealth } from "@scaledger/workers/chain/ReadHealth"
import { TokenRegistry, type TokenRegistryService } from "@scaledger/workers/chain/TokenRegistry"
import { IngestConfig, type IngestConfigShape } from "@scaledger/workers/ingest/IngestConfig"
import { makePriceRecorder, PriceRecorderLive, proxyRoundId } from "@scaledger/workers/ingest/PriceRecorder"
import { Duration, Effect, Exit, Layer, Schedule } from "effect"
import { encodeFunctionData, type Hex, parseUnits, toFunctionSelector } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import { type FaultProxy, startFaultProxy } from "../chain/faultProxy.js"
import type { TestNode } from "../chain/node.js"
import { SEED_GENESIS_TIMESTAMP, type SeedPrice } from "../chain/seed.js"
import { addAndBackfill, ingestServices, type SeededChain, seededChain } from "../support/ChainHarness.js"

/** `ingestServices` uses a finality depth of 10: rounds are read once this many blocks lie on top of them. */
const FINALITY = 10
const PHASE_1 = 1n << 64n

const feedArtifact = loadArtifact("PriceFeed")
const SELECTORS: Record<string, string> = {
  [toFunctionSelector("latestRoundData()")]: "latestRoundData",
  [toFunctionSelector("getRoundData(uint80)")]: "getRoundData",
  [toFunctionSelector("decimals()")]: "decimals"
}

const key = (address: string) => address.toLowerCase()
const tokenOf = (chain: SeededChain, symbol: string) => chain.manifest.tokens.find((t) => t.symbol === symbol)!
const holder = (chain: SeededChain, label: string) => chain.manifest.holders.find((h) => h.label === label)!.address

/** Requests through the proxy, `eth_call`s named by the function called. */
const calls = (proxy: FaultProxy) => {
  const counted: Record<string, number> = {}
  for (const entry of proxy.log()) {
    const call = entry.params[0] as { data?: string; input?: string } | undefined
    const name = entry.method === "eth_call"
      ? SELECTORS[(call?.data ?? call?.input ?? "").slice(0, 10)] ?? "eth_call"
      : entry.method
    counted[name] = (counted[name] ?? 0) + 1
  }
  return counted
}

const fmt = (rounds: ReadonlyArray<{ roundId: bigint; answer: bigint; updatedAt: number }>) =>
  rounds.map((r) => ({ roundId: r.roundId.toString(), answer: r.answer.toString(), updatedAt: r.updatedAt }))

const manifestRounds = (chain: SeededChain, symbol: string) =>
  chain.manifest.prices.filter((p) => p.symbol === symbol).sort((a, b) => (a.roundId < b.roundId ? -1 : 1))

/** Posts a round from the issuer (the feeds' owner) and, unless told otherwise, mines the finality depth on top of it. */
const postRound = async (node: TestNode, feed: string, usd: string, options: { readonly final?: boolean } = {}) => {
  const head = await node.block("latest")
  const updatedAt = head.timestamp + 60
  await node.setNextBlockTimestamp(updatedAt)
  const data = encodeFunctionData({ abi: feedArtifact.abi, functionName: "postRound", args: [parseUnits(usd, 8), 0n] })
  const hash = await node.request<Hex>("eth_sendTransaction", [{ from: node.accounts[0]!.address, to: feed, data }])
  const receipt = await node.request<{ status: Hex }>("eth_getTransactionReceipt", [hash])
  if (receipt.status !== "0x1") throw new Error("postRound reverted")
  if (options.final !== false) await node.mine(FINALITY)
  return { answer: parseUnits(usd, 8), updatedAt }
}

/** Rounds posted after the seed's, as the seed would have listed them. */
const following = (
  chain: SeededChain,
  symbol: string,
  posted: ReadonlyArray<{ answer: bigint; updatedAt: number }>
) => {
  const last = manifestRounds(chain, symbol).at(-1)!
  return posted.map((r, i): SeedPrice => ({
    ...last,
    roundId: last.roundId + BigInt(i + 1),
    answer: r.answer,
    updatedAt: r.updatedAt
  }))
}

const faultFreeProxy = (chain: SeededChain) =>
  Effect.acquireRelease(
    Effect.promise(() => startFaultProxy({ target: chain.node.httpUrl })),
    (p) => Effect.promise(() => p.close())
  )

/** Runs `body` with the ingestion services and `PriceRounds` over a fresh PostgreSQL database. */
const withPrices = <A, E, R>(
  chain: SeededChain,
  body: Effect.Effect<A, E, R>,
  options: { readonly rpcUrl?: string; readonly ingest?: Partial<IngestConfigShape> } = {}
) =>
  body.pipe(
    Effect.provide(
      PriceRounds.Default.pipe(
        Layer.provideMerge(ingestServices({
          rpcUrl: options.rpcUrl ?? chain.node.httpUrl,
          chainId: chain.node.chainId,
          tokenListPath: chain.tokenListPath,
          ...(options.ingest === undefined ? {} : { ingest: options.ingest })
        })),
        Layer.provideMerge(TestDatabase.postgres)
      )
    )
  )

const catchUp = Effect.flatMap(makePriceRecorder, (recorder) => recorder.catchUp)

const snapshot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rounds =
    yield* sql`SELECT feed_key, round_id, feed_address, token_key, answer, decimals, started_at, updated_at, answered_in_round
                            FROM price_rounds ORDER BY feed_key, round_id`
  const progress =
    yield* sql`SELECT feed_key, token_key, decimals, newest_round_id, oldest_round_id, oldest_updated_at, history_start,
                                     fill_top_round_id, fill_next_round_id
                              FROM price_feed_progress ORDER BY feed_key`
  return { rounds, progress }
})

/** Every seeded feed's rounds as stored, next to the seed's own record of them. */
const expectSeedRounds = (chain: SeededChain, extra: Readonly<Record<string, ReadonlyArray<SeedPrice>>> = {}) =>
  Effect.gen(function*() {
    const prices = yield* PriceRounds
    const feeds = chain.manifest.tokens.filter((t) => t.feedAddress !== undefined)
    expect(feeds.map((t) => t.symbol)).toEqual(["AAPL", "CRWD", "SGOV", "MU", "TSLA"])
    for (const token of feeds) {
      const stored = yield* prices.roundsOfFeed(chain.node.chainId, token.feedAddress!)
      expect(fmt(stored)).toEqual(fmt([...manifestRounds(chain, token.symbol), ...(extra[token.symbol] ?? [])]))
      expect(stored.every((r) => r.decimals === 8 && r.feed === token.feedAddress && r.token === key(token.address)))
        .toBe(true)
    }
  })

describe("price feed rounds", () => {
  it.live(
    "stores every seeded round with its id, answer and time; F, without a feed, has none; a second run asks only for the latest rounds",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        yield* Effect.promise(() => chain.node.mine(FINALITY))
        const proxy = yield* faultFreeProxy(chain)
        const { chainId } = chain.node
        yield* withPrices(
          chain,
          Effect.gen(function*() {
            yield* catchUp
            yield* expectSeedRounds(chain)
            const first = calls(proxy)
            // One latest round, one decimals() per feed, and each earlier round once; the first round of the phase
            // ends the walk (phase 1 has no earlier phase to look in).
            expect(first).toMatchObject({
              latestRoundData: 5,
              decimals: 5,
              getRoundData: chain.manifest.prices.length - 5
            })

            const prices = yield* PriceRounds
            const symbols = ["AAPL", "CRWD", "SGOV", "MU", "TSLA", "F"]
            const table = yield* prices.roundsFor(chainId, symbols.map((s) => tokenOf(chain, s).address))
            expect(table[key(tokenOf(chain, "F").address)]).toEqual([])
            const aapl = table[key(tokenOf(chain, "AAPL").address)]!
            expect(aapl).toEqual(
              chain.manifest.prices.filter((p) => p.symbol === "AAPL").map((p) => ({
                roundId: p.roundId.toString(),
                answer: p.answer.toString(),
                updatedAt: p.updatedAt,
                feed: tokenOf(chain, "AAPL").feedAddress
              }))
            )
            expect(aapl[0]).toEqual({
              roundId: (PHASE_1 | 1n).toString(),
              answer: "21244000000",
              updatedAt: Date.parse("2026-07-01T14:30:00Z") / 1000,
              feed: tokenOf(chain, "AAPL").feedAddress
            })
            for (const symbol of symbols.slice(0, 5)) {
              const rounds = table[key(tokenOf(chain, symbol).address)]!
              expect(rounds.map((r) => r.updatedAt)).toEqual([...rounds.map((r) => r.updatedAt)].sort((a, b) => a - b))
            }

            const before = yield* snapshot
            expect(before.progress.every((p: any) => p.history_start === true && p.fill_top_round_id === null)).toBe(
              true
            )
            proxy.resetCounts()
            yield* catchUp
            expect(calls(proxy)).toEqual({ eth_blockNumber: 1, latestRoundData: 5 })
            expect(yield* snapshot).toEqual(before)
          }),
          { rpcUrl: proxy.url, ingest: { priceHistoryFrom: SEED_GENESIS_TIMESTAMP } }
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "picks up rounds posted later once final, reading only those between the newest stored and the latest",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        yield* Effect.promise(() => node.mine(FINALITY))
        const proxy = yield* faultFreeProxy(chain)
        const aapl = tokenOf(chain, "AAPL")
        const mu = tokenOf(chain, "MU")
        yield* withPrices(
          chain,
          Effect.gen(function*() {
            yield* catchUp
            const aaplRounds = yield* Effect.promise(async () => [
              await postRound(node, aapl.feedAddress!, "230.01"),
              await postRound(node, aapl.feedAddress!, "230.02"),
              await postRound(node, aapl.feedAddress!, "229.99")
            ])
            const muFinal = yield* Effect.promise(() => postRound(node, mu.feedAddress!, "120.50"))
            const muRecent = yield* Effect.promise(() => postRound(node, mu.feedAddress!, "120.75", { final: false }))
            proxy.resetCounts()
            yield* catchUp
            // AAPL's latest is read by latestRoundData; the two below it by getRoundData; MU's final latest is its only new one.
            expect(calls(proxy)).toEqual({ eth_blockNumber: 1, latestRoundData: 5, getRoundData: 2 })
            yield* expectSeedRounds(chain, {
              AAPL: following(chain, "AAPL", aaplRounds),
              MU: following(chain, "MU", [muFinal])
            })

            yield* Effect.promise(() => node.mine(FINALITY))
            proxy.resetCounts()
            yield* catchUp
            expect(calls(proxy)).toEqual({ eth_blockNumber: 1, latestRoundData: 5 })
            yield* expectSeedRounds(chain, {
              AAPL: following(chain, "AAPL", aaplRounds),
              MU: following(chain, "MU", [muFinal, muRecent])
            })
          }),
          { rpcUrl: proxy.url, ingest: { priceHistoryFrom: SEED_GENESIS_TIMESTAMP } }
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "runs as a fiber of its layer: records on its own every PRICE_POLL_MS, and stops with the layer's scope",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        yield* Effect.promise(() => node.mine(FINALITY))
        const proxy = yield* faultFreeProxy(chain)
        const tsla = tokenOf(chain, "TSLA")
        yield* withPrices(
          chain,
          Effect.gen(function*() {
            const prices = yield* PriceRounds
            const storedTsla = Effect.map(
              prices.roundsOfFeed(node.chainId, tsla.feedAddress!),
              (rounds) => rounds.length
            )
            const waitFor = (count: number) =>
              storedTsla.pipe(
                Effect.filterOrFail((n) => n === count, (n) => `TSLA rounds: ${n}, waiting for ${count}`),
                Effect.retry(Schedule.spaced(Duration.millis(20)).pipe(Schedule.upTo(Duration.seconds(20)))),
                Effect.orDie
              )
            yield* Effect.scoped(Effect.gen(function*() {
              yield* Layer.build(PriceRecorderLive)
              yield* waitFor(manifestRounds(chain, "TSLA").length)
              yield* Effect.promise(() => postRound(node, tsla.feedAddress!, "320.00"))
              yield* waitFor(manifestRounds(chain, "TSLA").length + 1)
            }))
            yield* Effect.sleep(Duration.millis(100))
            proxy.resetCounts()
            yield* Effect.sleep(Duration.millis(400))
            expect(proxy.total()).toBe(0)
          }),
          { rpcUrl: proxy.url, ingest: { priceHistoryFrom: SEED_GENESIS_TIMESTAMP, pricePollMs: 100 } }
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a walk stopped part-way (history, or a catch-up) resumes where it stopped, reading no round twice",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        yield* Effect.promise(() => node.mine(FINALITY))
        const proxy = yield* faultFreeProxy(chain)
        const aapl = tokenOf(chain, "AAPL")
        yield* withPrices(
          chain,
          Effect.gen(function*() {
            const first = yield* makePriceRecorder
            // One pass: each feed's latest round and one batch (2 rounds) of its history; then the process "stops".
            const pending = yield* first.tick(first.targets)
            expect(pending.map((t) => t.symbol).sort()).toEqual(["AAPL", "CRWD", "MU", "SGOV", "TSLA"])
            const readFirst = calls(proxy).getRoundData ?? 0
            expect(readFirst).toBe(10)
            expect((yield* snapshot).rounds).toHaveLength(15)
            proxy.resetCounts()
            yield* catchUp
            expect(readFirst + (calls(proxy).getRoundData ?? 0)).toBe(chain.manifest.prices.length - 5)
            yield* expectSeedRounds(chain)

            // A catch-up over five new rounds dies after reading two of them (one stored batch).
            const posted = yield* Effect.promise(async () => {
              const rounds = []
              for (const usd of ["231.00", "231.10", "231.20", "231.30", "231.40"]) {
                rounds.push(await postRound(node, aapl.feedAddress!, usd, { final: false }))
              }
              await node.mine(FINALITY)
              return rounds
            })
            const chainClient = yield* ChainClient
            let reads = 0
            const crashing: ChainClientService = {
              ...chainClient,
              getRoundData: (feed, roundId, block) =>
                ++reads > 2 ? Effect.dieMessage("the process stops") : chainClient.getRoundData(feed, roundId, block)
            }
            const crashed = yield* makePriceRecorder.pipe(
              Effect.provideService(ChainClient, crashing),
              Effect.flatMap((r) => r.catchUp),
              Effect.exit
            )
            expect(Exit.isFailure(crashed)).toBe(true)
            const seedLast = manifestRounds(chain, "AAPL").at(-1)!.roundId
            const [progress] = (yield* snapshot).progress.filter((p: any) => p.feed_key === key(aapl.feedAddress!))
            expect(progress).toMatchObject({
              newest_round_id: seedLast.toString(),
              fill_top_round_id: (seedLast + 5n).toString(),
              fill_next_round_id: (seedLast + 2n).toString()
            })
            proxy.resetCounts()
            yield* catchUp
            expect(calls(proxy)).toEqual({ eth_blockNumber: 1, latestRoundData: 5, getRoundData: 2 })
            yield* expectSeedRounds(chain, { AAPL: following(chain, "AAPL", posted) })
            const [done] = (yield* snapshot).progress.filter((p: any) => p.feed_key === key(aapl.feedAddress!))
            expect(done).toMatchObject({
              newest_round_id: (seedLast + 5n).toString(),
              fill_top_round_id: null,
              fill_next_round_id: null
            })
          }),
          { rpcUrl: proxy.url, ingest: { priceHistoryFrom: SEED_GENESIS_TIMESTAMP, priceBatchRounds: 2 } }
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("through 20 % errors and 429s, stores exactly what a clean run stores", () =>
    Effect.gen(function*() {
      const chain = yield* seededChain
      yield* Effect.promise(() => chain.node.mine(FINALITY))
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startFaultProxy({
            target: chain.node.httpUrl,
            seed: 11,
            faults: { serverErrorRate: 0.2, rateLimitRate: 0.1, retryAfterSeconds: 1 }
          })
        ),
        (p) => Effect.promise(() => p.close())
      )
      const run = (rpcUrl: string) =>
        withPrices(chain, Effect.zipRight(catchUp, snapshot), {
          rpcUrl,
          ingest: { priceHistoryFrom: SEED_GENESIS_TIMESTAMP, priceBatchRounds: 3 }
        })
      const clean = yield* run(chain.node.httpUrl)
      const faulty = yield* run(proxy.url)
      expect(clean.rounds).toHaveLength(chain.manifest.prices.length)
      expect(faulty).toEqual(clean)
      const faults = proxy.faultCounts()
      expect(faults.server_error ?? 0).toBeGreaterThan(0)
      expect(faults.rate_limited ?? 0).toBeGreaterThan(0)
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "walks history back to the round in force at PRICE_HISTORY_FROM, further when it moves earlier, and not at all without a bound",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        yield* Effect.promise(() => chain.node.mine(FINALITY))
        const recordWith = (priceHistoryFrom: number | null) =>
          makePriceRecorder.pipe(
            Effect.provide(IngestConfig.layer({ priceHistoryFrom })),
            Effect.flatMap((recorder) => recorder.catchUp)
          )
        const storedBySymbol = Effect.gen(function*() {
          const prices = yield* PriceRounds
          const out: Record<string, ReadonlyArray<string>> = {}
          for (const token of chain.manifest.tokens.filter((t) => t.feedAddress !== undefined)) {
            out[token.symbol] = (yield* prices.roundsOfFeed(chain.node.chainId, token.feedAddress!)).map((r) =>
              r.roundId.toString()
            )
          }
          return out
        })
        /** The rounds after `bound` and the one in force at it. */
        const expected = (bound: number) => {
          const out: Record<string, ReadonlyArray<string>> = {}
          for (const symbol of ["AAPL", "CRWD", "SGOV", "MU", "TSLA"]) {
            const rounds = manifestRounds(chain, symbol)
            const inForce = rounds.filter((r) => r.updatedAt <= bound).at(-1)
            out[symbol] = rounds.filter((r) => r.updatedAt > bound || r === inForce).map((r) => r.roundId.toString())
          }
          return out
        }
        yield* withPrices(
          chain,
          Effect.gen(function*() {
            yield* recordWith(null)
            expect(yield* storedBySymbol).toEqual(expected(Number.MAX_SAFE_INTEGER))

            const august8 = Date.parse("2026-08-08T00:00:00Z") / 1000
            yield* recordWith(august8)
            const stored = yield* storedBySymbol
            expect(stored).toEqual(expected(august8))
            // SGOV: the rounds of 7 August onwards, and 8 July's last one, in force on 8 August.
            expect(stored.SGOV).toHaveLength(
              manifestRounds(chain, "SGOV").filter((r) => r.updatedAt > august8).length + 1
            )

            yield* recordWith(SEED_GENESIS_TIMESTAMP)
            expect(yield* storedBySymbol).toEqual(expected(SEED_GENESIS_TIMESTAMP))
            expect((yield* snapshot).progress.every((p: any) => p.history_start === true)).toBe(true)
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "without PRICE_HISTORY_FROM walks back to the earliest stored transfer; a new round invalidates the ledgers of accounts holding the token",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        yield* Effect.promise(() => node.mine(FINALITY))
        const mu = tokenOf(chain, "MU")
        const bob = holder(chain, "bob")
        const carol = holder(chain, "carol")
        yield* withPrices(
          chain,
          Effect.gen(function*() {
            yield* addAndBackfill(bob, node.chainId, "bob")
            yield* addAndBackfill(carol, node.chainId, "carol")
            yield* catchUp
            const prices = yield* PriceRounds
            // Of MU only Carol's receipt on 2026-07-24T15:05:30 is stored: its rounds from the one in force then.
            const muRounds = manifestRounds(chain, "MU")
            const carolsMu = chain.manifest.transfers.find((t) => t.symbol === "MU" && key(t.to) === key(carol))!
            expect(carolsMu.timestamp).toBe(Date.parse("2026-07-24T15:05:30Z") / 1000)
            expect(fmt(yield* prices.roundsOfFeed(node.chainId, mu.feedAddress!))).toEqual(
              fmt(muRounds.filter((r) => r.updatedAt >= Date.parse("2026-07-24T15:05:00Z") / 1000))
            )
            // Bob's mints of 2026-07-01 come before every CRWD round: its whole history.
            expect(yield* prices.roundsOfFeed(node.chainId, tokenOf(chain, "CRWD").feedAddress!)).toHaveLength(
              manifestRounds(chain, "CRWD").length
            )

            const sql = yield* SqlClient.SqlClient
            const versions = Effect.map(
              sql<{ account: string; requested_version: string }>`
            SELECT a.name AS account, b.requested_version FROM ledger_builds b JOIN accounts a ON a.id = b.account_id ORDER BY a.name`,
              (rows) => Object.fromEntries(rows.map((r) => [r.account, Number(r.requested_version)]))
            )
            const before = yield* versions
            expect(Object.keys(before)).toEqual(["bob", "carol"])
            yield* Effect.promise(() => postRound(node, mu.feedAddress!, "125.00"))
            yield* catchUp
            // Carol holds MU; Bob never has.
            expect(yield* versions).toEqual({ bob: before.bob, carol: before.carol! + 1 })
            // Nothing new: nothing invalidated.
            yield* catchUp
            expect(yield* versions).toEqual({ bob: before.bob, carol: before.carol! + 1 })
          }),
          { ingest: { priceHistoryMarginSeconds: 0 } }
        )
      }).pipe(Effect.scoped),
    60_000
  )
})

/**
 * A feed behind a proxy whose aggregator was replaced: phase 1 answers empty rounds (updatedAt 0) past its last
 * one, as OCR aggregators do; phase 2 never got a round; phase 3 reverts on unknown rounds. Its answers have 18
 * decimals.
 */
const fakeFeed = () => {
  const feed = "0x00000000000000000000000000000000000000Fd"
  const token = "0x00000000000000000000000000000000000000aA"
  const phases = new Map<bigint, Array<{ answer: bigint; updatedAt: number }>>()
  let t = Date.parse("2026-07-01T14:30:00Z") / 1000
  const add = (phase: bigint, answers: ReadonlyArray<bigint>) => {
    const rounds = phases.get(phase) ?? []
    phases.set(phase, rounds)
    for (const answer of answers) rounds.push({ answer, updatedAt: (t += 600) })
  }
  let current = 3n
  let reads = 0
  const round = (roundId: bigint, r: { answer: bigint; updatedAt: number }): RoundData => ({
    roundId,
    answer: r.answer,
    startedAt: r.updatedAt,
    updatedAt: r.updatedAt,
    answeredInRound: roundId
  })
  const get = (roundId: bigint): Effect.Effect<RoundData, ContractReverted> => {
    const phase = roundId >> 64n
    const index = Number(roundId & ((1n << 64n) - 1n))
    const r = phases.get(phase)?.[index - 1]
    if (r !== undefined && index > 0) return Effect.succeed(round(roundId, r))
    if (phase === 1n) return Effect.succeed({ roundId, answer: 0n, startedAt: 0, updatedAt: 0, answeredInRound: 0n })
    return Effect.fail(
      new ContractReverted({ address: feed, functionName: "getRoundData", message: "No data present" })
    )
  }
  const unused = () => Effect.dieMessage("not used by the price recorder")
  const client = {
    chainId: 31337,
    headNumber: Effect.succeed(1_000),
    feedDecimals: () => Effect.succeed(18),
    latestRoundData: () => {
      const rounds = phases.get(current)!
      return Effect.succeed(round(proxyRoundId(current, BigInt(rounds.length)), rounds.at(-1)!))
    },
    getRoundData: (_: string, roundId: bigint) =>
      Effect.suspend(() => {
        reads++
        return get(roundId)
      })
  } as unknown as ChainClientService
  const registry = {
    chainId: 31337,
    tokens: [{
      listed: true,
      symbol: "XYZ",
      name: "XYZ",
      address: token,
      decimals: 18,
      feed: { address: feed, decimals: 18 }
    }],
    bySymbol: unused,
    byAddress: unused,
    feedFor: unused,
    resolve: unused
  } as unknown as TokenRegistryService
  return {
    feed,
    token,
    add,
    setPhase: (phase: bigint) => {
      current = phase
    },
    reads: () => reads,
    layer: Layer.mergeAll(
      Layer.succeed(ChainClient, client),
      Layer.succeed(TokenRegistry, registry),
      ChainConfig.layer({ rpcUrls: ["http://127.0.0.1:1"], chainId: 31337, finalityDepth: 0 }),
      IngestConfig.layer({ priceHistoryFrom: 0, priceBatchRounds: 7 })
    )
  }
}

const WEI = 10n ** 18n

describe("price feed phases and decimals", () => {
  it.live(
    "walks back across phases (an empty one skipped), follows into a new phase, and rescales 18 decimals to 8",
    () => {
      const fake = fakeFeed()
      fake.add(1n, Array.from({ length: 40 }, (_, i) => 200n * WEI + BigInt(i) * WEI))
      fake.add(3n, [1_234_567_895_000_000_000n, -1n, 250n * WEI])
      return Effect.gen(function*() {
        const prices = yield* PriceRounds
        yield* catchUp
        const stored = yield* prices.roundsOfFeed(31337, fake.feed)
        expect(stored.map((r) => [r.roundId >> 64n, r.roundId & ((1n << 64n) - 1n)])).toEqual([
          ...Array.from({ length: 40 }, (_, i) => [1n, BigInt(i + 1)]),
          [3n, 1n],
          [3n, 2n],
          [3n, 3n]
        ])
        expect(stored.every((r) => r.decimals === 18)).toBe(true)
        expect(stored.find((r) => r.roundId === proxyRoundId(3n, 2n))!.answer).toBe(-1n)
        // 2 rounds of phase 3 below the latest, 1 probe of phase 2, a doubling and bisecting search of phase 1 for
        // its last round, then the 39 below it.
        expect(fake.reads()).toBeLessThanOrEqual(2 + 1 + 14 + 39)

        const table = yield* prices.roundsFor(31337, [fake.token])
        const series = table[key(fake.token)]!
        expect(series.map((r) => r.updatedAt)).toEqual([...series.map((r) => r.updatedAt)].sort((a, b) => a - b))
        expect(series[0]).toEqual({
          roundId: proxyRoundId(1n, 1n).toString(),
          answer: "20000000000",
          updatedAt: stored[0]!.updatedAt,
          feed: fake.feed
        })
        expect(series.slice(-3).map((r) => r.answer)).toEqual(["123456790", "0", "25000000000"])
        const [progress] = (yield* snapshot).progress
        expect(progress).toMatchObject({
          history_start: true,
          oldest_round_id: proxyRoundId(1n, 1n).toString(),
          decimals: 18
        })

        // Phase 3 gets two more rounds, then the proxy moves to phase 4.
        fake.add(3n, [251n * WEI, 252n * WEI])
        fake.add(4n, [253n * WEI, 254n * WEI])
        fake.setPhase(4n)
        const readsBefore = fake.reads()
        yield* catchUp
        expect(
          (yield* prices.roundsOfFeed(31337, fake.feed)).slice(-5).map((
            r
          ) => [r.roundId >> 64n, r.roundId & ((1n << 64n) - 1n)])
        ).toEqual([
          [3n, 3n],
          [3n, 4n],
          [3n, 5n],
          [4n, 1n],
          [4n, 2n]
        ])
        // (4,1); phase 3 searched above round 3: 4, 6, then 5; (3,4).
        expect(fake.reads() - readsBefore).toBe(1 + 3 + 1)
        expect((yield* snapshot).progress[0]).toMatchObject({
          newest_round_id: proxyRoundId(4n, 2n).toString(),
          fill_top_round_id: null
        })
      }).pipe(
        Effect.provide(
          Layer.mergeAll(PriceRounds.Default, ReadHealth.Default).pipe(
            Layer.provideMerge(ReadHealthStore.Default),
            Layer.provideMerge(fake.layer),
            Layer.provideMerge(TestDatabase.postgres)
          )
        )
      )
    },
    30_000
  )
})
