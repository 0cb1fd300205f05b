import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { PauseReads } from "@scaledger/db/chain/PauseReads"
import { ReadHealthStore } from "@scaledger/db/chain/ReadHealth"
import { FxRates } from "@scaledger/db/FxRates"
import { invalidateLedgers } from "@scaledger/db/ledger/LedgerBuilds"
import { MarketReads } from "@scaledger/db/market/MarketReads"
import { SettingsRepo } from "@scaledger/db/Settings"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import {
  AllEndpointsFailed,
  ContractReverted,
  RpcRangeTooLarge,
  RpcRateLimited,
  RpcTimeout,
  StateUnavailable
} from "@scaledger/domain/chain/ChainErrors"
import {
  afterPass,
  type HeldCache,
  monitorPass,
  monitorPassOf,
  passDue,
  type PassScope
} from "@scaledger/workers/alerts/AlertMonitor"
import { readFailureCause } from "@scaledger/workers/chain/ReadHealth"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { Effect, Layer, Option, TestClock } from "effect"
import { it as vit } from "vitest"
import { accountWatching } from "../support/WatchedAccounts.js"

const CHAIN = 31337
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const AAPL = "0x00000000000000000000000000000000000aa91e"

const Services = Layer.mergeAll(
  AlertSources.Default,
  AlertsStore.Default,
  FxRates.Default,
  AccountsRepo.Default,
  WalletsRepo.Default,
  PauseReads.Default,
  MarketReads.Default,
  ReadHealthStore.Default,
  SettingsRepo.Default,
  WebhookConfig.layer({ monitorSafetyPollMs: 30_000 })
).pipe(Layer.provideMerge(TestDatabase.pglite))

/** An account watching one address on the test chain. */
const accountWith = (name: string, address: string) => accountWatching(name, address, CHAIN)

const allAlerts = (accountId: string, kind: "degraded-read" | "token-paused") =>
  Effect.map(
    Effect.flatMap(AlertsStore, (store) => store.list(accountId, { kind }, { beforeSeq: undefined, limit: 50 })),
    (page) => page.alerts.map((a) => ({ cause: a.causeKey, open: a.resolvedAt === null })).reverse()
  )

describe("which failures are chain reads past the retry budget", () => {
  vit("classifies by the transport's final error", () => {
    const limited = new RpcRateLimited({ endpoint: "a", method: "eth_call", message: "429" })
    const timeout = new RpcTimeout({ endpoint: "a", method: "eth_call", timeoutMs: 1, message: "slow" })
    const all = (lastError: RpcRateLimited | RpcTimeout) =>
      new AllEndpointsFailed({ endpoints: ["a"], method: "eth_call", attempts: 3, lastError, message: "x" })
    expect(readFailureCause(all(limited))).toEqual(Option.some("rate_limited"))
    expect(readFailureCause(all(timeout))).toEqual(Option.some("unreachable"))
    expect(readFailureCause(new RpcRangeTooLarge({ fromBlock: 1, toBlock: 1, message: "cap" }))).toEqual(
      Option.some("range")
    )
    // Not outages: pruned state (a coverage gap), a revert, a database error, nothing at all.
    expect(readFailureCause(new StateUnavailable({ method: "eth_call", block: 1, endpoint: "a", message: "pruned" })))
      .toEqual(Option.none())
    expect(readFailureCause(new ContractReverted({ address: "0x1", functionName: "paused", message: "revert" })))
      .toEqual(Option.none())
    expect(readFailureCause({ _tag: "SqlError", message: "db" })).toEqual(Option.none())
    expect(readFailureCause(undefined)).toEqual(Option.none())
  })
})

describe("degraded-read, pause reads and the monitor's watermark (PGlite)", () => {
  layer(Services, { timeout: 60_000 })((it) => {
    it.effect("raises degraded-read once per cause from chain_read_health, resolves it when reads work", () =>
      Effect.gen(function*() {
        const health = yield* ReadHealthStore
        const account = yield* accountWith("health", WALLET)
        const set = (status: "ok" | "degraded", cause: "unreachable" | "rate_limited" | null, since: string) =>
          health.set({ chainId: CHAIN, reader: "recorder", status, cause, error: cause, since: new Date(since) })

        yield* set("degraded", "unreachable", "2026-11-23T10:00:00Z")
        expect(yield* monitorPass).toBe(1)
        expect(yield* monitorPass).toBe(0)
        // Still unreachable, noted again later: the same cause, nothing new.
        yield* set("degraded", "unreachable", "2026-11-23T10:05:00Z")
        expect(yield* monitorPass).toBe(0)
        // Now rate limited: another cause.
        yield* set("degraded", "rate_limited", "2026-11-23T10:10:00Z")
        expect(yield* monitorPass).toBe(1)
        yield* set("ok", null, "2026-11-23T10:20:00Z")
        yield* monitorPass
        expect(yield* allAlerts(account.id, "degraded-read")).toEqual([
          { cause: `degraded-read:chain:${CHAIN}:recorder:unreachable`, open: false },
          { cause: `degraded-read:chain:${CHAIN}:recorder:rate_limited`, open: false }
        ])
        // A new outage after the end is a new alert.
        yield* set("degraded", "unreachable", "2026-11-23T11:00:00Z")
        expect(yield* monitorPass).toBe(1)
        yield* set("ok", null, "2026-11-23T11:01:00Z")
        yield* monitorPass
        expect((yield* allAlerts(account.id, "degraded-read")).filter((a) => a.open)).toEqual([])
      }))

    it.effect("stores a paused() read only where it changes the record; a read outranks the events of its block", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const reads = yield* PauseReads
        const event = (tx: string, kind: string, block: number, logIndex = 0) =>
          sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
              VALUES (${CHAIN}, ${tx}, ${logIndex}, ${block}, '2026-11-23T15:00:00Z', ${AAPL}, ${kind})`
        const read = (block: number, paused: boolean) =>
          reads.record(CHAIN, [{ token: AAPL, block, time: new Date("2026-11-23T15:00:00Z"), paused }])

        expect(yield* reads.stateAt(CHAIN, AAPL, 100)).toBe(false)
        expect(yield* read(5, false)).toEqual([])
        yield* event("0x20", "Paused", 10)
        yield* event("0x21", "Unpaused", 10, 1)
        expect(yield* reads.stateAt(CHAIN, AAPL, 10)).toBe(false)
        expect(yield* reads.stateAt(CHAIN, AAPL, 9)).toBe(false)
        // Paused at block 10 after all (the issuer-wide switch): the read at 10 outranks its Unpaused event.
        expect(yield* read(10, true)).toHaveLength(1)
        expect(yield* reads.stateAt(CHAIN, AAPL, 10)).toBe(true)
        expect(yield* reads.stateAt(CHAIN, AAPL, 50)).toBe(true)
        // Read again, unchanged: nothing stored.
        expect(yield* read(20, true)).toEqual([])
        yield* event("0x22", "Unpaused", 30)
        expect(yield* reads.stateAt(CHAIN, AAPL, 30)).toBe(false)
        // A re-org below block 10 drops the read.
        yield* reads.rollbackAbove(CHAIN, 9)
        expect(yield* reads.stateAt(CHAIN, AAPL, 10)).toBe(false)
        yield* sql`DELETE FROM token_pause_events`
      }))

    it.effect("the pause in force now (positions) counts events and reads alike, from its first paused fact", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const reads = yield* PauseReads
        const market = yield* MarketReads
        const event = (tx: string, kind: string, block: number) =>
          sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
              VALUES (${CHAIN}, ${tx}, 0, ${block}, ${new Date(Date.UTC(2026, 10, 23, 15, 0, block))}, ${AAPL},
                      ${kind})`
        const read = (block: number, paused: boolean) =>
          reads.record(CHAIN, [{ token: AAPL, block, time: new Date(Date.UTC(2026, 10, 23, 15, 0, block)), paused }])
        const now = () => Effect.map(market.currentPauses([AAPL.toUpperCase().replace("0X", "0x")]), (m) => m.get(AAPL))

        expect(yield* now()).toBeUndefined()
        // Paused issuer-wide before any event: only a read shows it, with no transaction.
        yield* read(5, true)
        expect(yield* now()).toMatchObject({ block: 5, txHash: null })
        // A Paused event inside that pause does not move its start.
        yield* event("0x30", "Paused", 8)
        expect(yield* now()).toMatchObject({ block: 5, txHash: null })
        yield* event("0x31", "Unpaused", 12)
        expect(yield* now()).toBeUndefined()
        // A new pause by event starts at its own block with its transaction.
        yield* event("0x32", "Paused", 20)
        expect(yield* now()).toMatchObject({ block: 20, txHash: "0x32" })
        // A read of false ends it even without an Unpaused event.
        yield* read(25, false)
        expect(yield* now()).toBeUndefined()
        yield* sql`DELETE FROM token_pause_events`
        yield* sql`DELETE FROM token_pause_reads`
      }))

    it.effect("a full pass runs when the watermark moves or the safety interval passed, not on every tick", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(1_000_000)
        const first = yield* passDue({ mark: undefined, at: 0 })
        expect(first.due).toBe(true)
        const last = { mark: first.mark, at: first.now }
        // Nothing changed: no pass.
        expect((yield* passDue(last)).due).toBe(false)
        // A new block or price round alone changes no record-driven cause.
        yield* sql`INSERT INTO chain_blocks (chain_id, number, hash, parent_hash, block_time)
                   VALUES (${CHAIN}, 999, '0xb', '0xa', now())`
        expect((yield* passDue(last)).due).toBe(false)
        // A pause read, a pause event, a change of chain read health: a pass.
        yield* (yield* PauseReads).record(CHAIN, [{ token: AAPL, block: 50, time: new Date(), paused: true }])
        const afterRead = yield* passDue(last)
        expect(afterRead.due).toBe(true)
        const settled = { mark: afterRead.mark, at: afterRead.now }
        expect((yield* passDue(settled)).due).toBe(false)
        yield* (yield* ReadHealthStore).set({
          chainId: CHAIN,
          reader: "prices",
          status: "degraded",
          cause: "range",
          error: null,
          since: new Date()
        })
        expect((yield* passDue(settled)).due).toBe(true)
        // Time alone: after the safety interval a pass runs anyway (a feed gone silent changes no row).
        const quiet = yield* passDue({ mark: undefined, at: 0 })
        const now = { mark: quiet.mark, at: quiet.now }
        yield* TestClock.adjust("29 seconds")
        expect((yield* passDue(now)).due).toBe(false)
        yield* TestClock.adjust("1 second")
        expect((yield* passDue(now)).due).toBe(true)
      }))

    it.effect("a pass covers every account when shared facts move, else only the accounts whose own inputs moved", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(5_000_000)
        const a = yield* accountWith("scope-a", "0x00000000000000000000000000000000000000a1")
        const b = yield* accountWith("scope-b", "0x00000000000000000000000000000000000000b1")
        const scopeOf = (due: { readonly due: boolean; readonly scope: PassScope }) =>
          !due.due ? "none" : due.scope === "all" ? "all" : [...due.scope].sort()

        const first = yield* passDue({ mark: undefined, at: 0 })
        expect(scopeOf(first)).toBe("all")
        let state = afterPass({ mark: undefined, at: 0 }, first, [])
        expect(scopeOf(yield* passDue(state))).toBe("none")

        // A transfer to A's wallet asks for A's build: A alone.
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${CHAIN}, '0xscope1', 0, 7, '0xb', now(), ${AAPL},
                           '0x0000000000000000000000000000000000000000', ${a.address},
                           '0x0000000000000000000000000000000000000000', ${a.address}, '1000')`
        yield* invalidateLedgers({ chainId: CHAIN, addresses: [a.address] })
        const transferred = yield* passDue(state)
        expect(scopeOf(transferred)).toEqual([a.id])
        state = afterPass(state, transferred, [])
        // B's backfill ending partial, then B's settings: B alone.
        yield* sql`UPDATE wallets SET backfill_status = 'partial' WHERE id = ${b.wallet}`
        const partial = yield* passDue(state)
        expect(scopeOf(partial)).toEqual([b.id])
        // A scoped pass reads and syncs only the accounts in scope: B's degraded-read, not A's (also partial now).
        yield* sql`UPDATE wallets SET backfill_status = 'partial' WHERE id = ${a.wallet}`
        // (The chain read health the test before left degraded is a cause for both.)
        expect((yield* monitorPassOf(new Set([b.id]))).failed).toEqual([])
        expect(yield* allAlerts(a.id, "degraded-read")).toEqual([])
        expect(yield* allAlerts(b.id, "degraded-read")).toContainEqual({
          cause: `degraded-read:backfill:${b.wallet}:partial`,
          open: true
        })
        state = afterPass(state, yield* passDue(state), [])
        yield* (yield* SettingsRepo).put(b.id, { country: "DE", reportingCurrency: "EUR" })
        expect(scopeOf(yield* passDue(state))).toEqual([b.id])
        state = afterPass(state, yield* passDue(state), [])

        // An account whose pass failed is in the next tick's scope though nothing of it moved.
        const retry = afterPass(state, { scope: new Set([a.id]), mark: state.mark, now: 5_000_000 }, [a.id])
        expect(scopeOf(yield* passDue(retry))).toEqual([a.id])
        // A scoped pass leaves the safety clock where the last full pass set it.
        expect(retry.at).toBe(state.at)

        // A fact every account shares (a multiplier change): every account.
        yield* sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                                                   kind, status)
                   VALUES (${CHAIN}, ${AAPL}, now(), '1000000000000000000', '1010000000000000000', 'dividend',
                           'pending')`
        expect(scopeOf(yield* passDue(state))).toBe("all")
        yield* sql`DELETE FROM multiplier_changes`
        yield* sql`DELETE FROM token_transfers WHERE tx_hash = '0xscope1'`
      }))

    it.effect("held tokens are read again when the account's mark moved, and reused while it stays the same", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const health = yield* ReadHealthStore
        // No chain read health cause from the tests before: only token-paused is looked at here.
        yield* health.set({
          chainId: CHAIN,
          reader: "prices",
          status: "ok",
          cause: null,
          error: null,
          since: new Date()
        })
        yield* health.set({
          chainId: CHAIN,
          reader: "recorder",
          status: "ok",
          cause: null,
          error: null,
          since: new Date()
        })
        const { address, id } = yield* accountWith("held-cache", "0x00000000000000000000000000000000000000c1")
        const account = { id }
        const cache: HeldCache = new Map()
        const marks = () => Effect.map(passDue({ mark: undefined, at: 0 }), (due) => due.mark!.holdings)
        const paused = Effect.map(allAlerts(account.id, "token-paused"), (alerts) => alerts.filter((a) => a.open))
        const before = yield* marks()
        yield* monitorPassOf(new Set([account.id]), { marks: before, cache })
        expect(cache.get(account.id)).toEqual({ mark: before.get(account.id), held: [] })

        // AAPL arrives and is paused. Under the mark the held tokens were read with, they are taken from the cache
        // (a transfer always moves the mark in the record; this one is written without, to show the reuse).
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${CHAIN}, '0xheld1', 0, 8, '0xb', now(), ${AAPL},
                           '0x0000000000000000000000000000000000000000', ${address},
                           '0x0000000000000000000000000000000000000000', ${address}, '1000')`
        yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                   VALUES (${CHAIN}, '0xheld2', 0, 8, now(), ${AAPL}, 'Paused')`
        yield* monitorPassOf(new Set([account.id]), { marks: before, cache })
        expect(yield* paused).toEqual([])
        // A build of the account, asked for by a token (a price round) and stored, moves its mark but not its
        // holdings mark: nothing it holds changed.
        const accountMark = (yield* passDue({ mark: undefined, at: 0 })).mark!.accounts.get(account.id)
        yield* invalidateLedgers({ chainId: CHAIN, tokens: [AAPL] })
        yield* sql`UPDATE ledger_builds SET built_version = requested_version WHERE account_id = ${account.id}`
        const built = (yield* passDue({ mark: undefined, at: 0 })).mark!
        expect(built.accounts.get(account.id)).not.toBe(accountMark)
        expect(built.holdings.get(account.id)).toBe(before.get(account.id))
        // The build the transfer asks for moves the mark: read again, AAPL held, the pause raised.
        yield* invalidateLedgers({ chainId: CHAIN, addresses: [address] })
        const after = yield* marks()
        expect(after.get(account.id)).not.toBe(before.get(account.id))
        yield* monitorPassOf(new Set([account.id]), { marks: after, cache })
        expect((yield* paused).length).toBe(1)
        expect(cache.get(account.id)?.held.map((token) => [token.tokenKey, token.balance])).toEqual([[AAPL, "1000"]])
        yield* sql`DELETE FROM token_pause_events WHERE tx_hash = '0xheld2'`
        yield* sql`DELETE FROM token_transfers WHERE tx_hash = '0xheld1'`
      }))
  })
})
