import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { storeEvents } from "@scaledger/db/testing/StoredPages"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { sessionMinutesBetween } from "@scaledger/domain/alerts/OracleStaleness"
import { monitorPass, monitorPassOf } from "@scaledger/workers/alerts/AlertMonitor"
import { Effect, TestClock } from "effect"
import { it as vit } from "vitest"
import { accountWatching, MonitorServices } from "../support/WatchedAccounts.js"

const CHAIN = 31337
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const AAPL = "0x00000000000000000000000000000000000aa91e"
const CRWD = "0x00000000000000000000000000000000000c3d00"
const WAD = 10n ** 18n

const openAlerts = (accountId: string) =>
  Effect.map(
    Effect.flatMap(AlertsStore, (store) => store.open(accountId)),
    (alerts) => alerts.map((a) => `${a.kind}|${a.symbol}|${a.severity}`).sort()
  )

describe("regular-session minutes (NYSE calendar)", () => {
  vit("counts only regular session time, across nights, weekends and holidays", () => {
    const at = (iso: string) => new Date(iso)
    // Friday 20 November 2026, 10:00 → 10:30 New York (EST, UTC−5).
    expect(sessionMinutesBetween(at("2026-11-20T15:00:00Z"), at("2026-11-20T15:30:00Z"))).toBe(30)
    // Friday 15:59 → Monday 09:45 New York: one minute on Friday, fifteen on Monday.
    expect(sessionMinutesBetween(at("2026-11-20T20:59:00Z"), at("2026-11-23T14:45:00Z"))).toBe(16)
    // Wednesday 15:00 → Monday 09:30: the last hour of Wednesday; Thanksgiving (26 Nov) closed; Friday 27 Nov 09:30–13:00.
    expect(sessionMinutesBetween(at("2026-11-25T20:00:00Z"), at("2026-11-30T14:30:00Z"))).toBe(60 + 210)
    expect(sessionMinutesBetween(at("2026-11-23T15:00:00Z"), at("2026-11-23T14:00:00Z"))).toBe(0)
  })
})

describe("the alert monitor derives every kind from the record (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("raises and resolves oracle-paused, token-paused, degraded-read, unlabeled-transfers, stale-reference", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { account } = yield* (yield* AccountsRepo).findOrCreate("monitor")
        const { wallet } = yield* (yield* WalletsRepo).insert({
          accountId: account.id,
          address: WALLET,
          label: "",
          self: true,
          watchingFromBlock: 1,
          watchingFromAt: new Date("2026-11-01T00:00:00Z"),
          chainId: CHAIN
        })
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${CHAIN}, ${AAPL}, ${AAPL}, 'AAPL', true, true), (${CHAIN}, ${CRWD}, ${CRWD}, 'CRWD', true, true)`
        // The wallet holds 10 AAPL; its CRWD went out again (not held).
        const transfer = (tx: string, token: string, from: string, to: string, raw: bigint) =>
          sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                           from_key, to_key, from_address, to_address, raw)
              VALUES (${CHAIN}, ${tx}, 0, 5, '0xb', '2026-11-02T00:00:00Z', ${token}, ${from}, ${to}, ${from}, ${to},
                      ${String(raw)})`
        const zero = "0x0000000000000000000000000000000000000000"
        const w = WALLET.toLowerCase()
        yield* transfer("0x01", AAPL, zero, w, 10n * WAD)
        yield* transfer("0x02", CRWD, zero, w, 2n * WAD)
        yield* transfer("0x03", CRWD, w, "0x00000000000000000000000000000000000000b0", 2n * WAD)
        const round = (token: string, id: number, updatedAt: string) =>
          sql`INSERT INTO price_rounds (chain_id, feed_key, round_id, feed_address, token_key, answer, decimals,
                                        started_at, updated_at, answered_in_round)
              VALUES (${CHAIN}, ${`feed-${token}`}, ${id}, ${`feed-${token}`}, ${token}, 100, 8, ${updatedAt},
                      ${updatedAt}, ${id})`
        yield* round(AAPL, 1, "2026-11-20T15:00:00Z")
        yield* round(CRWD, 1, "2026-11-20T15:00:00Z")

        // Friday 10:30 New York: 30 session minutes without a round. Nothing yet.
        yield* TestClock.setTime(Date.parse("2026-11-20T15:30:00Z"))
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual([])
        // 11:01: AAPL's feed is stale (CRWD's too, but it is not held).
        yield* TestClock.setTime(Date.parse("2026-11-20T16:01:00Z"))
        expect(yield* monitorPass).toBe(1)
        expect(yield* openAlerts(account.id)).toEqual(["oracle-paused|AAPL|warning"])
        expect(yield* monitorPass).toBe(0)
        // A new round resolves it.
        yield* round(AAPL, 2, "2026-11-20T16:02:00Z")
        yield* TestClock.setTime(Date.parse("2026-11-20T16:03:00Z"))
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual([])
        // Over the weekend the feed is silent and nothing is raised until 60 session minutes have passed on Monday.
        yield* round(AAPL, 3, "2026-11-20T20:59:00Z")
        yield* TestClock.setTime(Date.parse("2026-11-23T14:45:00Z"))
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual([])
        yield* TestClock.setTime(Date.parse("2026-11-23T15:40:00Z"))
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual(["oracle-paused|AAPL|warning"])
        yield* round(AAPL, 4, "2026-11-23T15:41:00Z")

        // A pause of a held token (critical), and of one not held (nothing); resolved on unpause.
        const pause = (tx: string, token: string, kind: string, block: number) =>
          sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
              VALUES (${CHAIN}, ${tx}, 0, ${block}, '2026-11-23T15:00:00Z', ${token}, ${kind})`
        yield* pause("0x10", AAPL, "Paused", 10)
        yield* pause("0x11", CRWD, "Paused", 10)
        yield* pause("0x12", AAPL, "OraclePaused", 11)
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual(["oracle-paused|AAPL|warning", "token-paused|AAPL|critical"])
        yield* pause("0x13", AAPL, "Unpaused", 12)
        yield* pause("0x14", AAPL, "OracleUnpaused", 13)
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual([])

        // A backfill that ended partial; movements needing review; stale ECB rates for an SGD account.
        yield* sql`UPDATE wallets SET backfill_status = 'partial' WHERE id = ${wallet.id}`
        const needingReview = (needsReview: boolean) =>
          storeEvents(
            account.id,
            ["0xaa", "0xbb", "0xbb"].map((counterparty, i) => ({
              id: `e${i}`,
              type: "transfer.out",
              token: "AAPL",
              day: "2026-11-02",
              needsReview,
              row: { counterparty }
            }))
          )
        yield* needingReview(true)
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual(["degraded-read||warning", "unlabeled-transfers||warning"])
        const [backlog] = (yield* (yield* AlertsStore).open(account.id)).filter((a) => a.kind === "unlabeled-transfers")
        expect(backlog!.detail).toContain("3 movement(s) need review; the most (2) involve 0xbb")
        yield* sql`INSERT INTO account_settings (account_id, reporting_currency) VALUES (${account.id}, 'SGD')
                   ON CONFLICT (account_id) DO UPDATE SET reporting_currency = 'SGD'`
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toContain("stale-reference||warning")
        // Settled: everything resolves.
        yield* sql`UPDATE wallets SET backfill_status = 'complete' WHERE id = ${wallet.id}`
        yield* needingReview(false)
        yield* sql`UPDATE account_settings SET reporting_currency = 'USD'`
        yield* monitorPass
        expect(yield* openAlerts(account.id)).toEqual([])
      }))
  })
})

describe("a pass reads a batch of accounts' facts together (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("each account gets its own causes, across batches, and a batch that cannot be read is left as it was", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* TestClock.setTime(Date.parse("2026-11-20T15:30:00Z"))
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${CHAIN}, ${AAPL}, ${AAPL}, 'AAPL', true, true), (${CHAIN}, ${CRWD}, ${CRWD}, 'CRWD', true, true)`
        const zero = "0x0000000000000000000000000000000000000000"
        const accountWith = (name: string, address: string, token: string | null) =>
          Effect.gen(function*() {
            const watching = yield* accountWatching(name, address, CHAIN)
            if (token !== null) {
              yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time,
                                                      token_key, from_key, to_key, from_address, to_address, raw)
                         VALUES (${CHAIN}, ${`0x${name}`}, 0, 5, '0xb', '2026-11-02T00:00:00Z', ${token}, ${zero},
                                 ${watching.address}, ${zero}, ${watching.address}, ${String(10n * WAD)})`
            }
            return watching
          })
        // A holds AAPL, whose multiplier change is announced, and has movements to review; B holds nothing and its
        // backfill ended partial; C holds CRWD, which is paused.
        const a = yield* accountWith("batch-a", "0x00000000000000000000000000000000000000a1", AAPL)
        const b = yield* accountWith("batch-b", "0x00000000000000000000000000000000000000b1", null)
        const c = yield* accountWith("batch-c", "0x00000000000000000000000000000000000000c1", CRWD)
        yield* sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                                                   kind, status)
                   VALUES (${CHAIN}, ${AAPL}, '2026-12-01T00:00:00Z', ${String(WAD)}, ${String(2n * WAD)}, 'split',
                           'pending')`
        const review = (needsReview: boolean) =>
          storeEvents(a.id, [{
            id: "e0",
            type: "transfer.out",
            token: "AAPL",
            day: "2026-11-02",
            needsReview,
            row: {}
          }])
        yield* review(true)
        yield* sql`UPDATE wallets SET backfill_status = 'partial' WHERE id = ${b.wallet}`
        yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                   VALUES (${CHAIN}, '0xpause', 0, 6, '2026-11-03T00:00:00Z', ${CRWD}, 'Paused')`
        const all = Effect.all({ a: openAlerts(a.id), b: openAlerts(b.id), c: openAlerts(c.id) })
        const expected = {
          a: ["pending-multiplier|AAPL|info", "unlabeled-transfers||warning"],
          b: ["degraded-read||warning"],
          c: ["token-paused|CRWD|critical"]
        }

        // Batches of two: A and B read together, C alone.
        expect(yield* monitorPassOf("all", undefined, 2)).toMatchObject({ raised: 4, failed: [] })
        expect(yield* all).toEqual(expected)
        // One batch of all three: nothing new, nothing resolved.
        expect(yield* monitorPassOf("all")).toMatchObject({ raised: 0, failed: [] })
        expect(yield* all).toEqual(expected)

        // A's review settled: only A's backlog alert resolves.
        yield* review(false)
        const sources = yield* AlertSources
        // A batch whose facts cannot all be read: every account of it reported failed, and nothing resolved.
        const unreadable = {
          ...sources,
          reviewBacklog: () => Effect.fail(new SqlError({ cause: "connection lost", message: "connection lost" }))
        } as unknown as AlertSources
        const failedPass = yield* monitorPassOf("all", undefined, 2).pipe(
          Effect.provideService(AlertSources, unreadable)
        )
        expect([...failedPass.failed].sort()).toEqual([a.id, b.id, c.id].sort())
        expect(yield* all).toEqual(expected)
        // A defect reading them (a row the service cannot take) fails the batch alike, not the pass.
        const broken = { ...sources, held: () => Effect.die(new Error("a balance that is not a number")) }
        const brokenPass = yield* monitorPassOf("all").pipe(
          Effect.provideService(AlertSources, broken as unknown as AlertSources)
        )
        expect([...brokenPass.failed].sort()).toEqual([a.id, b.id, c.id].sort())
        expect(yield* all).toEqual(expected)
        expect(yield* monitorPassOf("all", undefined, 2)).toMatchObject({ raised: 0, failed: [] })
        expect(yield* all).toEqual({ ...expected, a: ["pending-multiplier|AAPL|info"] })
      }))
  })
})

describe("a feed's silence is measured by the chain's clock (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("a chain whose clock is months behind this machine's raises nothing for a fresh round", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4242
        const token = "0x00000000000000000000000000000000000bee01"
        const zero = "0x0000000000000000000000000000000000000000"
        const watching = yield* accountWatching("chain-clock", "0x00000000000000000000000000000000000000d1", chain)
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${chain}, ${token}, ${token}, 'MU', true, true)`
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${chain}, '0xc1', 0, 5, '0xb', '2026-09-01T13:00:00Z', ${token}, ${zero},
                           ${watching.address}, ${zero}, ${watching.address}, ${String(3n * WAD)})`
        const round = (id: number, answer: number, updatedAt: string) =>
          sql`INSERT INTO price_rounds (chain_id, feed_key, round_id, feed_address, token_key, answer, decimals,
                                        started_at, updated_at, answered_in_round)
              VALUES (${chain}, 'feed-mu', ${id}, 'feed-mu', ${token}, ${answer}, 8, ${updatedAt}, ${updatedAt}, ${id})`
        const block = (n: number, time: string) =>
          sql`INSERT INTO chain_blocks (chain_id, number, hash, block_time) VALUES (${chain}, ${n}, ${`0x${n}`}, ${time})`
        // This machine's clock: the end of November. The chain's: Tuesday 1 September, 10:55 New York.
        yield* TestClock.setTime(Date.parse("2026-11-30T12:00:00Z"))
        yield* round(1, 100, "2026-09-01T14:50:00Z")
        yield* block(10, "2026-09-01T14:55:00Z")
        yield* monitorPass
        expect(yield* openAlerts(watching.id)).toEqual([])
        // 70 session minutes later on the chain, with only a round answering zero since: the feed is silent.
        yield* round(2, 0, "2026-09-01T15:30:00Z")
        yield* block(11, "2026-09-01T16:00:00Z")
        yield* monitorPass
        expect(yield* openAlerts(watching.id)).toEqual(["oracle-paused|MU|warning"])
        const [alert] = yield* Effect.flatMap(AlertsStore, (store) => store.open(watching.id))
        expect(alert!.raisedAt.toISOString()).toBe("2026-09-01T16:00:00.000Z")
        // A round with a price resolves it.
        yield* round(3, 101, "2026-09-01T16:01:00Z")
        yield* block(12, "2026-09-01T16:02:00Z")
        yield* monitorPass
        expect(yield* openAlerts(watching.id)).toEqual([])
      }))

    it.effect("a round stamped later than both the chain's clock and now does not make a silent feed look fresh", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4243
        const token = "0x00000000000000000000000000000000000bee02"
        const zero = "0x0000000000000000000000000000000000000000"
        const watching = yield* accountWatching("future-round", "0x00000000000000000000000000000000000000d2", chain)
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${chain}, ${token}, ${token}, 'MU', true, true)`
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${chain}, '0xc2', 0, 5, '0xb', '2026-09-01T13:00:00Z', ${token}, ${zero},
                           ${watching.address}, ${zero}, ${watching.address}, ${String(3n * WAD)})`
        const round = (id: number, answer: number, updatedAt: string) =>
          sql`INSERT INTO price_rounds (chain_id, feed_key, round_id, feed_address, token_key, answer, decimals,
                                        started_at, updated_at, answered_in_round)
              VALUES (${chain}, 'feed-mu2', ${id}, 'feed-mu2', ${token}, ${answer}, 8, ${updatedAt}, ${updatedAt}, ${id})`
        const block = (n: number, time: string) =>
          sql`INSERT INTO chain_blocks (chain_id, number, hash, block_time) VALUES (${chain}, ${n}, ${`0x${n}`}, ${time})`
        yield* TestClock.setTime(Date.parse("2026-09-01T16:00:05Z"))
        // The last real round at 10:50 New York; then one the feed stamped a year ahead, which no block could carry
        // (the exposure and the ledger, reading rounds at or before a time, do not use it either).
        yield* round(1, 100, "2026-09-01T14:50:00Z")
        yield* round(2, 100, "2027-09-01T14:50:00Z")
        // 70 session minutes of silence by the chain's clock.
        yield* block(10, "2026-09-01T16:00:00Z")
        yield* monitorPass
        expect(yield* openAlerts(watching.id)).toEqual(["oracle-paused|MU|warning"])
        const [alert] = yield* Effect.flatMap(AlertsStore, (store) => store.open(watching.id))
        expect(alert!.detail).toContain("since 2026-09-01T14:50:00.000Z")
        // A round the price recorder stored ahead of the chain's recorded blocks, but not of this machine's clock,
        // is the feed speaking: it resolves the alert.
        yield* TestClock.setTime(Date.parse("2026-09-01T16:02:00Z"))
        yield* round(3, 101, "2026-09-01T16:01:00Z")
        yield* monitorPass
        expect(yield* openAlerts(watching.id)).toEqual([])
      }))
  })
})

describe("a dividend step recorded after its alert window (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("is still told once: raised, then resolved by its age, never raised again", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4343
        const token = "0x00000000000000000000000000000000000bee02"
        const zero = "0x0000000000000000000000000000000000000000"
        const watching = yield* accountWatching("late-step", "0x00000000000000000000000000000000000000d2", chain)
        const incomeAlerts = Effect.map(
          Effect.flatMap(AlertsStore, (store) =>
            store.list(watching.id, { kind: "accrued-income" }, { beforeSeq: undefined, limit: 10 })),
          (page) =>
            page.alerts.map((a) => a.resolvedAt === null ? "open" : "resolved")
        )
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${chain}, ${token}, ${token}, 'AAPL', true, true)`
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${chain}, '0xd1', 0, 5, '0xb', '2026-11-02T00:00:00Z', ${token}, ${zero},
                           ${watching.address}, ${zero}, ${watching.address}, ${String(10n * WAD)})`
        // The step took effect on 3 November; the recorder, down until the 12th, records it only then.
        yield* sql`INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier,
                                                   kind, status, source, block, block_time)
                   VALUES (${chain}, ${token}, '2026-11-03T14:00:00Z', ${String(WAD)}, ${String(WAD + WAD / 100n)},
                           'dividend', 'active', 'chain_storage', 50, '2026-11-03T14:00:00Z')`
        yield* sql`INSERT INTO chain_blocks (chain_id, number, hash, block_time)
                   VALUES (${chain}, 60, '0x60', '2026-11-12T10:00:00Z')`
        yield* TestClock.setTime(Date.parse("2026-11-12T10:00:05Z"))
        yield* monitorPass
        expect(yield* incomeAlerts).toEqual(["open"])
        yield* monitorPass
        expect(yield* incomeAlerts).toEqual(["resolved"])
        yield* monitorPass
        expect(yield* incomeAlerts).toEqual(["resolved"])
      }))
  })
})

describe("a pause whose Paused event is recorded after the read that first showed it (PGlite)", () => {
  layer(MonitorServices, { timeout: 60_000 })((it) => {
    it.effect("is one alert, kept open, not resolved and raised again", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const chain = 4444
        const token = "0x00000000000000000000000000000000000bee03"
        const zero = "0x0000000000000000000000000000000000000000"
        const watching = yield* accountWatching("pause-late-event", "0x00000000000000000000000000000000000000d3", chain)
        const pauseAlerts = Effect.map(
          Effect.flatMap(AlertsStore, (store) =>
            store.list(watching.id, { kind: "token-paused" }, { beforeSeq: undefined, limit: 10 })),
          (page) =>
            page.alerts.map((a) => [a.id, a.resolvedAt === null ? "open" : "resolved"])
        )
        yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
                   VALUES (${chain}, ${token}, ${token}, 'AAPL', true, true)`
        yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                                from_key, to_key, from_address, to_address, raw)
                   VALUES (${chain}, '0xe1', 0, 5, '0xb', '2026-11-02T00:00:00Z', ${token}, ${zero},
                           ${watching.address}, ${zero}, ${watching.address}, ${String(WAD)})`
        yield* TestClock.setTime(Date.parse("2026-11-20T15:30:00Z"))
        // The recorder's paused() read at block 941 shows a pause no recorded event explains.
        yield* sql`INSERT INTO token_pause_reads (chain_id, token_key, block, block_time, paused)
                   VALUES (${chain}, ${token}, 941, '2026-11-20T15:00:00Z', true)`
        yield* monitorPass
        const first = yield* pauseAlerts
        expect(first.map(([, state]) => state)).toEqual(["open"])
        // The backfill then records the Paused event of block 287 that started it.
        yield* sql`INSERT INTO token_pause_events (chain_id, tx_hash, log_index, block, block_time, token_key, kind)
                   VALUES (${chain}, '0xpause287', 0, 287, '2026-11-10T00:00:00Z', ${token}, 'Paused')`
        yield* monitorPass
        expect(yield* pauseAlerts).toEqual(first)
      }))
  })
})
