import { HttpApi, HttpApiEndpoint, HttpApiError, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema, SchemaAST } from "effect"
import { AlertsGroup, WebhooksGroup } from "./alerts/AlertsApi.js"
import { Authentication } from "./Auth.js"
import {
  DecodeErrorAsInvalidRequest,
  InvalidAddressError,
  InvalidRequestError,
  NotFoundError,
  ServiceUnavailableError,
  UnsupportedCurrencyError
} from "./Errors.js"
import { ExportsGroup } from "./ExportsApi.js"
import { FxGroup } from "./FxApi.js"
import { LedgerGroup } from "./LedgerApi.js"
import { EstimatesGroup, ExposureGroup, MarketGroup, SummaryGroup } from "./MarketApi.js"
import { MultiplierGroup } from "./MultiplierApi.js"
import { documentCommonResponses } from "./OpenApiCommon.js"
import { ReviewGroup } from "./ReviewApi.js"
import { Settings, UpdateSettings } from "./Settings.js"
import { CreateWallet, UpdateWallet, Wallet, WalletList, WalletListParams, WalletPath } from "./Wallet.js"

export class WalletsGroup extends HttpApiGroup.make("wallets")
  .add(
    HttpApiEndpoint.get("list", "/wallets")
      .setUrlParams(WalletListParams)
      .addSuccess(WalletList)
      .annotate(OpenApi.Summary, "List watched wallets")
      .annotate(
        OpenApi.Description,
        "The watched addresses, in order of creation, paginated with `limit` and `cursor`."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/wallets")
      .setPayload(CreateWallet)
      .addSuccess(Wallet, { status: 201 })
      .addError(InvalidAddressError)
      .annotate(OpenApi.Summary, "Watch a wallet")
      // The handler answers 200 (not 201) with the existing wallet when the address is already watched.
      .annotate(OpenApi.Transform, (op) => {
        const responses = op.responses as Record<string, { description: string; content?: unknown }>
        const created = responses["201"]
        if (created !== undefined) {
          responses["200"] = { ...created, description: "The address was already watched: the existing wallet." }
        }
        return op
      })
      .annotate(
        OpenApi.Description,
        "Starts watching a public address: live multiplier recording from the next block, and a backfill of its " +
          "history. Answers 201 with the new wallet, or 200 with the existing one when the account already watches it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/wallets/:address")
      .setPath(WalletPath)
      .addSuccess(Wallet)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get a wallet")
  )
  .add(
    HttpApiEndpoint.patch("update", "/wallets/:address")
      .setPath(WalletPath)
      .setPayload(UpdateWallet)
      .addSuccess(Wallet)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Change a wallet's label or self flag")
      .annotate(
        OpenApi.Description,
        "Changes `label` and `self`. Marking an address as own rebuilds the account's history."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/wallets/:address")
      .setPath(WalletPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Stop watching a wallet")
      .annotate(
        OpenApi.Description,
        "Stops the watch and deletes every record derived from the wallet. Generated exports are kept."
      )
  )
  .annotate(OpenApi.Title, "Wallets")
  .annotate(OpenApi.Description, "The public addresses the account watches (never keys: nothing here signs).")
{}

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

/**
 * Replaces the framework's default decode-error body with the service's error envelope (`invalid_request`), so that
 * every failure, including a request the contract rejects, has the one documented shape.
 */
const withEnvelopeDecodeErrors = <A extends HttpApi.HttpApi.Any>(api: A): A => {
  const self = api as unknown as HttpApi.HttpApi.AnyWithProps
  const ast = self.errorSchema.ast
  const others = SchemaAST.isUnion(ast)
    ? ast.types.filter((member) => member !== HttpApiError.HttpApiDecodeError.ast)
    : ast === HttpApiError.HttpApiDecodeError.ast
    ? []
    : [ast]
  const errorSchema = Schema.Union(DecodeErrorAsInvalidRequest, ...others.map((member) => Schema.make(member)))
  function ScaledgerApi() {}
  Object.setPrototypeOf(ScaledgerApi, Object.getPrototypeOf(api))
  return Object.assign(ScaledgerApi, {
    groups: self.groups,
    errorSchema,
    annotations: self.annotations,
    middlewares: self.middlewares
  }) as unknown as A
}

export class ScaledgerApi extends withEnvelopeDecodeErrors(
  HttpApi.make("scaledger")
    .add(WalletsGroup)
    .add(SettingsGroup)
    .add(FxGroup)
    .add(MultiplierGroup)
    .add(LedgerGroup)
    .add(ExportsGroup)
    .add(MarketGroup)
    .add(EstimatesGroup)
    .add(ExposureGroup)
    .add(SummaryGroup)
    .add(AlertsGroup)
    .add(WebhooksGroup)
    .add(ReviewGroup)
    .addError(InvalidRequestError)
    .addError(ServiceUnavailableError)
    .middleware(Authentication)
    .prefix("/v1")
    .annotate(OpenApi.Title, "Scaledger API")
    // Security, common error responses, summaries and tag descriptions for every operation of every group.
    .annotate(OpenApi.Transform, documentCommonResponses)
    .annotate(OpenApi.Version, "1")
    .annotate(
      OpenApi.Description,
      "The record of tokenized-stock holdings: positions, multiplier history, lots, gains and income. Every request " +
        "needs `Authorization: Bearer <API_KEY>`. Every failure answers `{ error: { code, message, docUrl, requestId, " +
        "details? } }`; see /docs/errors."
    )
) {}
