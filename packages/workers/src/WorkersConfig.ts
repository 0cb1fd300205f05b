import { Config } from "effect"
import { chainConfig } from "./chain/ChainConfig.js"
import { ClassificationConfig } from "./classify/ClassificationWorker.js"
import { FxWorkerConfig } from "./fx/FxWorker.js"
import { ingestConfig } from "./ingest/IngestConfig.js"
import { LedgerBuilderConfig } from "./ledger/LedgerBuilder.js"
import { EdgarConfig } from "./market/EdgarHttp.js"
import { WebhookConfigFromEnv } from "./webhooks/WebhookConfig.js"

/**
 * Every setting of the workers, one section per concern, read once (by `WorkersLive` and the server's composition)
 * and handed to the layers as a plain record, as `PgClient.layerConfig` hands its record to `PgClient.layer`. Each
 * section is validated where it is declared, with the shared checks of `@scaledger/domain/ConfigValues`; an error
 * names the variable.
 *
 * Still read on their own (lists and secrets loaded by the services that use them): `TOKEN_LIST`, `FEED_LIST`
 * (`TokenRegistry`), `CONTRACT_LIST` (`ContractListLive`), `MODEL_*` (`ClassifierConfig`), `WEBHOOK_SECRET_KEY`
 * (`WebhookSecretBox`, shared with the server).
 */
export const WorkersConfig = Config.all({
  chain: chainConfig,
  ingest: ingestConfig,
  ledger: LedgerBuilderConfig,
  classification: ClassificationConfig,
  fx: FxWorkerConfig,
  edgar: EdgarConfig,
  webhooks: WebhookConfigFromEnv
})
export type WorkersConfig = Config.Config.Success<typeof WorkersConfig>
