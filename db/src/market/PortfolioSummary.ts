import type { LedgerReport, Total } from "@scaledger/domain/ledger/LedgerReport"
import { isOpen, lastCloseBefore, nextOpen } from "@scaledger/domain/market/UsMarketCalendar"
import { type PortfolioSummary, ratesBehind } from "@scaledger/domain/MarketApi"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { LedgerStore } from "../ledger/LedgerStore.js"
import { changeIdOfIncome } from "../reads/LedgerEvidence.js"
import { positionsValuationRate, totalView } from "../reads/LedgerViews.js"
import { positionsOf, settledLedger } from "./AccountLedger.js"
import { MarketReads } from "./MarketReads.js"
import type { MarketReadOptions } from "./WeekendExposure.js"

type StoredTotals = LedgerReport["totals"]

const zero: Total = {
  usd: "0",
  knownUsd: "0",
  converted: "0",
  knownConverted: "0",
  count: 0,
  unknownCount: 0,
  unconvertedCount: 0
}

export const makePortfolioSummary = ({ chainId }: MarketReadOptions) =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const reads = yield* MarketReads

    const summary = Effect.fn("PortfolioSummaryReads.summary")((accountId: string) =>
      Effect.gen(function*() {
        const built = yield* settledLedger(store, accountId)
        const now = new Date(yield* Clock.currentTimeMillis)
        const report = built
          ? Option.map(yield* store.report(accountId), (r) => r as Pick<LedgerReport, "asOf" | "currency" | "totals">)
          : Option.none()
        // Every stored position: one no longer held is kept while its income of the year is reported.
        const rows = yield* positionsOf(store, accountId)
        const positions = rows.filter((p) => BigInt(p.raw) > 0n)
        const currency = Option.match(report, { onNone: () => "USD" as const, onSome: (r) => r.currency })
        const totals: StoredTotals | undefined = Option.getOrUndefined(report)?.totals
        const paused: Array<PortfolioSummary["pausedTokens"][number]> = []
        for (const address of [...new Set(positions.map((p) => p.tokenAddress.toLowerCase()))]) {
          const state = yield* reads.pauses(chainId, address, now)
          if (state.token.paused) {
            paused.push({
              symbol: positions.find((p) => p.tokenAddress.toLowerCase() === address)!.token,
              since: state.token.since === null ? null : state.token.since.toISOString(),
              block: state.token.block
            })
          }
        }
        const asOf = Option.match(report, {
          onNone: () => now.toISOString(),
          onSome: (r) => new Date(r.asOf * 1000).toISOString()
        })
        // As `GET /v1/portfolio` gives it (`totals.rate`): the rate of the build's valuation date, the day of `asOf`.
        const rate: PortfolioSummary["rate"] = positionsValuationRate(positions, currency, asOf.slice(0, 10))
        const answer: PortfolioSummary = {
          asOf,
          currency,
          value: totalView(totals?.value ?? zero, currency),
          costBasis: totalView(totals?.costBasis ?? zero, currency),
          unrealisedGain: totalView(totals?.unrealisedGain ?? zero, currency),
          accruedDividendIncome: totalView(totals?.incomeInYear ?? zero, currency),
          rate,
          marketOpen: isOpen(now),
          lastClose: lastCloseBefore(now).toISOString(),
          nextOpen: nextOpen(now).toISOString(),
          positionCount: positions.length,
          pausedTokens: paused,
          evidence: {
            rounds: [
              ...new Set(
                positions.flatMap((
                  p
                ) => (p.value.price === null ? [] : [`${p.value.price.feed}:${p.value.price.roundId}`]))
              )
            ],
            // The income of `accruedDividendIncome`, sold positions' included.
            incomeEventIds: [...new Set(rows.flatMap((p) => p.unreportedIncomeEventIds.map(changeIdOfIncome)))],
            rates: ratesBehind(rate)
          }
        }
        return answer
      })
    )

    return { summary } as const
  })

/** get_portfolio_summary (`GET /v1/portfolio/summary` and the MCP tool). */
export class PortfolioSummaryReads extends Context.Tag("@scaledger/db/market/PortfolioSummaryReads")<
  PortfolioSummaryReads,
  Effect.Effect.Success<ReturnType<typeof makePortfolioSummary>>
>() {
  static readonly layer = (options: MarketReadOptions) =>
    Layer.effect(PortfolioSummaryReads, makePortfolioSummary(options)).pipe(
      Layer.provide([LedgerStore.Default, MarketReads.Default])
    )
}
