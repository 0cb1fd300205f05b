import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import { FxRates } from "@scaledger/db/FxRates"
import { Layer } from "effect"
import { DeliveryWorkerLive } from "../webhooks/DeliveryWorker.js"
import { WebhookSender } from "../webhooks/Sender.js"
import { WebhookConfig } from "../webhooks/WebhookConfig.js"
import { AlertMonitorLive } from "./AlertMonitor.js"

/** The alert monitor and the webhook delivery worker over their repositories; needs the secret box and config. */
export const AlertWorkers = Layer.mergeAll(AlertMonitorLive, DeliveryWorkerLive).pipe(
  Layer.provide(Layer.mergeAll(AlertSources.Default, AlertsStore.Default, WebhooksRepo.Default, FxRates.Default))
)

/** Alerts and webhooks configured from the environment; needs the `SqlClient` and the `WebhookSecretBox`. */
export const AlertsLive = AlertWorkers.pipe(Layer.provide(Layer.mergeAll(WebhookConfig.Live, WebhookSender.Live)))
