import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { MarketReads } from "@scaledger/db/market/MarketReads"
import { makeWeekendExposure } from "@scaledger/db/market/WeekendExposure"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Ledger, type LedgerInput } from "@scaledger/domain/ledger/index"
import { makePriceRecorder } from "@scaledger/workers/ingest/PriceRecorder"
import { Effect, Either, Layer, TestClock, TestContext } from "effect"
import { encodeFunctionData, type Hex, parseUnits } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import type { TestNode } from "../chain/node.js"
import { ingestServices, issuerCall, recordToHead, type SeededChain, seededChain } from "../support/ChainHarness.js"

const FINALITY = 10
const feedArtifact = loadArtifact("PriceFeed")
const unix = (iso: string) => Date.parse(iso) / 1000

/** Posts a feed round from the issuer in a block at `iso`. */
const postRoundAt = async (node: TestNode, feed: string, usd: string, iso: string) => {
  await node.setNextBlockTimestamp(unix(iso))
  const data = encodeFunctionData({ abi: feedArtifact.abi, functionName: "postRound", args: [parseUnits(usd, 8), 0n] })
  const hash = await node.request<Hex>("eth_sendTransaction", [{ from: node.accounts[0]!.address, to: feed, data }])
  const receipt = await node.request<{ status: Hex }>("eth_getTransactionReceipt", [hash])
  if (receipt.status !== "0x1") throw new Error("postRound reverted")
}

const tokenOf = (chain: SeededChain, symbol: string) => chain.manifest.tokens.find((t) => t.symbol === symbol)!

/** A ledger build holding 10 AAPL, 2 TSLA and 100 F (no feed) at the seeded chain's token addresses. */
const seedBuild = (chain: SeededChain, accountName: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { account } = yield* (yield* AccountsRepo).findOrCreate(accountName)
    const wallet = `0x${"1".padStart(40, "0")}`
    const events = (["AAPL", "TSLA", "F"] as const).map((symbol, i) => ({
      id: `buy-${symbol}`,
      kind: "transfer" as const,
      token: symbol,
      tokenAddress: tokenOf(chain, symbol).address,
      from: `0x${"99".padStart(40, "0")}`,
      to: wallet,
      raw: (BigInt([10, 2, 100][i]!) * 10n ** 18n).toString(),
      block: i + 1,
      logIndex: 0,
      txHash: `0x${(i + 1).toString(16).padStart(64, "0")}`,
      timestamp: unix("2026-11-02T15:00:00Z")
    }))
    const input: LedgerInput = {
      wallets: [{ address: wallet, self: true }],
      country: "US",
      events,
      asOf: unix("2026-11-20T12:00:00Z")
    }
    const report = Either.getOrThrow(Ledger.run(input))
    yield* sql`INSERT INTO ledger_builds (account_id, requested_version, lease_owner, lease_until)
               VALUES (${account.id}, 1, 'test', now() + interval '1 hour')`
    yield* (yield* LedgerStore).store(account.id, "test", 1, {
      report: {},
      positions: report.positions.map((row) => ({ token: row.token, wallet: row.wallet, row })),
      lots: [],
      disposals: [],
      events: []
    })
    return account.id
  })

describe("weekend exposure on the local chain", () => {
  it.live(
    "rounds posted on a Friday and a Monday, recorded by the price recorder; a pause recorded from its event",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const head = yield* Effect.promise(() => node.block("latest"))
        expect(head.timestamp).toBeLessThan(unix("2026-11-20T00:00:00Z"))
        const aapl = tokenOf(chain, "AAPL")
        const tsla = tokenOf(chain, "TSLA")
        yield* Effect.scoped(
          Effect.gen(function*() {
            // The recorder starts watching now (its cursor at the head): what follows is recorded live.
            yield* recordToHead
            yield* Effect.promise(async () => {
              // Friday 20 November 2026, the close is 21:00 UTC.
              await postRoundAt(node, aapl.feedAddress!, "240", "2026-11-20T20:59:00Z")
              await postRoundAt(node, tsla.feedAddress!, "300", "2026-11-20T20:59:30Z")
              // Monday 23 November: TSLA paused by the issuer at 01:00 UTC, overnight rounds at 09:00 UTC.
              await issuerCall(node, tsla.address, "pause", [], unix("2026-11-23T01:00:00Z"))
              await postRoundAt(node, aapl.feedAddress!, "252", "2026-11-23T09:00:00Z")
              await postRoundAt(node, tsla.feedAddress!, "285", "2026-11-23T09:00:10Z")
              await node.mine(FINALITY)
            })
            yield* recordToHead
            yield* Effect.flatMap(makePriceRecorder, (recorder) => recorder.catchUp)
            const accountId = yield* seedBuild(chain, "exposure-chain")
            const reads = yield* makeWeekendExposure({ chainId: node.chainId })
            const at = (iso: string) =>
              Effect.gen(function*() {
                yield* TestClock.setTime(Date.parse(iso))
                const answer = yield* reads.exposure(accountId, {})
                return Object.fromEntries(answer.tokens.map((t) => [t.symbol, t]))
              }).pipe(Effect.provide(TestContext.TestContext))

            const saturday = yield* at("2026-11-21T12:00:00Z")
            expect(saturday.AAPL).toMatchObject({
              status: "ok",
              lastClose: {
                at: "2026-11-20T21:00:00.000Z",
                round: { answer: "240", updatedAt: "2026-11-20T20:59:00.000Z" }
              },
              current: { answer: "240" },
              driftUsd: "0",
              driftPercent: "0"
            })
            expect(saturday.TSLA).toMatchObject({ status: "ok", paused: { paused: false } })
            expect(saturday.F).toMatchObject({ status: "no_feed", driftUsd: null, current: null })

            const monday = yield* at("2026-11-23T12:00:00Z")
            // 10 × (252 − 240) = 120, +5 %; TSLA 2 × (285 − 300) = −30, −5 %, and paused since the event's block.
            expect(monday.AAPL).toMatchObject({
              status: "ok",
              current: { answer: "252" },
              driftUsd: "120",
              driftPercent: "5"
            })
            expect(monday.TSLA).toMatchObject({
              status: "token_paused",
              driftUsd: "-30",
              driftPercent: "-5",
              paused: { paused: true, since: "2026-11-23T01:00:00.000Z" }
            })
            expect(monday.AAPL!.lastClose.round!.feed.toLowerCase()).toBe(aapl.feedAddress!.toLowerCase())
          }).pipe(
            Effect.provide(
              Layer.mergeAll(LedgerStore.Default, MarketReads.Default, FxRates.Default).pipe(
                Layer.provideMerge(ingestServices({
                  rpcUrl: node.httpUrl,
                  chainId: node.chainId,
                  tokenListPath: chain.tokenListPath,
                  ingest: { priceHistoryFrom: unix("2026-11-01T00:00:00Z") }
                })),
                Layer.provideMerge(TestDatabase.postgres)
              )
            )
          )
        )
      }).pipe(Effect.scoped),
    120_000
  )
})
