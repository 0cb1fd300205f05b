import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { FxRates } from "@scaledger/db/FxRates"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { BackfillRunnerLive } from "@scaledger/workers/ingest/BackfillRunner"
import { PriceRecorderLive } from "@scaledger/workers/ingest/PriceRecorder"
import { RecorderLive } from "@scaledger/workers/ingest/Recorder"
import { LedgerBuilderLive, LedgerPricesLive } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import { ingestServices, type SeededChain, seededChain } from "./ChainHarness.js"

/** The seeded local chain the scenario runs on. */
export class ScenarioChain extends Context.Tag("test/ScenarioChain")<ScenarioChain, SeededChain>() {}

/** Alice, the seeded chain's main holder: AAPL with its 2026 dividend step, CRWD across its 4:1 split, F, MU. */
export const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

/**
 * The local chain scenario: the seeded chain, and the recorder, backfill runner, price recorder and ledger builder
 * as fibers over `database`, as in production. Readers (REST, MCP) are added by the test over the same database.
 */
export const ledgerScenario = (database: Layer.Layer<SqlClient.SqlClient>) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const chain = yield* seededChain
    // Blocks on top, so every seeded price round is final and recorded.
    yield* Effect.promise(async () => {
      for (let i = 0; i < 12; i++) await chain.node.request("evm_mine", [])
    })
    const config = Layer.setConfigProvider(ConfigProvider.fromJson({
      CHAIN_ID: chain.node.chainId,
      LEDGER_POLL_MS: 100,
      LEDGER_MIN_INTERVAL_MS: 100
    }))
    const services = ingestServices({
      rpcUrl: chain.node.httpUrl,
      chainId: chain.node.chainId,
      tokenListPath: chain.tokenListPath,
      ingest: { pricePollMs: 200, priceHistoryFrom: Date.UTC(2026, 5, 1) / 1000 }
    })
    const workers = Layer.mergeAll(RecorderLive, BackfillRunnerLive, PriceRecorderLive, LedgerBuilderLive).pipe(
      Layer.provide(LedgerPricesLive),
      Layer.provideMerge(services),
      Layer.provide(FxRates.Default),
      Layer.provide(database)
    )
    return Layer.mergeAll(workers, Layer.succeed(ScenarioChain, chain)).pipe(Layer.provide(config))
  }))

const retrying = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(60)))),
    Effect.orDieWith((e) => new Error(`${what}: ${String(e)}`))
  )

/**
 * Watches `address` for the account `accountName` (which must exist, e.g. made by `newKey`) and waits until its
 * backfill is complete, every seeded price round is recorded and the account's ledger build has caught up.
 */
export const watchAndSettle = (accountName: string, address: string = ALICE) =>
  Effect.gen(function*() {
    const chain = yield* ScenarioChain
    const sql = yield* SqlClient.SqlClient
    const wallets = yield* WalletsRepo
    const { id } = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(accountName)))
    // As POST /v1/wallets does: a new own address asks for a replay of the account's history.
    yield* Effect.orDie(sql.withTransaction(Effect.zipRight(
      wallets.insert({
        accountId: id,
        address,
        label: "scenario",
        self: true,
        watchingFromBlock: null,
        watchingFromAt: null,
        chainId: chain.node.chainId
      }),
      requestReplay(id)
    )))
    yield* retrying(
      "backfill",
      Effect.filterOrFail(
        wallets.find(id, address),
        (w) => Option.isSome(w) && w.value.backfillStatus === "complete",
        () => "not complete"
      )
    )
    yield* retrying(
      "price rounds",
      Effect.filterOrFail(
        sql<{ n: string }>`SELECT count(*) AS n FROM price_rounds`,
        ([row]) => Number(row!.n) >= chain.manifest.prices.length,
        () => "not recorded"
      )
    )
    yield* retrying(
      "ledger build",
      Effect.filterOrFail(
        (yield* LedgerStore).state(id),
        (state) =>
          Option.isSome(state) && state.value.builtVersion > 0 &&
          state.value.builtVersion >= state.value.requestedVersion,
        () => "not built"
      )
    )
    return id
  })
