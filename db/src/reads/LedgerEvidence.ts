import type { Converted } from "@scaledger/domain/ledger/Convert"
import type { IncomeEvent, Movement, PriceProvenance, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import type { EventView } from "@scaledger/domain/LedgerApi"
import type { CurrentPause } from "../market/MarketReads.js"
import type { PositionRow } from "./LedgerViews.js"

/** An exchange rate behind a figure, with its source and the ECB day it was published for. */
export interface RateEvidence {
  readonly currency: string
  readonly rate: string
  readonly rateDate: string
  readonly source: string
  readonly carriedForward: boolean
}

/** A price-feed round behind a figure. */
export interface FeedRoundEvidence {
  readonly token: string
  readonly feed: string
  readonly roundId: string
  readonly updatedAt: string
  readonly answer: string
}

const unique = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Array<A> => {
  const seen = new Map<string, A>()
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item)
  return [...seen.values()]
}

const rateOf = (converted: Converted | null): ReadonlyArray<RateEvidence> =>
  converted === null ? [] : [{
    currency: converted.currency,
    rate: converted.rate,
    rateDate: converted.rateDate,
    source: converted.source,
    carriedForward: converted.carriedForward
  }]

const roundOf = (token: string, price: PriceProvenance | null): ReadonlyArray<FeedRoundEvidence> =>
  price === null ? [] : [{
    token,
    feed: price.feed,
    roundId: price.roundId,
    updatedAt: new Date(price.updatedAt * 1000).toISOString(),
    answer: price.answer
  }]

/**
 * The multiplier change an income record comes from: a holder's income id is the change's id and its address
 * (`multiplier:<token>:<unix seconds>:<address>`); evidence cites the change once, by its own id (DECISIONS.md).
 */
export const changeIdOfIncome = (incomeId: string): string => incomeId.replace(/:0x[0-9a-fA-F]{40}$/, "")

/** The id a row is cited by: a movement's own, an income or split row's multiplier change. */
const citedId = (row: Movement | IncomeEvent | SplitEvent): string =>
  row.type === "income.multiplier_increase" || row.type === "split" ? row.eventId : row.id

const rateKey = (r: RateEvidence) => `${r.currency}/${r.rateDate}/${r.rate}`
const roundKey = (r: FeedRoundEvidence) => `${r.feed}/${r.roundId}`

/** What the MCP ledger tools cite: the event ids, lots, rates (with source and date) and feed rounds of an answer. */
export const ledgerEvidence = {
  positions: (
    rows: ReadonlyArray<PositionRow>,
    lotIds: ReadonlyArray<string>,
    pauses: ReadonlyMap<string, CurrentPause>
  ) => ({
    eventIds: [
      ...new Set(rows.flatMap((p) => [
        ...p.unreportedIncomeEventIds.map(changeIdOfIncome),
        ...p.nullReasons.map((r) => r.eventId),
        ...p.issues.map((i) => i.eventId)
      ]))
    ],
    lotIds,
    rates: unique(rows.flatMap((p) => rateOf(p.value.converted)), rateKey),
    feedRounds: unique(rows.flatMap((p) => roundOf(p.token, p.value.price)), roundKey),
    pauses: rows.flatMap((p) => {
      const pause = pauses.get(p.tokenAddress.toLowerCase())
      return pause === undefined ? [] : [{ token: p.token, block: pause.block, txHash: pause.txHash }]
    })
  }),
  events: (rows: ReadonlyArray<Movement | IncomeEvent | SplitEvent>, views: ReadonlyArray<EventView>) => ({
    eventIds: [...new Set(rows.map(citedId))],
    transactions: rows.flatMap((row) =>
      row.walletTransaction === null ? [] : [{ eventId: row.id, txHash: row.walletTransaction.txHash }]
    ),
    rates: unique(
      rows.flatMap((row) => (row.type === "income.multiplier_increase" ? rateOf(row.income) : [])),
      rateKey
    ),
    feedRounds: unique(
      rows.flatMap((row) => (row.type === "income.multiplier_increase" ? roundOf(row.token, row.price) : [])),
      roundKey
    ),
    accessionNumbers: [
      ...new Set(
        views.flatMap((view) =>
          view.withholding?.accessionNumber === undefined || view.withholding.accessionNumber === null
            ? []
            : [view.withholding.accessionNumber]
        )
      )
    ]
  })
}
