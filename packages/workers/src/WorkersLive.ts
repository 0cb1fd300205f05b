import { Effect, Layer } from "effect"
import { AlertWorkers } from "./alerts/AlertsLive.js"
import { ChainConfig } from "./chain/ChainConfig.js"
import { ClassificationWorkers } from "./classify/ClassificationLive.js"
import { ClassificationSettings } from "./classify/ClassificationWorker.js"
import { FxWorkerLayer, FxWorkerSettings } from "./fx/FxWorker.js"
import { IngestConfig } from "./ingest/IngestConfig.js"
import { IngestFromChainConfig } from "./ingest/IngestLive.js"
import { LedgerBuilderLayer, LedgerBuilderSettings, LedgerPricesLive } from "./ledger/LedgerBuilder.js"
import { MaintenanceWorkerLayer } from "./maintenance/MaintenanceWorker.js"
import { EdgarRefreshWith } from "./market/EdgarRefresh.js"
import { WebhookSender } from "./webhooks/Sender.js"
import { WebhookConfig } from "./webhooks/WebhookConfig.js"
import { WorkersConfig } from "./WorkersConfig.js"

/**
 * Every background worker over one settings record, each a fiber owned by this layer's scope: releasing the layer
 * (shutdown) interrupts them. Workers keep their progress in tables, so a restart resumes where they stopped.
 */
export const layer = (config: WorkersConfig) =>
  Layer.mergeAll(
    IngestFromChainConfig,
    FxWorkerLayer,
    LedgerBuilderLayer.pipe(Layer.provide(LedgerPricesLive)),
    EdgarRefreshWith(config.edgar),
    AlertWorkers.pipe(Layer.provide(WebhookSender.Live)),
    ClassificationWorkers,
    MaintenanceWorkerLayer()
  ).pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(ChainConfig, config.chain),
      Layer.succeed(IngestConfig, config.ingest),
      Layer.succeed(LedgerBuilderSettings, config.ledger),
      Layer.succeed(ClassificationSettings, config.classification),
      Layer.succeed(FxWorkerSettings, config.fx),
      Layer.succeed(WebhookConfig, config.webhooks)
    ))
  )

/** `layer` with the settings read from the environment (`WorkersConfig`), once. */
export const WorkersLive = Layer.unwrapEffect(Effect.map(WorkersConfig, layer))
