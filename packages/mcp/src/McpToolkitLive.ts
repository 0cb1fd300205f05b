import { Effect, Layer } from "effect"
import type { McpSettings } from "./McpConfig.js"
import { McpToolkit } from "./McpServer.js"
import { GetAlerts } from "./tools/GetAlerts.js"
import { GetExchangeRateOn } from "./tools/GetExchangeRateOn.js"
import { GetMultiplierHistory } from "./tools/GetMultiplierHistory.js"
import { GetUnlabeledCounterparties } from "./tools/GetUnlabeledCounterparties.js"
import { GetActivity, GetPositions } from "./tools/LedgerTools.js"
import {
  EstimateSale,
  GetDividendHistory,
  GetPortfolioSummary,
  GetRecentFilings,
  GetWeekendExposure
} from "./tools/MarketTools.js"

/** Every tool, bound to the read services it shares with its REST twin. */
export const McpToolkitLive = (settings: McpSettings) =>
  Layer.effect(
    McpToolkit,
    Effect.all([
      GetPortfolioSummary,
      GetPositions,
      GetMultiplierHistory(settings.chainId),
      GetActivity,
      GetWeekendExposure,
      EstimateSale,
      GetAlerts,
      GetExchangeRateOn,
      GetRecentFilings,
      GetDividendHistory,
      GetUnlabeledCounterparties
    ])
  )
