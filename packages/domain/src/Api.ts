import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema, SchemaAST } from "effect"
import { AlertsGroup, WebhooksGroup } from "./alerts/AlertsApi.js"
import { Authentication } from "./Auth.js"
import {
  DecodeErrorAsInvalidRequest,
  HeadersTooLargeError,
  InternalErrorError,
  InvalidRequestError,
  PayloadTooLargeError,
  RequestTimeoutError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError
} from "./Errors.js"
import { ExportsGroup } from "./ExportsApi.js"
import { FxGroup } from "./FxApi.js"
import { LedgerGroup } from "./LedgerApi.js"
import { EstimatesGroup, ExposureGroup, MarketGroup, SummaryGroup } from "./MarketApi.js"
import { MultiplierGroup } from "./MultiplierApi.js"
import { documentCommonResponses } from "./OpenApiCommon.js"
import { ReviewGroup } from "./ReviewApi.js"
import { SettingsGroup } from "./SettingsApi.js"
import { WalletsGroup } from "./WalletsApi.js"

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
    // What the HTTP edge answers to any operation, declared so that a client derived from the contract reads each
    // as its tagged error (the edge writes them itself: no handler fails with them).
    .addError(InvalidRequestError)
    .addError(RequestTimeoutError)
    .addError(PayloadTooLargeError)
    .addError(UnsupportedMediaTypeError)
    .addError(HeadersTooLargeError)
    .addError(InternalErrorError)
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
