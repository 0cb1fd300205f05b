import { Backfills, ChainStore } from "@scaledger/db"
import { Layer } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { TokenRegistryLive } from "../chain/TokenRegistry.js"
import { ViemChainClientLayer } from "../chain/ViemChainClient.js"
import { BackfillRunnerLive } from "./BackfillRunner.js"
import { IngestConfig } from "./IngestConfig.js"
import { RecorderLive } from "./Recorder.js"
import { TokenCatalog } from "./TokenCatalog.js"

/** The recorder and the backfill runner over their shared services; needs the chain client and its config. */
export const IngestWorkers = Layer.mergeAll(RecorderLive, BackfillRunnerLive).pipe(
  Layer.provide(TokenCatalog.Default),
  Layer.provide(TokenRegistryLive),
  Layer.provide(Layer.mergeAll(ChainStore.Default, Backfills.Default))
)

/** Chain ingestion configured from the environment (`RPC_URL`, `CHAIN_ID`, …). */
export const IngestLive = IngestWorkers.pipe(
  Layer.provide(ViemChainClientLayer),
  Layer.provide(Layer.mergeAll(ChainConfig.Live, IngestConfig.Live))
)
