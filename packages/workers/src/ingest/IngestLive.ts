import { Backfills } from "@scaledger/db/chain/Backfills"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { PauseReads } from "@scaledger/db/chain/PauseReads"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { ReadHealthStore } from "@scaledger/db/chain/ReadHealth"
import { Layer } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { ReadHealth } from "../chain/ReadHealth.js"
import { TokenRegistryLive } from "../chain/TokenRegistry.js"
import { ViemChainClientLayer } from "../chain/ViemChainClient.js"
import { BackfillRunnerLive } from "./BackfillRunner.js"
import { IngestConfig } from "./IngestConfig.js"
import { PauseChecks, PauseChecksLive } from "./PauseChecks.js"
import { PriceRecorderLive } from "./PriceRecorder.js"
import { PriceWake } from "./PriceWake.js"
import { RecorderLive } from "./Recorder.js"
import { TokenCatalog } from "./TokenCatalog.js"

/**
 * The recorder, the backfill runner, the price recorder and the periodic pause reads over their shared services
 * (one `ReadHealth` for all); needs the chain client and its config.
 */
export const IngestWorkers = Layer.mergeAll(RecorderLive, BackfillRunnerLive, PriceRecorderLive, PauseChecksLive).pipe(
  Layer.provide(PauseChecks.Default),
  Layer.provide(Layer.mergeAll(TokenCatalog.Default, PriceWake.Default)),
  Layer.provide(TokenRegistryLive),
  Layer.provide(ReadHealth.Default),
  Layer.provide(
    Layer.mergeAll(
      ChainStore.Default,
      Backfills.Default,
      PriceRounds.Default,
      PauseReads.Default,
      ReadHealthStore.Default
    )
  )
)

/** Chain ingestion over the viem client; needs the `ChainConfig` and `IngestConfig` records. */
export const IngestFromChainConfig = IngestWorkers.pipe(Layer.provide(ViemChainClientLayer))

/** Chain ingestion configured from the environment (`RPC_URL`, `CHAIN_ID`, …). */
export const IngestLive = IngestFromChainConfig.pipe(
  Layer.provide(Layer.mergeAll(ChainConfig.Live, IngestConfig.Live))
)
