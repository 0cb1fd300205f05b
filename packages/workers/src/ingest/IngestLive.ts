import { Backfills, ChainStore, PriceRounds } from "@scaledger/db"
import { Layer } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { TokenRegistryLive } from "../chain/TokenRegistry.js"
import { ViemChainClientLayer } from "../chain/ViemChainClient.js"
import { BackfillRunnerLive } from "./BackfillRunner.js"
import { IngestConfig } from "./IngestConfig.js"
import { PriceRecorderLive } from "./PriceRecorder.js"
import { PriceWake } from "./PriceWake.js"
import { RecorderLive } from "./Recorder.js"
import { TokenCatalog } from "./TokenCatalog.js"

/** The recorder, the backfill runner and the price recorder over their shared services; needs the chain client and its config. */
export const IngestWorkers = Layer.mergeAll(RecorderLive, BackfillRunnerLive, PriceRecorderLive).pipe(
  Layer.provide(Layer.mergeAll(TokenCatalog.Default, PriceWake.Default)),
  Layer.provide(TokenRegistryLive),
  Layer.provide(Layer.mergeAll(ChainStore.Default, Backfills.Default, PriceRounds.Default))
)

/** Chain ingestion configured from the environment (`RPC_URL`, `CHAIN_ID`, …). */
export const IngestLive = IngestWorkers.pipe(
  Layer.provide(ViemChainClientLayer),
  Layer.provide(Layer.mergeAll(ChainConfig.Live, IngestConfig.Live))
)
