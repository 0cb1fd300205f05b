/**
 * `GET /v1/basis` is written from one snapshot into a spool and streamed (`BasisBodies`): the bytes must be exactly
 * the schema-encoded record made from the stored lots and disposals, in memory and spooled to a file alike, for one
 * token and for every token; the record's errors (404, 409) come before any byte.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { BasisBodies } from "@scaledger/db/reads/BasisBody"
import { disposalView, lotView, realisedGains, type StoredReport } from "@scaledger/db/reads/LedgerViews"
import { lotAndStepWrites } from "@scaledger/db/testing/StoredLots"
import { expandedDisposals } from "@scaledger/db/testing/StoredPages"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Ledger, type LedgerEvent } from "@scaledger/domain/ledger/index"
import type { Disposal, Lot } from "@scaledger/domain/ledger/LedgerReport"
import { BasisRecord, BasisRecords } from "@scaledger/domain/LedgerApi"
import { Chunk, Effect, Either, Layer, Schema, Stream } from "effect"
import { readdirSync, readlinkSync } from "node:fs"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const BASE_TIME = Date.UTC(2024, 0, 2) / 1000
const hex = (n: number, width: number) => `0x${n.toString(16).padStart(width, "0")}`
const HOLDER = hex(0xa1, 40)
const EXCHANGE = hex(0xe1, 40)
const TOKENS = [["AAPL", hex(0xa000, 40)], ["TSLA", hex(0xa001, 40)]] as const

/**
 * Two tokens bought two at a time and sold one at a time (1,500 sales: more than one disposal page), with a dividend
 * step of each token every 1,000 blocks, so lots and sales carry income components citing the tokens' steps.
 */
const history = (): Array<LedgerEvent> => {
  const events: Array<LedgerEvent> = []
  for (let i = 1; i <= 4_500; i++) {
    const [token, tokenAddress] = TOKENS[i % 2]!
    if (i >= 1_000 && i % 1_000 < 2) {
      const step = BigInt(Math.floor(i / 1_000) - 1)
      events.push({
        kind: "multiplier",
        id: `m:${token}:${i}`,
        token,
        tokenAddress,
        from: (10n ** 18n + step * 10n ** 14n).toString(),
        to: (10n ** 18n + (step + 1n) * 10n ** 14n).toString(),
        effectiveAt: BASE_TIME + i,
        block: i,
        logIndex: -1,
        stepKind: "dividend"
      })
    }
    const sale = Math.floor(i / 2) % 3 === 2
    events.push({
      kind: "transfer",
      id: `${hex(i, 64)}:0`,
      token,
      tokenAddress,
      from: sale ? HOLDER : hex(0, 40),
      to: sale ? EXCHANGE : HOLDER,
      raw: sale ? "1000000000000000000" : "2000000000000000000",
      block: i,
      logIndex: 0,
      txHash: hex(i, 64),
      timestamp: BASE_TIME + i
    })
  }
  return events
}

const prices = Object.fromEntries(TOKENS.map(([symbol], t) => [
  symbol,
  Array.from({ length: 20 }, (_, r) => ({
    roundId: String(r + 1),
    answer: String((100 + t * 10 + r) * 1e8),
    updatedAt: BASE_TIME + r * 250 - 1,
    feed: hex(0xf000 + t, 40)
  }))
]))

/** The ledger of `history`, stored for the account as the ledger worker stores a build; answers its summary. */
const storeBuild = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const state = Either.getOrThrow(Ledger.build({
      wallets: [{ address: HOLDER, self: true }],
      country: "US",
      prices,
      events: history()
    }))
    const { disposals: _d, income: _i, lots: _l, movements: _m, positions: _p, splits: _s, ...summary } = Ledger
      .report(state, BASE_TIME + 5_000, { rows: false })
    const report = { ...summary, tokens: summary.tokens.map(({ lotIds: _ids, ...token }) => token) }
    yield* sql`INSERT INTO ledger_builds (account_id, requested_version, replay_version, lease_owner, lease_until)
               VALUES (${accountId}, 1, 1, 'me', now() + interval '1 hour')`
    const stored = yield* (yield* LedgerStore).store(accountId, "me", 1, {
      report,
      positions: [],
      lots: [],
      ...lotAndStepWrites(state),
      disposals: [...Ledger.storedDisposalRows(state)].map((row) => ({ ...Ledger.storedDisposalKeys(row), row })),
      events: []
    })
    expect(stored).toBe(true)
    return report as unknown as StoredReport
  })

/** The record as the schema encodes it, made from the store's whole lists of lots and disposals. */
const expectedRecord = (accountId: string, report: StoredReport, token: StoredReport["tokens"][number]) =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const lots = (yield* store.lots(accountId, token.token)) as ReadonlyArray<Lot>
    const disposals = (yield* expandedDisposals(accountId, token.token)) as ReadonlyArray<Disposal>
    return Schema.encodeSync(BasisRecord)({
      token: token.token,
      currency: report.currency,
      lots: lots.map(lotView),
      accruedIncomeAddedToBasis: token.accruedIncomeAddedToBasis,
      accruedIncomeAddedToBasisUsd: token.accruedIncomeAddedToBasisUsd,
      lotMatching: "fifo",
      lotScope: report.lotScope,
      disposals: disposals.map(disposalView),
      realisedGains: realisedGains(disposals)
    })
  })

const text = (body: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(body), (chunks) => Buffer.concat([...Chunk.toReadonlyArray(chunks)]).toString("utf8"))

/** The spool files this process holds open (unlinked, so their links read `…/scaledger-spool-… (deleted)`). */
const openFiles = () =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).includes("scaledger-spool-")
    } catch {
      return false
    }
  }).length

/** Runs `effect` with the temporary directory set to `dir` (where spools make their files). */
const withTmpdir = <A, E, R>(dir: string, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const previous = process.env.TMPDIR
      process.env.TMPDIR = dir
      return previous
    }),
    () => effect,
    (previous) =>
      Effect.sync(() => {
        if (previous === undefined) delete process.env.TMPDIR
        else process.env.TMPDIR = previous
      })
  )

for (const [name, database] of backends) {
  describe(name, () => {
    layer(
      Layer.provideMerge(Layer.mergeAll(AccountsRepo.Default, LedgerStore.Default, BasisBodies.Default), database),
      { timeout: 120_000 }
    )((it) => {
      it.effect("the streamed basis record is the schema-encoded record, in memory or spooled to a file", () =>
        Effect.gen(function*() {
          const { account } = yield* (yield* AccountsRepo).findOrCreate("basis")
          const report = yield* storeBuild(account.id)
          const bodies = yield* BasisBodies
          const [aapl, tsla] = report.tokens
          const expectedAapl = yield* expectedRecord(account.id, report, aapl!)
          // The history is what the record is meant to show: open lots, sales over two disposal pages, income.
          expect(expectedAapl.lots.length).toBeGreaterThan(100)
          expect(expectedAapl.disposals.length).toBe(750)
          expect(Number(expectedAapl.realisedGains.total)).not.toBe(0)
          expect(expectedAapl.accruedIncomeAddedToBasisUsd).not.toBeNull()

          const inMemory = yield* bodies.basis(account.id, "aapl")
          const written = yield* text(inMemory.body)
          expect(written).toBe(JSON.stringify(expectedAapl))
          expect(inMemory.bytes).toBe(Buffer.byteLength(written))

          // Past a memory limit of 4 KiB the record moves to a file; the same bytes come back, and the file is
          // closed once read, or once the reader stops early.
          const before = openFiles()
          const spooled = yield* bodies.basis(account.id, "AAPL", 4 * 1024)
          expect(openFiles()).toBe(before + 1)
          expect(yield* text(spooled.body)).toBe(written)
          expect(openFiles()).toBe(before)
          const abandoned = yield* bodies.basis(account.id, tsla!.tokenAddress, 4 * 1024)
          yield* Stream.runDrain(Stream.take(abandoned.body, 1))
          expect(openFiles()).toBe(before)

          // Every token's record, in the form of `BasisRecords`.
          const all = yield* bodies.basis(account.id, undefined, 4 * 1024)
          expect(yield* text(all.body)).toBe(JSON.stringify(
            Schema.encodeSync(BasisRecords)({
              currency: report.currency,
              lotMatching: "fifo",
              lotScope: report.lotScope,
              records: [expectedAapl, yield* expectedRecord(account.id, report, tsla!)]
            })
          ))
        }))

      it.effect("a token the record does not hold is not_found, and a replay under way is replay_in_progress", () =>
        Effect.gen(function*() {
          const { account } = yield* (yield* AccountsRepo).findOrCreate("basis errors")
          const bodies = yield* BasisBodies
          // No build yet: an empty record, and no token in it.
          expect(yield* text((yield* bodies.basis(account.id)).body)).toBe(
            `{"currency":"USD","lotMatching":"fifo","lotScope":"wallet","records":[]}`
          )
          yield* storeBuild(account.id)
          const before = openFiles()
          const missing = yield* Effect.flip(bodies.basis(account.id, "NOPE", 0))
          expect(missing._tag).toBe("NotFound")
          yield* requestReplay(account.id)
          const replaying = yield* Effect.flip(bodies.basis(account.id, "AAPL", 0))
          expect(replaying._tag).toBe("ReplayInProgress")
          expect(openFiles()).toBe(before)
        }))

      it.effect("a record that cannot be spooled is service_unavailable, with nothing left open", () =>
        Effect.gen(function*() {
          const { account } = yield* (yield* AccountsRepo).findOrCreate("basis spool")
          yield* storeBuild(account.id)
          const before = openFiles()
          const failed = yield* Effect.flip(
            withTmpdir("/nonexistent/scaledger", (yield* BasisBodies).basis(account.id, undefined, 0))
          )
          expect(failed._tag).toBe("ServiceUnavailable")
          expect(failed.message).toMatch(
            /^The basis record could not be written: could not write the spool file: ENOENT/
          )
          expect(openFiles()).toBe(before)
        }))
    })
  })
}
