import * as Address from "@scaledger/domain/Address"
import { DEFAULT_PAGE_LIMIT } from "@scaledger/domain/Common"
import { formatMoney, type ReportingCurrency } from "@scaledger/domain/Currency"
import { validDateRange } from "@scaledger/domain/DateInputs"
import { InvalidRequest, NotFound } from "@scaledger/domain/Errors"
import type { IncomeEvent, Movement, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import { EVENT_TYPES, type EventView, type PortfolioNotice, type PositionView } from "@scaledger/domain/LedgerApi"
import { type DeclaredDividend, edgarTicker, withholdingFor } from "@scaledger/domain/market/Edgar"
import { rowTag } from "@scaledger/domain/PageCursors"
import { Clock, Effect, Either, Option } from "effect"
import { AlertsStore, alertView } from "../alerts/AlertsStore.js"
import { EventClassifications } from "../classification/EventClassifications.js"
import { type EventFilter, LedgerStore } from "../ledger/LedgerStore.js"
import { SettledLedger } from "../ledger/SettledLedger.js"
import { EdgarCache } from "../market/EdgarCache.js"
import { type CurrentPause, MarketReads } from "../market/MarketReads.js"
import { WalletsRepo } from "../Wallets.js"
import { withClassification } from "./EventClassificationView.js"
import { ledgerEvidence } from "./LedgerEvidence.js"
import {
  eventView,
  holdingPositionView,
  type PositionFigures,
  type PositionRow,
  positionsValuationRate,
  positionView,
  type StoredReport,
  totalView
} from "./LedgerViews.js"
import { checkSettled } from "./SettledBuild.js"

export { EVENT_TYPES }

type EventRow = Movement | IncomeEvent | SplitEvent

/** The filters of `GET /v1/events` and `get_activity`, as sent. */
export interface EventQuery {
  readonly token?: string | undefined
  readonly type?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly needsReview?: boolean | undefined
}

const pauseView = (pause: CurrentPause | undefined) =>
  pause === undefined
    ? null
    : { since: pause.since.toISOString(), block: pause.block, txHash: pause.txHash, provisional: pause.provisional }

/**
 * The ledger reads behind `GET /v1/positions`, `/v1/events`, `/v1/portfolio` and the MCP tools
 * `get_positions` and `get_activity`: the account's stored build (409 `replay_in_progress` while a replay runs), in
 * the API's views, with the evidence behind each figure for the tools.
 */
export class LedgerQueries extends Effect.Service<LedgerQueries>()("@scaledger/db/LedgerQueries", {
  effect: Effect.gen(function*() {
    const store = yield* LedgerStore
    const classifications = yield* EventClassifications
    const wallets = yield* WalletsRepo
    const alertStore = yield* AlertsStore
    const market = yield* MarketReads
    const edgar = yield* EdgarCache
    const settled = yield* SettledLedger

    /**
     * The account's stored build (summary and position rows), under the replay rule of `settledBuild`; the rows are
     * read again only when a new build was stored (`SettledLedger`).
     */
    const settledStored = (accountId: string) =>
      Effect.gen(function*() {
        const build = yield* settled.settled(accountId)
        if (Option.isNone(build)) {
          return { report: Option.none<StoredReport>(), positions: [] as ReadonlyArray<PositionRow> }
        }
        yield* checkSettled(build.value.state)
        return {
          report: build.value.report as Option.Option<StoredReport>,
          positions: build.value.positions as ReadonlyArray<PositionRow>
        }
      })

    /** The account's stored build summary, under the replay rule of `settledBuild`. */
    const settledReport = (accountId: string) => Effect.map(settledStored(accountId), (stored) => stored.report)

    const currencyOf = (report: Option.Option<StoredReport>): ReportingCurrency =>
      Option.match(report, { onNone: () => "USD", onSome: (r) => r.currency })

    const asOfOf = (report: Option.Option<StoredReport>) =>
      Option.match(report, {
        onNone: () => Effect.map(Clock.currentTimeMillis, (now) => new Date(now).toISOString()),
        onSome: (r) => Effect.succeed(new Date(r.asOf * 1000).toISOString())
      })

    /** The date (UTC) the build's values are converted at: the day of its `asOf`. */
    const valuationDateOf = (asOf: string) => asOf.slice(0, 10)

    /** The views of positions with the pause in force for each token. */
    const withPauses = (rows: ReadonlyArray<PositionRow>, view: (p: PositionRow) => PositionFigures) =>
      Effect.map(market.currentPauses(rows.map((p) => p.tokenAddress)), (pauses) => ({
        pauses,
        views: rows.map((p): PositionView => ({
          ...view(p),
          paused: pauseView(pauses.get(p.tokenAddress.toLowerCase()))
        }))
      }))

    /** `wallet`: only that watched address's positions (its own holding of a pooled one). */
    const positions = Effect.fn("LedgerQueries.positions")(function*(accountId: string, wallet?: string) {
      // Checked before the build is read: a malformed address is 400 even while a replay runs (not 409).
      const parsed = wallet === undefined ? undefined : Address.parseAddress(wallet)
      if (parsed !== undefined && Either.isLeft(parsed)) {
        return yield* Address.invalidAddress(wallet!, parsed.left)
      }
      const stored = yield* settledStored(accountId)
      const report = stored.report
      let rows = stored.positions
      const asOf = yield* asOfOf(report)
      const valuationDate = valuationDateOf(asOf)
      let view = (p: PositionRow): PositionFigures => positionView(p, valuationDate)
      if (parsed !== undefined && Either.isRight(parsed)) {
        const address = parsed.right
        if (Option.isNone(yield* wallets.find(accountId, address))) {
          return yield* new NotFound({ message: `No watched wallet ${address}.` })
        }
        const key = address.toLowerCase()
        rows = rows.filter((p) =>
          p.wallet?.toLowerCase() === key ||
          (p.wallet === null && p.holdings.some((h) => h.wallet.toLowerCase() === key))
        )
        // Under account lot scope a position is pooled: show the wallet's own holding of it.
        view = (p) =>
          p.wallet === null ? holdingPositionView(p, address, valuationDate) : positionView(p, valuationDate)
      }
      const { pauses, views } = yield* withPauses(rows, view)
      return {
        list: { positions: views, currency: currencyOf(report), asOf },
        /** Read only when asked for (the MCP tool cites the lots; REST does not). */
        evidence: Effect.map(
          store.positionLotIds(accountId, rows),
          (lotIds) => ledgerEvidence.positions(rows, lotIds, pauses)
        )
      }
    })

    /** Checks the filters of an events read (before the page cursor, so a bad date is reported first). */
    const eventFilter = Effect.fn("LedgerQueries.eventFilter")(function*(query: EventQuery) {
      const { from, to } = yield* validDateRange(query.from, query.to)
      if (query.type !== undefined && !EVENT_TYPES.includes(query.type)) {
        return yield* new InvalidRequest({
          message: `Unknown event type ${query.type}.`,
          details: { field: "type", supported: EVENT_TYPES }
        })
      }
      const filter: EventFilter = { token: query.token, type: query.type, from, to, needsReview: query.needsReview }
      return filter
    })

    /** The declared dividends of a token's issuer as cached from EDGAR (never fetched here); null when not known. */
    const cachedDividends = (symbol: string) =>
      Effect.gen(function*() {
        const issuer = yield* edgar.issuerOf(edgarTicker(symbol))
        if (Option.isNone(issuer) || typeof issuer.value.cik !== "number") return null
        const doc = yield* edgar.get("dividends", issuer.value.cik)
        if (Option.isNone(doc) || doc.value.status !== "ok" || doc.value.body === null) return null
        return (doc.value.body as { readonly dividends: ReadonlyArray<DeclaredDividend> }).dividends
      })

    /**
     * The views of event rows: each movement with who classified it, each income event with its withholding
     * estimate.
     */
    const eventViews = (accountId: string, rows: ReadonlyArray<EventRow>) =>
      Effect.gen(function*() {
        const declared = new Map<string, ReadonlyArray<DeclaredDividend> | null>()
        const details = yield* classifications.details(accountId, rows.map((row) => row.id))
        const labels = yield* classifications.counterpartyLabels(
          accountId,
          rows.flatMap((row) => "counterparty" in row && typeof row.counterparty === "string" ? [row.counterparty] : [])
        )
        const views: Array<EventView> = []
        for (const row of rows) {
          const view = withClassification(eventView(row), row, details.get(row.id), labels)
          if (row.type !== "income.multiplier_increase") {
            views.push(view)
            continue
          }
          const symbol = row.token.toUpperCase()
          if (!declared.has(symbol)) declared.set(symbol, yield* cachedDividends(symbol))
          views.push({ ...view, withholding: withholdingFor(row, declared.get(symbol)!) })
        }
        return views
      })

    /**
     * One page of events in chain order after `afterOrd`. With `afterTag` (the cursor's tag of the row it was issued
     * after), a build that has since put another row there (a replay or a re-org renumbered the rows) is refused:
     * continuing would repeat or skip events.
     */
    const events = Effect.fn("LedgerQueries.events")(function*(
      accountId: string,
      filter: EventFilter,
      page: {
        readonly afterOrd?: number | undefined
        readonly afterTag?: string | undefined
        readonly limit?: number | undefined
      }
    ) {
      yield* settledReport(accountId)
      if (page.afterOrd !== undefined && page.afterTag !== undefined) {
        const id = yield* store.eventIdAt(accountId, page.afterOrd)
        if (id === undefined || rowTag(id) !== page.afterTag) {
          return yield* new InvalidRequest({
            message: "The record was rebuilt since this cursor was issued (a replay or a re-org): list the events " +
              "again from the start.",
            details: {
              field: "cursor",
              reason: "stale",
              issues: [{ path: ["cursor"], message: "the record was rebuilt since this cursor was issued" }]
            }
          })
        }
      }
      const stored = yield* store.events(accountId, filter, {
        afterOrd: page.afterOrd,
        limit: page.limit ?? DEFAULT_PAGE_LIMIT
      })
      const rows = stored.events.map((e) => e.row as EventRow)
      const views = yield* eventViews(accountId, rows)
      return {
        events: views,
        lastOrd: stored.events[stored.events.length - 1]?.ord,
        lastId: rows[rows.length - 1]?.id,
        hasMore: stored.hasMore,
        evidence: ledgerEvidence.events(rows, views)
      }
    })

    const portfolio = Effect.fn("LedgerQueries.portfolio")(function*(accountId: string) {
      const { positions: rows, report } = yield* settledStored(accountId)
      const currency = currencyOf(report)
      const recent = yield* eventViews(
        accountId,
        (yield* store.recentEvents(accountId, 10)) as ReadonlyArray<EventRow>
      )
      // The alert store (fed by the alert monitor) is the one source of the seven alert kinds, in the one shape.
      const alerts = (yield* alertStore.open(accountId)).map(alertView)
      const notices: Array<typeof PortfolioNotice.Type> = []
      const incomplete = rows.filter((p) => p.issues.some((issue) => issue.kind === "incomplete_history"))
      if (incomplete.length > 0) {
        notices.push({
          kind: "incomplete_history",
          severity: "warning",
          title: "History incomplete",
          detail: `${incomplete.map((p) => p.token).join(", ")}: more left an address than its recorded history holds.`
        })
      }
      const unpriced = rows.filter((p) => p.value.usd === null)
      if (unpriced.length > 0) {
        notices.push({
          kind: "missing_prices",
          severity: "info",
          title: "Positions without a price",
          detail: `${
            unpriced.map((p) => p.token).join(", ")
          } have no usable price (no feed round, or one answering zero or less); their value is unknown.`
        })
      }
      // Nothing built yet: nothing held, a known zero.
      const zero = { amount: "0", formatted: formatMoney("0", currency), usd: "0", knownAmount: "0", unknownCount: 0 }
      const asOf = yield* asOfOf(report)
      const valuationDate = valuationDateOf(asOf)
      const { views } = yield* withPauses(rows, (p) => positionView(p, valuationDate))
      return {
        asOf,
        summary: Option.match(report, {
          onNone: () => ({
            valueUsd: "0",
            positionCount: 0,
            pricedPositions: 0,
            positionsWithBasis: 0,
            fxCurrency: currency
          }),
          onSome: (r) => ({
            valueUsd: r.summary.valueUsd,
            positionCount: r.summary.positionCount,
            pricedPositions: r.summary.pricedPositions,
            positionsWithBasis: r.summary.positionsWithBasis,
            fxCurrency: r.summary.fxCurrency
          })
        }),
        alerts,
        notices,
        positions: views,
        totals: Option.match(report, {
          onNone: () => ({
            value: zero,
            costBasis: zero,
            unrealisedGain: zero,
            realisedGainThisYear: zero,
            incomeThisYear: zero,
            rate: positionsValuationRate(rows, currency, valuationDate)
          }),
          onSome: (r) => ({
            value: totalView(r.totals.value, currency),
            costBasis: totalView(r.totals.costBasis, currency),
            unrealisedGain: totalView(r.totals.unrealisedGain, currency),
            realisedGainThisYear: totalView(r.totals.realisedGainInYear, currency),
            incomeThisYear: totalView(r.totals.incomeInYear, currency),
            rate: positionsValuationRate(rows, currency, valuationDate)
          })
        }),
        recentActivity: recent
      }
    })

    return { settledReport, positions, eventFilter, events, portfolio } as const
  }),
  dependencies: [
    SettledLedger.Default,
    EventClassifications.Default,
    LedgerStore.Default,
    WalletsRepo.Default,
    AlertsStore.Default,
    MarketReads.Default,
    EdgarCache.Default
  ]
}) {}
