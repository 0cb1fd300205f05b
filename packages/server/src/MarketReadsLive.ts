import { PortfolioSummaryReads } from "@scaledger/db/market/PortfolioSummary"
import { SaleEstimator } from "@scaledger/db/market/SaleEstimator"
import { WeekendExposureReads } from "@scaledger/db/market/WeekendExposure"
import { chainConfig } from "@scaledger/workers/chain/ChainConfig"
import { EdgarConfig, EdgarReadsLive } from "@scaledger/workers/market/EdgarHttp"
import { Effect, Layer } from "effect"

/**
 * The market read services (db) that REST and MCP share, with the workers' EDGAR adapter behind the domain's
 * `EdgarSource` port and the chain the workers record; they need the database.
 */
export const MarketReadsLive = Layer.unwrapEffect(
  Effect.map(Effect.all([EdgarConfig, chainConfig]), ([edgar, chain]) =>
    Layer.mergeAll(
      EdgarReadsLive(edgar),
      SaleEstimator.Default,
      WeekendExposureReads.layer({ chainId: chain.chainId }),
      PortfolioSummaryReads.layer({ chainId: chain.chainId })
    ))
)
