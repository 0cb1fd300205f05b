import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { FxRates } from "@scaledger/db/FxRates"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { storedDisposals, storedEvents } from "@scaledger/db/testing/StoredPages"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import type { PriceTable } from "@scaledger/domain/ledger/LedgerInput"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import {
  buildLedger,
  LedgerBuilderConfig,
  LedgerBuilderSettings,
  LedgerPrices,
  makeLedgerBuilder
} from "@scaledger/workers/ledger/LedgerBuilder"
import { positionRow } from "@scaledger/workers/ledger/PositionPlan"
import { Chunk, Clock, ConfigProvider, Context, Effect, Fiber, Layer, Stream } from "effect"

const CHAIN = 31337
const TOKENS = ["AAPL", "CRWD", "SGOV"]
const BASE_TIME = Date.UTC(2026, 0, 5) / 1000
const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
// Each test has its own account, addresses and transactions (the database is shared by the file's tests).
let W1 = ""
let W2 = ""
let EXCHANGE = ""
let TX = 0
const useAccount = (n: number) => {
  W1 = hex40(0x1000 * n + 1)
  W2 = hex40(0x1000 * n + 2)
  EXCHANGE = hex40(0x1000 * n + 3)
  TX = n * 10_000_000
}
const ZERO = hex40(0)
const tokenKey = (t: number) => hex40(0xa000 + t)

/** A round per token every 50 blocks, up to block 5,000 (rounds recorded later are "new" to a checkpoint). */
const PRICES: PriceTable = Object.fromEntries(TOKENS.map((symbol, t) => [
  symbol,
  Array.from({ length: 100 }, (_, r) => ({
    roundId: String(r + 1),
    answer: String((100 + t * 10 + (r % 7)) * 1e8),
    updatedAt: BASE_TIME + r * 50 - 1,
    feed: hex40(0xf000 + t)
  }))
]))
/** The rounds recorded so far (a test may add a late one). */
let prices = PRICES
/** Run when a build reads its prices (after it began, before its first transfers): a request arriving mid-build. */
let duringBuild: Effect.Effect<unknown, unknown> | undefined

/**
 * Transfers at blocks `from`..`to` in the bench's pattern (mints, moves between the two own addresses, sales,
 * purchases), a dividend step per token every 400 blocks; `provisional` marks them as newer than finality.
 */
const seed = (from: number, to: number, provisional = false) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key,
                                   to_key, from_address, to_address, raw, provisional)
      SELECT ${CHAIN}::int, '0x' || lpad(to_hex(${TX}::int + i), 64, '0'), 0, i, '0x' || lpad(to_hex(i), 64, '0'),
             to_timestamp(${BASE_TIME}::bigint + i), '0x' || lpad(to_hex(${0xa000}::int + (i / 10) % 3), 40, '0'), f, t, f, t,
             1000000000000000000 + i, ${provisional}::boolean
      FROM (
        SELECT i,
          CASE WHEN i % 10 < 3 THEN ${ZERO} WHEN i % 10 IN (3, 4, 5) THEN ${W1} WHEN i % 10 IN (6, 9) THEN ${EXCHANGE}
               ELSE ${W2} END AS f,
          CASE WHEN i % 10 < 3 THEN ${W1} WHEN i % 10 = 3 THEN ${W2} WHEN i % 10 IN (4, 5, 7) THEN ${EXCHANGE}
               WHEN i % 10 = 6 THEN ${W2} ELSE ${W1} END AS t
        FROM generate_series(${from}::int, ${to}::int) AS s(i)
      ) g`
    yield* sql`
      INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier, kind, status,
                                      source, block, block_time)
      SELECT ${CHAIN}::int, '0x' || lpad(to_hex(${0xa000}::int + k % 3), 40, '0'), to_timestamp(${BASE_TIME}::bigint + k * 400),
             1000000000000000000 + ((k - 1) / 3) * 1000000000000000,
             1000000000000000000 + ((k - 1) / 3 + 1) * 1000000000000000,
             'dividend', 'active', 'chain_storage', k * 400, to_timestamp(${BASE_TIME}::bigint + k * 400)
      FROM generate_series(1, ${Math.floor(to / 400)}::int) AS s(k)
      ON CONFLICT DO NOTHING`
  })

const setup = (n: number) =>
  Effect.gen(function*() {
    useAccount(n)
    const sql = yield* SqlClient.SqlClient
    const { account } = yield* (yield* AccountsRepo).findOrCreate(`incremental-${n}`)
    for (const address of [W1, W2]) {
      yield* (yield* WalletsRepo).insert({
        accountId: account.id,
        address,
        label: "",
        self: true,
        watchingFromBlock: null,
        watchingFromAt: null,
        chainId: CHAIN
      })
    }
    for (const [t, symbol] of TOKENS.entries()) {
      yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, decimals, listed, is_stock)
               VALUES (${CHAIN}, ${tokenKey(t)}, ${tokenKey(t)}, ${symbol}, 18, true, true) ON CONFLICT DO NOTHING`
    }
    return account.id
  })

/** Every stored derived record of the account, in read order. */
const snapshot = (accountId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = (table: string) =>
      Effect.map(
        sql<{ ord: string | number; row: unknown }>`SELECT ord, row FROM ${sql(table)} WHERE account_id = ${accountId}
                                                   ORDER BY ord`,
        (list) => list.map((r) => [Number(r.ord), r.row])
      )
    const [build] = yield* sql<{ report: unknown; status: string }>`SELECT report, status FROM ledger_builds
                                                                       WHERE account_id = ${accountId}`
    return JSON.stringify({
      status: build?.status,
      report: build?.report,
      positions: yield* rows("ledger_positions"),
      // Lots keep their ord when unchanged (with room between them): only their order is what reads see.
      lots: (yield* rows("ledger_lots")).map(([, row]) => row),
      disposals: (yield* storedDisposals(accountId)).map((d) => [d.ord, d.row]),
      events: (yield* storedEvents(accountId)).map((e) => [e.ord, e.row])
    })
  })

const bump = (accountId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE ledger_builds SET requested_version = requested_version + 1 WHERE account_id = ${accountId}`
  )

/** A builder that keeps its checkpoints, for the account set up with its two own addresses. */
const harness = (n: number) =>
  Effect.gen(function*() {
    prices = PRICES
    const accountId = yield* setup(n)
    yield* requestReplay(accountId)
    const builder = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
    return { accountId, builder }
  })

const Database = (database: Layer.Layer<SqlClient.SqlClient>) =>
  Layer.mergeAll(AccountsRepo.Default, WalletsRepo.Default, LedgerInputs.Default, LedgerStore.Default, FxRates.Default)
    .pipe(
      Layer.provideMerge(Layer.mergeAll(
        Layer.succeed(LedgerPrices, {
          pricesFor: () =>
            Effect.zipRight(
              Effect.orDie(Effect.suspend(() => {
                const hook = duringBuild
                duringBuild = undefined
                return hook ?? Effect.void
              })),
              Effect.sync(() => prices)
            )
        }),
        ChainConfig.layer({ rpcUrls: ["http://127.0.0.1:1"], chainId: CHAIN })
      )),
      Layer.provideMerge(database),
      Layer.provide(
        Layer.setConfigProvider(ConfigProvider.fromJson({ LEDGER_CHECKPOINTS: 4, LEDGER_MIN_INTERVAL_MS: 0 }))
      )
    )

for (
  const [name, database] of [
    ["PostgreSQL", TestDatabase.postgres],
    ["PGlite", TestDatabase.pglite]
  ] as const
) {
  layer(Database(database), { timeout: 120_000 })(`incremental ledger builds (${name})`, (it) => {
    it.effect("resume from the checkpoint and store the same records as a full rebuild", () =>
      Effect.gen(function*() {
        const { accountId, builder } = yield* harness(1)
        yield* seed(1, 1_000)
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 1, incremental: 0 })
        const first = yield* snapshot(accountId)
        expect(JSON.parse(first).status).toBe("ready")

        const fullOf = Effect.gen(function*() {
          const fresh = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
          // A replay forces a full build by a builder with no checkpoint.
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ledger_builds SET requested_version = requested_version + 1,
                       replay_version = requested_version + 1 WHERE account_id = ${accountId}`
          yield* fresh.poll
          return yield* snapshot(accountId)
        })
        const incrementalOf = Effect.gen(function*() {
          yield* bump(accountId)
          yield* builder.poll
          return yield* snapshot(accountId)
        })

        // New final blocks, crossing a dividend step (block 1,200): applied on the checkpoint.
        yield* seed(1_001, 1_250)
        const incremental = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 1, incremental: 1 })
        expect(incremental).not.toBe(first)
        expect(yield* fullOf).toBe(incremental)

        // The full rebuild (by another builder) moved the stored version past the first builder's checkpoint: it
        // must notice and rebuild fully, with the same result.
        yield* seed(1_251, 1_300)
        const afterOther = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 2, incremental: 1 })
        expect(yield* fullOf).toBe(afterOther)

        // A price round recorded late for an earlier time (the price recorder walks feed history backwards): the
        // figures of the events after it change, so the build is full again, not incremental.
        yield* incrementalOf
        expect(builder.stats).toEqual({ full: 3, incremental: 1 })
        const aapl = prices.AAPL!
        prices = {
          ...prices,
          AAPL: [...aapl.slice(0, 5), {
            ...aapl[4]!,
            roundId: "late",
            answer: "12345000000",
            updatedAt: BASE_TIME + 230
          }, ...aapl.slice(5)]
        }
        const latePrice = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 4, incremental: 1 })
        expect(latePrice).not.toBe(afterOther)
        expect(yield* fullOf).toBe(latePrice)
      }))

    it.effect("kept checkpoints are bounded by their open lots; the account built last keeps its own", () =>
      Effect.gen(function*() {
        prices = PRICES
        // Room for one lot: only the checkpoint of the account built last stays, however many lots it holds.
        const builder = yield* makeLedgerBuilder.pipe(
          Effect.provideService(LedgerBuilderSettings, { ...(yield* LedgerBuilderConfig), checkpointLots: 1 })
        )
        const first = yield* setup(11)
        yield* seed(1, 2_000)
        yield* requestReplay(first)
        yield* builder.poll
        const second = yield* setup(12)
        yield* seed(1, 2_000)
        yield* requestReplay(second)
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 2, incremental: 0 })
        expect(JSON.parse(yield* snapshot(second)).lots.length).toBeGreaterThan(1)

        // New blocks after every multiplier step so far: the second account, built last, resumes from its
        // checkpoint; the first lost its own to the bound.
        useAccount(12)
        yield* seed(2_001, 2_020)
        yield* bump(second)
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 2, incremental: 1 })
        useAccount(11)
        yield* seed(2_001, 2_020)
        yield* bump(first)
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 3, incremental: 1 })
      }))

    it.effect("an account whose first build had no transfer resumes from that empty checkpoint", () =>
      Effect.gen(function*() {
        const { accountId, builder } = yield* harness(6)
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 1, incremental: 0 })
        // The checkpoint's cursor is on nothing yet (block -1, log index -Infinity): the next build reads the
        // transfers after it, and the bound reaches the database as a number it takes.
        yield* seed(1, 300)
        yield* bump(accountId)
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 1, incremental: 1 })
        const incremental = yield* snapshot(accountId)
        expect(JSON.parse(incremental).status).toBe("ready")
        expect(JSON.parse(incremental).events.length).toBeGreaterThan(0)
        const fresh = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE ledger_builds SET requested_version = requested_version + 1,
                     replay_version = requested_version + 1 WHERE account_id = ${accountId}`
        yield* fresh.poll
        expect(yield* snapshot(accountId)).toBe(incremental)
      }))

    it.effect("a transfer of a token the build did not read ends its transfer stream before it", () =>
      Effect.gen(function*() {
        const { accountId, builder } = yield* harness(7)
        // Blocks 1-9 move the first token, 10-19 the second: a build that read only the first token's inputs
        // (the second's transfers recorded after it read them) takes the transfers before block 10 and no other.
        yield* seed(1, 30)
        const inputs = yield* LedgerInputs
        const first = { key: tokenKey(0), address: tokenKey(0), symbol: TOKENS[0]! }
        const events = Chunk.toReadonlyArray(yield* Stream.runCollect(inputs.transfers(accountId, CHAIN, [first])))
        expect(events.map((event) => event.block)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
        const all = [0, 1, 2].map((t) => ({ key: tokenKey(t), address: tokenKey(t), symbol: TOKENS[t]! }))
        expect(Chunk.size(yield* Stream.runCollect(inputs.transfers(accountId, CHAIN, all)))).toBe(30)
        // The replay `harness` asked for, built here so that no build is left pending for the file's next tests.
        yield* builder.poll
      }))

    it.effect(
      name === "PostgreSQL"
        ? "a replay gives way to a newer replay asked for while it runs: nothing stored, then the newer one"
        : "a replay asked for while a build runs lands after the build's transaction (one session), then is made",
      () =>
        Effect.gen(function*() {
          const { accountId, builder } = yield* harness(5)
          yield* seed(1, 500)
          const sql = yield* SqlClient.SqlClient
          const versions = Effect.map(
            sql<{ replay_version: string; built_version: string; status: string }>`
            SELECT replay_version, built_version, status FROM ledger_builds WHERE account_id = ${accountId}`,
            ([row]) => ({ replay: Number(row!.replay_version), built: Number(row!.built_version), status: row!.status })
          )
          const eventCount = Effect.map(
            sql<{ n: string | null }>`SELECT sum(count) AS n FROM ledger_event_pages WHERE account_id = ${accountId}`,
            ([row]) => Number(row?.n ?? 0)
          )
          const asked = (yield* versions).replay
          // A label is confirmed while the first replay runs (before its first transfers), by another session: not
          // in the build's transaction.
          const request = requestReplay(accountId).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.mapInputContext((context: Context.Context<never>) =>
              Context.omit(SqlClient.TransactionConnection)(context) as Context.Context<never>
            )
          )
          if (name === "PostgreSQL") {
            duringBuild = request
            yield* builder.poll
            expect(yield* versions).toEqual({ replay: asked + 1, built: 0, status: "pending" })
            expect(yield* eventCount).toBe(0)
            expect(builder.stats).toEqual({ full: 0, incremental: 0 })
          } else {
            // PGlite's one session is the build's until it commits: the request waits for it.
            let landed: Fiber.RuntimeFiber<void, unknown> | undefined
            duringBuild = Effect.sync(() => {
              landed = Effect.runFork(request)
            })
            yield* builder.poll
            yield* Fiber.join(landed!)
            expect(yield* versions).toEqual({ replay: asked + 1, built: asked, status: "ready" })
            expect(builder.stats).toEqual({ full: 1, incremental: 0 })
          }
          // The lease was given back: the next poll makes the newer replay.
          yield* builder.poll
          expect(yield* versions).toEqual({ replay: asked + 1, built: asked + 1, status: "ready" })
          expect(yield* eventCount).toBeGreaterThan(0)
          expect(builder.stats).toEqual({ full: name === "PostgreSQL" ? 1 : 2, incremental: 0 })
        })
    )

    it.effect("provisional blocks are rewritten by a reorg; a backfill of older blocks forces a full build", () =>
      Effect.gen(function*() {
        const { accountId, builder } = yield* harness(2)
        const sql = yield* SqlClient.SqlClient
        // After the first test's blocks: the multiplier changes are the chain's, shared by both accounts.
        yield* seed(2_001, 2_500)
        yield* builder.poll
        const fullOf = Effect.gen(function*() {
          const fresh = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
          yield* sql`UPDATE ledger_builds SET requested_version = requested_version + 1,
                       replay_version = requested_version + 1 WHERE account_id = ${accountId}`
          yield* fresh.poll
          return yield* snapshot(accountId)
        })
        const incrementalOf = Effect.gen(function*() {
          yield* bump(accountId)
          yield* builder.poll
          return yield* snapshot(accountId)
        })
        yield* seed(2_501, 2_560, true)
        const withProvisional = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 1, incremental: 1 })
        // A reorg replaces the provisional blocks 2,541..2,560 with other transfers.
        yield* sql`DELETE FROM token_transfers WHERE chain_id = ${CHAIN} AND block > 2540 AND to_key IN (${W1}, ${W2}, ${EXCHANGE})`
        yield* sql`UPDATE token_transfers SET provisional = false WHERE chain_id = ${CHAIN}`
        yield* sql`
          INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                       from_key, to_key, from_address, to_address, raw)
          VALUES (${CHAIN}, ${"0x" + "ab".repeat(32)}, 0, 2545, ${"0x" + "cd".repeat(32)}, to_timestamp(${
          BASE_TIME + 2545
        }),
                  ${tokenKey(0)}, ${EXCHANGE}, ${W2}, ${EXCHANGE}, ${W2}, 5000000000000000000)`
        const reorged = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 1, incremental: 2 })
        expect(reorged).not.toBe(withProvisional)
        expect(yield* fullOf).toBe(reorged)

        // Older blocks arriving late (a backfill behind the live recorder) are not missed.
        yield* sql`
          INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                       from_key, to_key, from_address, to_address, raw)
          VALUES (${CHAIN}, ${"0x" + "ef".repeat(32)}, 1, 2100, ${"0x" + "cd".repeat(32)}, to_timestamp(${
          BASE_TIME + 2100
        }),
                  ${tokenKey(1)}, ${EXCHANGE}, ${W1}, ${EXCHANGE}, ${W1}, 7000000000000000000)`
        const late = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 2, incremental: 2 })
        expect(late).not.toBe(reorged)
        expect(yield* fullOf).toBe(late)

        // A re-org deeper than finality rolls final blocks back with nothing recorded in their place: the applied
        // transfers it dropped are not missed either.
        yield* incrementalOf
        yield* incrementalOf
        expect(builder.stats).toEqual({ full: 3, incremental: 3 })
        yield* sql`DELETE FROM token_transfers WHERE chain_id = ${CHAIN} AND block > 2530
                     AND (from_key IN (${W1}, ${W2}) OR to_key IN (${W1}, ${W2}))`
        const rolledBack = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 4, incremental: 3 })
        expect(rolledBack).not.toBe(late)
        expect(yield* fullOf).toBe(rolledBack)
      }))

    it.effect("builds in a row from checkpoints rewrite only the lots that changed and store a full build's lots", () =>
      Effect.gen(function*() {
        // Last: its dividend steps (up to block 3,200) are the chain's, seen by every account of the file.
        const { accountId, builder } = yield* harness(3)
        const sql = yield* SqlClient.SqlClient
        yield* seed(3_001, 3_100)
        yield* builder.poll
        /** Stored lot rows in read order as reads list them, with the transaction that wrote each. */
        const storedLots = Effect.all({
          rows: (yield* LedgerStore).lots(accountId, undefined),
          writers: Effect.map(
            sql<
              { xmin: string }
            >`SELECT xmin::text AS xmin FROM ledger_lots WHERE account_id = ${accountId} ORDER BY ord`,
            (rows) => rows.map((r) => r.xmin)
          )
        })
        const storedPositions = Effect.map(
          sql<{ row: unknown }>`SELECT row FROM ledger_positions WHERE account_id = ${accountId} ORDER BY ord`,
          (rows) => rows.map((r) => r.row)
        )
        const positionWriters = Effect.map(
          sql<{ xmin: string }>`SELECT xmin::text AS xmin FROM ledger_positions WHERE account_id = ${accountId}`,
          (rows) => rows.map((r) => r.xmin)
        )
        let positionsKept = 0
        // Small steps (new lots, partial and whole sales, moves), then one crossing a dividend step (block 3,200),
        // then small steps again: each incremental, each storing the lots and positions a rebuild reports.
        const steps: Array<readonly [number, number, "few" | "step"]> = [
          [3_101, 3_103, "few"],
          [3_104, 3_112, "few"],
          [3_113, 3_205, "step"],
          [3_206, 3_207, "few"],
          [3_208, 3_216, "few"]
        ]
        for (const [from, to, rewritten] of steps) {
          const before = yield* storedLots
          const positionsBefore = new Set(yield* positionWriters)
          yield* seed(from, to)
          const incremental = builder.stats.incremental
          yield* bump(accountId)
          yield* builder.poll
          expect(builder.stats.incremental).toBe(incremental + 1)
          const after = yield* storedLots
          const expected = yield* buildLedger(accountId, CHAIN, Math.floor((yield* Clock.currentTimeMillis) / 1000))
          expect(after.rows).toEqual(JSON.parse(JSON.stringify(expected.report.lots)))
          // Position rows leave their lot ids to the lot rows, from which the one reader citing them reads them.
          expect(yield* storedPositions).toEqual(JSON.parse(JSON.stringify(expected.report.positions.map(positionRow))))
          expect(yield* (yield* LedgerStore).positionLotIds(accountId, expected.report.positions)).toEqual(
            expected.report.positions.flatMap((position) => position.lotIds)
          )
          positionsKept += (yield* positionWriters).filter((writer) => positionsBefore.has(writer)).length
          // The summary leaves out tokens' lot ids: they are the token's lot rows' ids, in order.
          const [build] = yield* sql<{ report: { tokens: ReadonlyArray<object> } }>`
            SELECT report FROM ledger_builds WHERE account_id = ${accountId}`
          expect(build!.report.tokens).toEqual(
            JSON.parse(JSON.stringify(expected.report.tokens.map(({ lotIds: _ids, ...token }) => token)))
          )
          for (const token of expected.report.tokens) {
            expect(token.lotIds).toEqual(
              (after.rows as ReadonlyArray<{ token: string; id: string }>).filter((row) => row.token === token.token)
                .map((row) => row.id)
            )
          }
          const kept = new Set(before.writers)
          const written = after.writers.filter((writer) => !kept.has(writer)).length
          if (rewritten === "few") {
            expect(written).toBeGreaterThan(0)
            expect(written).toBeLessThan(after.rows.length / 4)
          } else {
            // The step (block 3,200, SGOV's) adds a basis component to each of that token's lots.
            const stepped = after.rows.filter((row) => (row as { token: string }).token === "SGOV").length
            expect(written).toBeGreaterThanOrEqual(stepped)
          }
        }
        // Positions whose lots and figures did not change keep their stored rows.
        expect(positionsKept).toBeGreaterThan(0)
      }))

    it.effect("classifications landing after a build keep it incremental; an old one changing forces a full build", () =>
      Effect.gen(function*() {
        // After the lot test's blocks: its dividend steps stay the ones it saw.
        const { accountId, builder } = yield* harness(8)
        const sql = yield* SqlClient.SqlClient
        /** The account's transfers at blocks `from`..`to` queued for classification, or decided as the rules would. */
        const classify = (from: number, to: number, status: "pending" | "done") =>
          sql`
            INSERT INTO transfer_classifications (account_id, chain_id, tx_hash, log_index, status, type, relationship,
                                                  classified_by, confirmed)
            SELECT ${accountId}, t.chain_id, t.tx_hash, t.log_index, ${status},
              CASE WHEN ${status} = 'pending' THEN NULL WHEN t.from_key = ${ZERO} THEN 'mint'
                   WHEN t.from_key IN (${W1}, ${W2}) AND t.to_key IN (${W1}, ${W2}) THEN 'transfer.self'
                   WHEN t.from_key IN (${W1}, ${W2}) THEN 'transfer.out' ELSE 'transfer.in' END,
              CASE WHEN ${status} = 'pending' OR t.from_key = ${ZERO} THEN NULL
                   WHEN t.from_key IN (${W1}, ${W2}) AND t.to_key IN (${W1}, ${W2}) THEN 'self' ELSE 'exchange' END,
              CASE WHEN ${status} = 'pending' THEN NULL ELSE 'rule' END, ${status} = 'done'
            FROM token_transfers t
            WHERE t.chain_id = ${CHAIN} AND t.block BETWEEN ${from} AND ${to}
              AND (t.from_key IN (${W1}, ${W2}) OR t.to_key IN (${W1}, ${W2}))
            ON CONFLICT (account_id, chain_id, tx_hash, log_index) DO UPDATE SET
              status = EXCLUDED.status, type = EXCLUDED.type, relationship = EXCLUDED.relationship,
              classified_by = EXCLUDED.classified_by, confirmed = EXCLUDED.confirmed, updated_at = now()`
        const fullOf = Effect.gen(function*() {
          const fresh = yield* makeLedgerBuilder.pipe(Effect.provide(LedgerBuilderSettings.Live))
          yield* sql`UPDATE ledger_builds SET requested_version = requested_version + 1,
                       replay_version = requested_version + 1 WHERE account_id = ${accountId}`
          yield* fresh.poll
          return yield* snapshot(accountId)
        })
        const incrementalOf = Effect.gen(function*() {
          yield* bump(accountId)
          yield* builder.poll
          return yield* snapshot(accountId)
        })
        yield* seed(4_001, 4_040)
        yield* classify(4_001, 4_020, "done")
        yield* classify(4_021, 4_040, "pending")
        yield* builder.poll
        expect(builder.stats).toEqual({ full: 1, incremental: 0 })
        const first = yield* snapshot(accountId)

        // New blocks (not queued for classification yet) and the decisions of some transfers the last build applied
        // while they waited: the build resumes from the checkpoint held behind them.
        yield* seed(4_041, 4_045)
        yield* classify(4_021, 4_030, "done")
        const landed = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 1, incremental: 1 })
        expect(landed).not.toBe(first)
        expect(yield* fullOf).toBe(landed)

        // The full build above was another builder's: this one builds fully once, then resumes again.
        yield* incrementalOf
        expect(builder.stats).toEqual({ full: 2, incremental: 1 })
        yield* classify(4_031, 4_045, "done")
        const allLanded = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 2, incremental: 2 })
        expect(allLanded).not.toBe(landed)
        expect(yield* fullOf).toBe(allLanded)

        // Everything decided: the checkpoint reaches the last block. A user relabels an old sale (at or before
        // the checkpoint): the next build is full, with the new figures.
        yield* incrementalOf
        yield* incrementalOf
        expect(builder.stats).toEqual({ full: 3, incremental: 3 })
        const [sale] = yield* sql<{ tx_hash: string }>`
          SELECT tx_hash FROM token_transfers WHERE chain_id = ${CHAIN} AND block = 4005 AND from_key = ${W1}
            AND to_key = ${EXCHANGE}`
        yield* sql`UPDATE transfer_classifications SET type = 'transfer.self', relationship = 'self',
                     classified_by = 'user', confirmed = true, updated_at = now()
                   WHERE account_id = ${accountId} AND tx_hash = ${sale!.tx_hash}`
        const relabelled = yield* incrementalOf
        expect(builder.stats).toEqual({ full: 4, incremental: 3 })
        expect(relabelled).not.toBe(allLanded)
        expect(yield* fullOf).toBe(relabelled)
      }))

    it.effect("a full build that fails after writing pages leaves the stored build as it was", () =>
      Effect.gen(function*() {
        const { accountId, builder } = yield* harness(9)
        const sql = yield* SqlClient.SqlClient
        yield* seed(5_001, 8_000)
        yield* builder.poll
        const stored = yield* snapshot(accountId)
        const records = (snap: string) => {
          const { lots, positions, disposals, events } = JSON.parse(snap) as Record<string, unknown>
          return { lots, positions, disposals, events }
        }
        expect(JSON.parse(stored).status).toBe("ready")
        expect((records(stored).events as Array<unknown>).length).toBeGreaterThan(3_000)
        // A step to a zero multiplier near the end of the history: the replay fails there, after the
        // chunks before it (the transfer stream's windows start at 1/64 of the range and double) wrote its first
        // pages.
        yield* sql`
          INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier, kind,
                                          status, source, block, block_time)
          VALUES (${CHAIN}, ${tokenKey(0)}, to_timestamp(${BASE_TIME + 7_990}), 1000000000000000000, 0, 'split',
                  'active', 'chain_storage', 7990, to_timestamp(${BASE_TIME + 7_990}))`
        yield* requestReplay(accountId)
        yield* builder.poll
        const [build] = yield* sql<{ status: string; error: string | null }>`
          SELECT status, error FROM ledger_builds WHERE account_id = ${accountId}`
        expect(build!.status).toBe("failed")
        expect(build!.error).toContain("a multiplier cannot be zero")
        expect(records(yield* snapshot(accountId))).toEqual(records(stored))
        yield* sql`DELETE FROM multiplier_changes WHERE chain_id = ${CHAIN} AND block = 7990`
      }))
  })
}
