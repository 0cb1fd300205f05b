import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { UnsupportedCurrencyError } from "./Errors.js"
import { Settings, UpdateSettings } from "./Settings.js"

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("get", "/settings").addSuccess(Settings).annotate(OpenApi.Summary, "Get the account's settings")
  )
  .add(
    HttpApiEndpoint.put("update", "/settings")
      .setPayload(UpdateSettings)
      .addSuccess(Settings)
      .addError(UnsupportedCurrencyError)
      .annotate(OpenApi.Summary, "Change the country rule or reporting currency")
      .annotate(
        OpenApi.Description,
        "Sets the country rule (`US`, `SG`, `DE`) and the reporting currency (USD or one of the 20 ECB reference " +
          "currencies). Fields left out keep their value."
      )
  )
  .annotate(OpenApi.Title, "Settings")
  .annotate(OpenApi.Description, "The account's country rule and reporting currency.")
{}
