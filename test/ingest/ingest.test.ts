import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer, Option } from "effect"
import { startFaultProxy } from "../chain/faultProxy.js"
import {
  addAndBackfill,
  ingestServices,
  issuerCall,
  recordSnapshot,
  recordToHead,
  type SeededChain,
  seededChain
} from "../support/ChainHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const CAROL = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
const WAD = 10n ** 18n

const token = (chain: SeededChain, symbol: string) => chain.manifest.tokens.find((t) => t.symbol === symbol)!.address
const key = (address: string) => address.toLowerCase()

/** Runs `body` with ingestion services over a fresh PostgreSQL database against `rpcUrl`. */
const withIngest = <A, E, R>(
  chain: SeededChain,
  body: Effect.Effect<A, E, R>,
  options: { readonly rpcUrl?: string; readonly chain?: Parameters<typeof ingestServices>[0]["chain"] } = {}
) =>
  body.pipe(
    Effect.provide(
      ingestServices({
        rpcUrl: options.rpcUrl ?? chain.node.httpUrl,
        chainId: chain.node.chainId,
        tokenListPath: chain.tokenListPath,
        ...(options.chain === undefined ? {} : { chain: options.chain })
      }).pipe(Layer.provideMerge(TestDatabase.postgres))
    )
  )

describe("chain ingestion", () => {
  it.live(
    "backfills a wallet added after its history: every transfer, and the multiplier history of what it held",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            const wallet = yield* addAndBackfill(ALICE, chain.node.chainId)
            expect(wallet.backfillStatus).toBe("complete")
            expect(Number(wallet.backfillBlocksDone)).toBe(Number(wallet.backfillBlocksTotal))

            const snapshot = yield* recordSnapshot
            const expected = chain.manifest.transfers.filter((t) =>
              key(t.from) === key(ALICE) || key(t.to) === key(ALICE)
            )
            expect(expected.length).toBeGreaterThan(5)
            expect(snapshot.transfers.map((t: any) => [t.tx_hash, t.log_index, Number(t.block), t.raw])).toEqual(
              expected.map((t) => [t.txHash, t.logIndex, t.block, t.value.toString()])
            )
            // Each with its block's time, to the second.
            expect(snapshot.transfers.map((t: any) => new Date(t.block_time).getTime())).toEqual(
              expected.map((t) => t.timestamp * 1000)
            )
            // No receipts: the classification worker reads what it needs of a transaction itself, and only for
            // the movements the rules leave to the model (test/classify/classification.test.ts).
            expect(snapshot.receipts).toEqual([])

            const store = yield* ChainStore
            const crwd = yield* store.changesOf(chain.node.chainId, token(chain, "CRWD"))
            // Announced twice (CRWD re-announced the split), recorded once.
            expect(crwd).toHaveLength(1)
            const split = chain.manifest.multiplierChanges.find((c) => c.symbol === "CRWD")!
            expect(crwd[0]).toMatchObject({
              kind: "split",
              status: "active",
              source: "chain_storage",
              oldMultiplier: WAD,
              newMultiplier: 4n * WAD,
              block: split.firstBlockAtOrAfter,
              announcedBlock: split.announcementBlock
            })
            const aapl = yield* store.changesOf(chain.node.chainId, token(chain, "AAPL"))
            const dividend = chain.manifest.multiplierChanges.find((c) => c.symbol === "AAPL")!
            expect(aapl).toEqual([expect.objectContaining({
              kind: "dividend",
              source: "chain_storage",
              newMultiplier: 1000566080061092436n,
              block: dividend.firstBlockAtOrAfter,
              effectiveAt: new Date("2026-08-14T15:12:46Z")
            })])
            // Alice never held SGOV: its history is not part of her backfill.
            expect(yield* store.changesOf(chain.node.chainId, token(chain, "SGOV"))).toEqual([])
            expect(snapshot.gaps).toEqual([])
            // The issuer's pauses around the split are on record too.
            const sql = yield* SqlClient.SqlClient
            const pauses = yield* sql<{ kind: string; block: string }>`
          SELECT kind, block FROM token_pause_events WHERE token_key = ${key(token(chain, "CRWD"))} ORDER BY block`
            expect(pauses.map((p) => [p.kind, Number(p.block)])).toEqual(
              chain.manifest.pauses.filter((p) => p.symbol === "CRWD").map((p) => [p.kind, p.block])
            )
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "records a change announced and activated after the wallet was added, at the first block at or after effectiveAt",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            yield* addAndBackfill(CAROL, node.chainId)
            const head = yield* Effect.promise(() => node.block("latest"))
            const effectiveAt = head.timestamp + 600
            const announced = yield* Effect.promise(() =>
              issuerCall(
                node,
                tsla,
                "updateMultiplier",
                [1000500000000000000n, BigInt(effectiveAt)],
                head.timestamp + 10
              )
            )
            yield* recordToHead
            const store = yield* ChainStore
            expect(yield* store.pendingChanges(node.chainId)).toEqual([
              expect.objectContaining({
                token: key(tsla),
                status: "pending",
                announcedBlock: announced.block,
                kind: "dividend"
              })
            ])
            // Nothing changes on chain at effectiveAt: the value switches silently. Two blocks straddle it.
            yield* Effect.promise(async () => {
              await node.setNextBlockTimestamp(effectiveAt - 1)
              await node.mine(1)
            })
            yield* recordToHead
            expect((yield* store.changesOf(node.chainId, tsla))[0]!.status).toBe("pending")
            yield* Effect.promise(async () => {
              await node.setNextBlockTimestamp(effectiveAt + 7)
              await node.mine(1)
            })
            const activationBlock = (yield* Effect.promise(() => node.block("latest"))).number
            yield* recordToHead
            const [change] = yield* store.changesOf(node.chainId, tsla)
            expect(change).toMatchObject({
              status: "active",
              source: "chain_storage",
              block: activationBlock,
              blockTime: new Date((effectiveAt + 7) * 1000),
              oldMultiplier: WAD,
              newMultiplier: 1000500000000000000n,
              effectiveAt: new Date(effectiveAt * 1000)
            })
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "after downtime, catches up from its cursor and still reads a change that activated meanwhile at its first block",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const mu = token(chain, "MU")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            // While the service is down: a change is announced, takes effect silently, and more blocks follow.
            const head = yield* Effect.promise(() => node.block("latest"))
            const effectiveAt = head.timestamp + 300
            yield* Effect.promise(() =>
              issuerCall(node, mu, "updateMultiplier", [1000200000000000000n, BigInt(effectiveAt)], head.timestamp + 5)
            )
            yield* Effect.promise(async () => {
              await node.setNextBlockTimestamp(effectiveAt - 100)
              await node.request("evm_mine", [])
              await node.setNextBlockTimestamp(effectiveAt + 2)
              await node.request("evm_mine", [])
              for (let i = 0; i < 5; i++) await node.request("evm_mine", [])
            })
            const firstAfter = (yield* Effect.promise(() => node.block("latest"))).number - 5
            // Back up: one step from the stored cursor.
            yield* recordToHead
            const [change] = yield* (yield* ChainStore).changesOf(node.chainId, mu).pipe(
              Effect.map((changes) => changes.filter((c) => c.effectiveAt.getTime() === effectiveAt * 1000))
            )
            expect(change).toMatchObject({
              status: "active",
              source: "chain_storage",
              block: firstAfter,
              newMultiplier: 1000200000000000000n
            })
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "through 20 % errors, 429s and a 1,000-block getLogs cap, stores exactly what a clean run stores",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        // Empty blocks after the history, so the backfill range spans several capped chunks.
        yield* Effect.promise(() => chain.node.mine(2_500))
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startFaultProxy({
              target: chain.node.httpUrl,
              seed: 7,
              faults: { serverErrorRate: 0.2, rateLimitRate: 0.1, retryAfterSeconds: 1, getLogsMaxRange: 1_000 }
            })
          ),
          (p) => Effect.promise(() => p.close())
        )
        const run = (rpcUrl: string) =>
          withIngest(
            chain,
            Effect.gen(function*() {
              yield* addAndBackfill(ALICE, chain.node.chainId)
              yield* addAndBackfill(CAROL, chain.node.chainId)
              return yield* recordSnapshot
            }),
            { rpcUrl }
          )
        const clean = yield* run(chain.node.httpUrl)
        const faulty = yield* run(proxy.url)
        expect(faulty).toEqual(clean)
        expect(clean.transfers.length).toBeGreaterThan(10)
        const faults = proxy.faultCounts()
        expect(faults.server_error ?? 0).toBeGreaterThan(0)
        expect(faults.rate_limited ?? 0).toBeGreaterThan(0)
        expect(faults.range_cap ?? 0).toBeGreaterThan(0)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "on a pruned node reports coverage gaps and backfill status partial, never guessing values",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        // Block by block: EDR's batched hardhat_mine leaves the skipped blocks without readable state.
        yield* Effect.promise(async () => {
          for (let i = 0; i < 300; i++) await chain.node.request("evm_mine", [])
        })
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => startFaultProxy({ target: chain.node.httpUrl, faults: { prunedAfterBlocks: 100 } })),
          (p) => Effect.promise(() => p.close())
        )
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            const wallet = yield* addAndBackfill(ALICE, chain.node.chainId)
            expect(wallet.backfillStatus).toBe("partial")
            const store = yield* ChainStore
            const gaps = yield* store.gapsOfWallet(wallet.id)
            // Alice's first transfers are on 2026-07-01; the node serves no state for anything in the seeded history.
            expect(gaps.length).toBeGreaterThan(0)
            for (const gap of gaps) {
              expect(gap.reason).toBe("archive_unavailable")
              expect(gap.from >= "2026-07-01").toBe(true)
            }
            expect(gaps.some((gap) => gap.from === "2026-07-01")).toBe(true)
            // The changes are still recorded, from their announcements, and say so.
            const [split] = yield* store.changesOf(chain.node.chainId, token(chain, "CRWD"))
            expect(split).toMatchObject({
              status: "active",
              source: "event_log",
              newMultiplier: 4n * WAD,
              kind: "split"
            })
            // The transfers themselves come from logs, which a pruned node still serves.
            expect((yield* recordSnapshot).transfers.length).toBe(
              chain.manifest.transfers.filter((t) => key(t.from) === key(ALICE) || key(t.to) === key(ALICE)).length
            )
          }),
          { rpcUrl: proxy.url }
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "corrects a 3-block re-org: records from the dropped blocks go, the new branch is recorded",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* addAndBackfill(ALICE, node.chainId)
            yield* recordToHead
            const fork = yield* Effect.promise(() => node.snapshot())
            const dropped = yield* Effect.promise(() => issuerCall(node, tsla, "mint", [ALICE, 3n * WAD]))
            yield* Effect.promise(() => node.mine(2))
            yield* recordToHead
            const sql = yield* SqlClient.SqlClient
            const before = yield* sql`SELECT tx_hash, provisional FROM token_transfers WHERE tx_hash = ${dropped.hash}`
            expect(before).toEqual([{ tx_hash: dropped.hash, provisional: true }])

            // The three blocks are replaced by a branch where Alice receives 7 TSLA instead.
            let replacement = ""
            yield* Effect.promise(() =>
              node.reorg(fork, {
                blocks: 3,
                replay: async (n) => {
                  replacement = (await issuerCall(n, tsla, "mint", [ALICE, 7n * WAD])).hash
                }
              })
            )
            yield* recordToHead
            expect(yield* sql`SELECT tx_hash FROM token_transfers WHERE tx_hash = ${dropped.hash}`).toEqual([])
            const now = yield* sql<{ raw: string }>`SELECT raw FROM token_transfers WHERE tx_hash = ${replacement}`
            expect(now).toEqual([{ raw: (7n * WAD).toString() }])
            const store = yield* ChainStore
            const cursor = Option.getOrThrow(yield* store.cursor(node.chainId, "recorder"))
            const headNow = yield* Effect.promise(() => node.block("latest"))
            expect([cursor.block, cursor.hash]).toEqual([headNow.number, headNow.hash])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "stages an announced change again when the re-org drops the announcement that had replaced it",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            yield* addAndBackfill(CAROL, node.chainId)
            const head = yield* Effect.promise(() => node.block("latest"))
            const first = head.timestamp + 600
            const announced = yield* Effect.promise(() =>
              issuerCall(node, tsla, "updateMultiplier", [1000500000000000000n, BigInt(first)], head.timestamp + 10)
            )
            yield* recordToHead
            const fork = yield* Effect.promise(() => node.snapshot())
            // Announced before the first took effect: on chain it replaces the first; so does the record.
            yield* Effect.promise(() =>
              issuerCall(node, tsla, "updateMultiplier", [1000900000000000000n, BigInt(head.timestamp + 900)])
            )
            yield* Effect.promise(() => node.mine(1))
            yield* recordToHead
            const store = yield* ChainStore
            expect((yield* store.pendingChanges(node.chainId)).map((c) => c.newMultiplier)).toEqual([
              1000900000000000000n
            ])

            // The branch that replaced the first announcement is dropped: the chain stages the first again.
            yield* Effect.promise(() => node.reorg(fork, { blocks: 3 }))
            yield* recordToHead
            expect(yield* store.pendingChanges(node.chainId)).toEqual([
              expect.objectContaining({
                token: key(tsla),
                status: "pending",
                oldMultiplier: WAD,
                newMultiplier: 1000500000000000000n,
                kind: "dividend",
                effectiveAt: new Date(first * 1000),
                announcedBlock: announced.block
              })
            ])
            // And it takes effect as announced, read from chain storage.
            yield* Effect.promise(async () => {
              await node.setNextBlockTimestamp(first + 5)
              await node.mine(1)
            })
            yield* recordToHead
            expect(yield* store.changesOf(node.chainId, tsla)).toEqual([
              expect.objectContaining({
                status: "active",
                source: "chain_storage",
                newMultiplier: 1000500000000000000n,
                effectiveAt: new Date(first * 1000)
              })
            ])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("recognises a token no list names by its ERC-8056 interface", () =>
    Effect.gen(function*() {
      const chain = yield* seededChain
      const { node } = chain
      const unlisted = chain.manifest.unlistedToken.address
      yield* Effect.promise(() => issuerCall(node, unlisted, "mint", [ALICE, 2n * WAD]))
      yield* withIngest(
        chain,
        Effect.gen(function*() {
          yield* addAndBackfill(ALICE, node.chainId)
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ raw: string }>`SELECT raw FROM token_transfers WHERE token_key = ${key(unlisted)}`
          expect(rows).toEqual([{ raw: (2n * WAD).toString() }])
          const [row] = yield* sql<{ listed: boolean; is_stock: boolean }>`
          SELECT listed, is_stock FROM chain_tokens WHERE address_key = ${key(unlisted)}`
          expect(row).toEqual({ listed: false, is_stock: true })
        })
      )
    }).pipe(Effect.scoped), 60_000)
})
