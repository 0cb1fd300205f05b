import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { InvalidWebhookUrlError, NotFoundError, UnknownAlertKindError } from "../Errors.js"
import { AlertList, AlertListParams } from "./Alert.js"
import {
  CreatedWebhookEndpoint,
  CreateWebhook,
  UpdateWebhook,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookList,
  WebhookListParams,
  WebhookPath
} from "./Webhook.js"

export class AlertsGroup extends HttpApiGroup.make("alerts")
  .add(
    HttpApiEndpoint.get("list", "/alerts")
      .setUrlParams(AlertListParams)
      .addSuccess(AlertList)
      .addError(UnknownAlertKindError)
      .annotate(
        OpenApi.Description,
        "The account's alerts, newest first, filtered by `severity`, `kind` and `open`. The portfolio's `alerts` " +
          "are the open ones of the same store."
      )
  )
  .annotate(OpenApi.Title, "Alerts")
{}

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .setUrlParams(WebhookListParams)
      .addSuccess(WebhookList)
      .annotate(OpenApi.Description, "The account's endpoints in order of creation, with their failure counts.")
  )
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(CreateWebhook)
      .addSuccess(CreatedWebhookEndpoint, { status: 201 })
      .addError(UnknownAlertKindError)
      .addError(InvalidWebhookUrlError)
      .annotate(
        OpenApi.Description,
        "Registers an HTTPS endpoint for alert deliveries. The answer holds the signing secret, shown only here."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/deliveries")
      .addSuccess(WebhookDeliveryList)
      .annotate(OpenApi.Description, "The account's last 50 delivery attempts, newest first.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhooks/:id")
      .setPath(WebhookPath)
      .setPayload(UpdateWebhook)
      .addSuccess(WebhookEndpoint)
      .addError(UnknownAlertKindError)
      .addError(InvalidWebhookUrlError)
      .addError(NotFoundError)
      .annotate(
        OpenApi.Description,
        "Changes the url, description, kinds or enabled state. `{ \"enabled\": true }` re-enables a disabled " +
          "endpoint and resets its failure count."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/webhooks/:id")
      .setPath(WebhookPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundError)
      .annotate(OpenApi.Description, "Removes the endpoint, its pending deliveries and its delivery log.")
  )
  .annotate(OpenApi.Title, "Webhooks")
{}
