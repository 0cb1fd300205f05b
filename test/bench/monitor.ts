/**
 * `npm run bench:monitor`: what the alert monitor costs on PostgreSQL (`DATABASE_URL`, default the local server)
 * with `BENCH_ACCOUNTS` (default 500) accounts, each with a wallet holding two tokens: the pass as it was (every
 * fact read per account, run every tick), a pass with the shared facts read once and each account's own read for it
 * alone, the pass now (each kind of fact read for a batch of accounts at once), a safety pass (every account, each
 * one's held tokens kept from the pass before), a quiet tick (the watermark finds nothing
 * moved) and a tick where one account's own inputs moved (a pass over that account alone). Prints the median of
 * `BENCH_ROUNDS` (default 5) of each.
 * `BENCH_TRANSFERS` (default 0) gives each wallet that many more transfers (a tenth of a token each, bought and sold
 * in turn, on both tokens), for a pass over accounts with long histories.
 */
import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import * as Database from "@scaledger/db/Database"
import { FxRates } from "@scaledger/db/FxRates"
import { invalidateLedgers } from "@scaledger/db/ledger/LedgerBuilds"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import {
  accountFacts,
  causesOf,
  type HeldCache,
  monitorPass,
  monitorPassOf,
  PASS_BATCH,
  passDue,
  sharedFacts
} from "@scaledger/workers/alerts/AlertMonitor"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { performance } from "node:perf_hooks"
import { accountWatching } from "../support/WatchedAccounts.js"

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 500)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 0)
const CHAIN = 31337
const EXCHANGE = "0x00000000000000000000000000000000000e8c4a"
const TOKENS = ["0x00000000000000000000000000000000000aa91e", "0x00000000000000000000000000000000000c3d00"]

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    for (let i = 0; i < ROUNDS; i++) {
      const start = performance.now()
      yield* effect
      times.push(performance.now() - start)
    }
    return median(times)
  })

const main = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, listed, is_stock)
             VALUES (${CHAIN}, ${TOKENS[0]!}, ${TOKENS[0]!}, 'AAPL', true, true),
                    (${CHAIN}, ${TOKENS[1]!}, ${TOKENS[1]!}, 'CRWD', true, true)`
  for (let i = 0; i < ACCOUNTS; i++) {
    const { address } = yield* accountWatching(`bench-${i}`, `0x${(i + 1).toString(16).padStart(40, "0")}`, CHAIN)
    for (const [t, token] of TOKENS.entries()) {
      yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                              from_key, to_key, from_address, to_address, raw)
                 VALUES (${CHAIN}, ${`0x${i}`}, ${t}, 5, '0xb', '2026-11-02T00:00:00Z', ${token},
                         '0x0000000000000000000000000000000000000000', ${address},
                         '0x0000000000000000000000000000000000000000', ${address}, '1000000000000000000')`
    }
    if (TRANSFERS > 0) {
      yield* sql`INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key,
                                              from_key, to_key, from_address, to_address, raw)
                 SELECT ${CHAIN}, ${`0x${i}s`} || n, 0, 6 + n, '0xb', '2026-11-02T00:00:00Z',
                        (ARRAY[${TOKENS[0]!}, ${TOKENS[1]!}])[1 + (n / 2) % 2], side.a, side.b, side.a, side.b,
                        '100000000000000000'
                 FROM generate_series(1, ${TRANSFERS}) AS n,
                      LATERAL (SELECT CASE WHEN n % 2 = 0 THEN ${EXCHANGE} ELSE ${address} END AS a,
                                      CASE WHEN n % 2 = 0 THEN ${address} ELSE ${EXCHANGE} END AS b) AS side`
    }
  }
  yield* monitorPass
  // The pass as it was: every fact, shared ones included, read again for each account.
  const oldPass = Effect.gen(function*() {
    const store = yield* AlertsStore
    const now = Date.now()
    for (const account of yield* (yield* AlertSources).accounts) {
      const shared = yield* sharedFacts(account.reportingCurrency !== "USD")
      const facts = (yield* accountFacts([account.id])).get(account.id)!
      yield* store.sync(account.id, yield* causesOf(account, now, shared, facts), new Date(now), facts.open)
    }
  })
  const old = yield* timed(oldPass)
  // Shared facts once, each account's own facts read for it alone (a batch of one): the pass before batches.
  const perAccount = yield* timed(monitorPassOf("all", undefined, 1))
  const full = yield* timed(monitorPass)
  // The safety pass: every account, nothing moved since the last pass, so each account's held tokens are reused.
  const marks = (yield* passDue({ mark: undefined, at: 0 })).mark!.holdings
  const cache: HeldCache = new Map()
  yield* monitorPassOf("all", { marks, cache })
  const safety = yield* timed(monitorPassOf("all", { marks, cache }))
  const first = yield* passDue({ mark: undefined, at: 0 })
  const quiet = yield* timed(passDue({ mark: first.mark, at: first.now }))
  // A tick where one account's build moved (a transfer of its own): the watermark, then a pass over that account.
  const oneMoved = yield* timed(Effect.gen(function*() {
    const before = yield* passDue({ mark: undefined, at: 0 })
    yield* invalidateLedgers({ chainId: CHAIN, addresses: [`0x${(1).toString(16).padStart(40, "0")}`] })
    const due = yield* passDue({ mark: before.mark, at: before.now })
    if (due.scope === "all" || due.scope.size !== 1) return yield* Effect.dieMessage("expected one account in scope")
    yield* monitorPassOf(due.scope)
  }))
  console.log(
    `${ACCOUNTS} accounts${
      TRANSFERS > 0 ? ` of ${(TRANSFERS + 2).toLocaleString("en")} transfers each` : ""
    }: pass as it was ${old.toFixed(0)} ms (${(old / ACCOUNTS).toFixed(2)} ms per account); ` +
      `pass reading each account's facts alone ${perAccount.toFixed(0)} ms; ` +
      `pass now (facts read for ${PASS_BATCH} accounts at once) ${full.toFixed(0)} ms (${
        (full / ACCOUNTS).toFixed(2)
      } ms per account); safety pass (held ` +
      `tokens kept from the pass before) ${safety.toFixed(0)} ms; ` +
      `quiet tick (watermark only) ${quiet.toFixed(2)} ms; a tick where one account moved (the watermark twice and ` +
      `a pass over that account) ${oneMoved.toFixed(1)} ms.\nDatabase work per minute at ALERT_POLL_MS=2 s on a ` +
      `quiet record: before ${(30 * old / 1000).toFixed(1)} s (a pass every tick, when it could keep up), now ${
        ((30 * quiet + 2 * safety) / 1000).toFixed(2)
      } s (30 watermark reads and 2 safety passes)`
  )
}).pipe(
  Effect.provide(
    Layer.mergeAll(
      AccountsRepo.Default,
      WalletsRepo.Default,
      AlertSources.Default,
      AlertsStore.Default,
      FxRates.Default,
      WebhookConfig.layer({})
    ).pipe(
      Layer.provideMerge(
        Layer.unwrapScoped(
          Effect.map(
            TestDatabase.postgresUrl,
            (url) => Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
          )
        )
      )
    )
  )
)

Effect.runPromise(Effect.scoped(main).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
