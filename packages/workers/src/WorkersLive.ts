import { Layer } from "effect"
import { AlertsLive } from "./alerts/AlertsLive.js"
import { ChainConfig } from "./chain/ChainConfig.js"
import { ClassificationLive } from "./classify/ClassificationLive.js"
import { FxWorkerLive } from "./fx/FxWorker.js"
import { IngestLive } from "./ingest/IngestLive.js"
import { LedgerBuilderLive, LedgerPricesLive } from "./ledger/LedgerBuilder.js"
import { EdgarRefreshLive } from "./market/EdgarRefresh.js"

/**
 * Every background worker, each a fiber owned by this layer's scope: releasing the layer (shutdown) interrupts
 * them. Workers keep their progress in tables, so a restart resumes where they stopped.
 */
export const WorkersLive = Layer.mergeAll(
  IngestLive,
  FxWorkerLive,
  LedgerBuilderLive.pipe(Layer.provide(LedgerPricesLive), Layer.provide(ChainConfig.Live)),
  EdgarRefreshLive,
  AlertsLive,
  ClassificationLive
)
