import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { ExportStore } from "@scaledger/db/Exports"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { BasisBodies } from "@scaledger/db/reads/BasisBody"
import { FxReads } from "@scaledger/db/reads/FxReads"
import { LedgerQueries } from "@scaledger/db/reads/LedgerQueries"
import { MultiplierReads } from "@scaledger/db/reads/MultiplierReads"
import { SettingsRepo } from "@scaledger/db/Settings"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { WebhookEndpoints } from "@scaledger/workers/webhooks/WebhookEndpoints"
import { Layer } from "effect"
import { ApiKeys } from "../auth/ApiKeys.js"
import { AuthenticationLive } from "../auth/AuthenticationLive.js"
import { AlertsHandlers, WebhooksHandlers } from "./AlertsHandlers.js"
import { DocsRoutes } from "./DocsRoutes.js"
import { ExportsHandlers } from "./ExportsHandlers.js"
import { FxHandlers } from "./FxHandlers.js"
import { HealthRoutes } from "./HealthRoutes.js"
import { LedgerHandlers } from "./LedgerHandlers.js"
import { MarketHandlers } from "./MarketHandlers.js"
import { MultiplierHandlers } from "./MultiplierHandlers.js"
import { PageCursorSeal } from "./PageCursorSeal.js"
import { RequestEnvelope } from "./RequestEnvelope.js"
import { ReviewHandlers } from "./ReviewHandlers.js"
import { SettingsHandlers } from "./SettingsHandlers.js"
import { WalletsHandlers } from "./WalletsHandlers.js"

const ApiRoutes = HttpLayerRouter.addHttpApi(ScaledgerApi, { openapiPath: "/v1/openapi.json" }).pipe(
  Layer.provide([WalletsHandlers, SettingsHandlers, FxHandlers, MultiplierHandlers, LedgerHandlers, MarketHandlers]),
  Layer.provide(ExportsHandlers.pipe(Layer.provide(ExportStore.Default))),
  Layer.provide([AlertsHandlers, WebhooksHandlers]),
  Layer.provide(ReviewHandlers),
  // The middleware must come in a later provide than the groups that need it.
  Layer.provide(AuthenticationLive)
)

/** Every route of the REST server, needing only the database, the key secret and an HTTP server. */
export const RestRoutes = Layer.mergeAll(ApiRoutes, DocsRoutes, HealthRoutes, RequestEnvelope).pipe(
  Layer.provide([
    WalletsRepo.Default,
    SettingsRepo.Default,
    ChainStore.Default,
    LedgerStore.Default,
    ApiKeys.Default,
    PageCursorSeal.Default,
    FxRates.Default,
    FxReads.Default,
    MultiplierReads.Default,
    LedgerQueries.Default,
    BasisBodies.Default,
    AlertsStore.Default,
    WebhookEndpoints.Default
  ])
)
