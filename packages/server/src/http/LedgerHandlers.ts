import { HttpApiBuilder } from "@effect/platform"
import { LedgerStore, SettledLedger, WalletsRepo } from "@scaledger/db"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import {
  Address,
  CurrentAccount,
  DEFAULT_PAGE_LIMIT,
  InvalidAddress,
  InvalidDate,
  InvalidRequest,
  NotFound,
  ReplayInProgress,
  type ReportingCurrency,
  ScaledgerApi,
  ServiceUnavailable
} from "@scaledger/domain"
import { isIsoDate } from "@scaledger/domain/fx/IsoDate"
import { MovementType } from "@scaledger/domain/ledger/LedgerInput"
import type { Disposal, IncomeEvent, Lot, Movement, Position, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import { Effect, Either, Option } from "effect"
import { decodeCursor, encodeCursor } from "./Cursor.js"
import {
  disposalView,
  eventView,
  holdingPositionView,
  lotView,
  positionView,
  realisedGains,
  type StoredReport,
  totalView
} from "./LedgerViews.js"
import { orUnavailable } from "./Unavailable.js"

export const EVENT_TYPES: ReadonlyArray<string> = [...MovementType.literals, "income.multiplier_increase", "split"]

const validDate = (field: string, value: string | undefined) =>
  value === undefined || isIsoDate(value)
    ? Effect.succeed(value)
    : Effect.fail(
      new InvalidDate({
        message: `${field} must be a date, YYYY-MM-DD: ${value}`,
        details: { field, reason: "malformed" }
      })
    )

export const LedgerHandlers = HttpApiBuilder.group(ScaledgerApi, "ledger", (handlers) =>
  Effect.gen(function*() {
    const store = yield* LedgerStore
    const wallets = yield* WalletsRepo
    const alertStore = yield* AlertsStore
    const settledLedger = yield* SettledLedger

    /**
     * The account's stored build, or 409 while a replay (or the first build) is under way. An account that never
     * asked for a build (no wallets yet) has an empty record.
     */
    const settledBuild = (accountId: string) =>
      Effect.gen(function*() {
        const build = yield* settledLedger.settled(accountId)
        if (Option.isNone(build)) return { report: Option.none<StoredReport>(), positions: [] }
        const state = build.value.state
        if (state.builtVersion === 0 || state.replayVersion > state.builtVersion) {
          return yield* new ReplayInProgress({
            message: "The account's history is being rebuilt; retry shortly.",
            retryAfterSeconds: 1
          })
        }
        if (state.status === "failed") {
          return yield* new ServiceUnavailable({
            message: `The account's ledger could not be built: ${state.error}`
          })
        }
        return {
          report: build.value.report as Option.Option<StoredReport>,
          positions: build.value.positions as ReadonlyArray<Position>
        }
      })

    const settledReport = (accountId: string) => Effect.map(settledBuild(accountId), (build) => build.report)

    const currencyOf = (report: Option.Option<StoredReport>): ReportingCurrency =>
      Option.match(report, { onNone: () => "USD", onSome: (r) => r.currency })

    const asOfOf = (report: Option.Option<StoredReport>) =>
      Option.match(report, {
        onNone: () => new Date().toISOString(),
        onSome: (r) => new Date(r.asOf * 1000).toISOString()
      })

    return handlers
      .handle("positions", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const { positions: stored, report } = yield* settledBuild(account.id)
          let rows = stored
          if (urlParams.wallet !== undefined) {
            const parsed = Address.parseAddress(urlParams.wallet)
            if (Either.isLeft(parsed)) {
              return yield* new InvalidAddress({
                message: `${urlParams.wallet} is not a valid address.`,
                details: { address: urlParams.wallet, reason: parsed.left }
              })
            }
            const address = parsed.right
            if (Option.isNone(yield* wallets.find(account.id, address))) {
              return yield* new NotFound({ message: `No watched wallet ${address}.` })
            }
            const key = address.toLowerCase()
            rows = rows.filter((p) =>
              p.wallet?.toLowerCase() === key ||
              (p.wallet === null && p.holdings.some((h) => h.wallet.toLowerCase() === key))
            )
            // Under account lot scope a position is pooled: show the wallet's own holding of it.
            return {
              positions: rows.map((p) => (p.wallet === null ? holdingPositionView(p, address) : positionView(p))),
              currency: currencyOf(report),
              asOf: asOfOf(report)
            }
          }
          return { positions: rows.map(positionView), currency: currencyOf(report), asOf: asOfOf(report) }
        }).pipe(orUnavailable))
      .handle("basis", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const report = yield* settledReport(account.id)
          const currency = currencyOf(report)
          const lotScope = Option.match(report, { onNone: () => "wallet" as const, onSome: (r) => r.lotScope })
          const tokens = Option.match(report, { onNone: () => [], onSome: (r) => r.tokens })
          const wanted = urlParams.token?.toUpperCase()
          const chosen = tokens.filter((t) =>
            wanted === undefined || t.token.toUpperCase() === wanted || t.tokenAddress.toUpperCase() === wanted
          )
          if (wanted !== undefined && chosen.length === 0) {
            return yield* new NotFound({ message: `No basis record for token ${urlParams.token}.` })
          }
          const records = yield* Effect.forEach(chosen, (token) =>
            Effect.gen(function*() {
              const lots = (yield* store.lots(account.id, token.token)) as ReadonlyArray<Lot>
              const disposals = (yield* store.disposals(account.id, token.token)) as ReadonlyArray<Disposal>
              return {
                token: token.token,
                currency,
                lots: lots.map(lotView),
                accruedIncomeAddedToBasis: token.accruedIncomeAddedToBasis,
                accruedIncomeAddedToBasisUsd: token.accruedIncomeAddedToBasisUsd,
                lotMatching: "fifo" as const,
                lotScope,
                disposals: disposals.map(disposalView),
                realisedGains: realisedGains(disposals)
              }
            }))
          if (wanted !== undefined) return records[0]!
          return { currency, lotMatching: "fifo" as const, lotScope, records }
        }).pipe(orUnavailable))
      .handle("events", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const from = yield* validDate("from", urlParams.from)
          const to = yield* validDate("to", urlParams.to)
          if (urlParams.type !== undefined && !EVENT_TYPES.includes(urlParams.type)) {
            return yield* new InvalidRequest({
              message: `Unknown event type ${urlParams.type}.`,
              details: { field: "type", supported: EVENT_TYPES }
            })
          }
          const afterOrd = yield* decodeCursor("events", urlParams.cursor)
          yield* settledReport(account.id)
          const limit = urlParams.limit ?? DEFAULT_PAGE_LIMIT
          const page = yield* store.events(account.id, {
            type: urlParams.type,
            from,
            to,
            needsReview: urlParams.needsReview === undefined ? undefined : urlParams.needsReview === "true"
          }, { afterOrd: afterOrd === undefined ? undefined : Number(afterOrd), limit })
          const last = page.events[page.events.length - 1]
          return {
            events: page.events.map((e) => eventView(e.row as Movement | IncomeEvent | SplitEvent)),
            nextCursor: page.hasMore && last !== undefined ? encodeCursor("events", String(last.ord)) : null
          }
        }).pipe(orUnavailable))
      .handle("portfolio", () =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const { positions, report } = yield* settledBuild(account.id)
          const currency = currencyOf(report)
          const recent = (yield* store.recentEvents(account.id, 10)) as ReadonlyArray<
            Movement | IncomeEvent | SplitEvent
          >
          // The alert store (fed by the alert monitor) is the one source of the seven alert kinds.
          const alerts: Array<
            { kind: string; severity: "info" | "warning" | "critical"; title: string; detail: string }
          > = (yield* alertStore.open(account.id)).map(({ detail, kind, severity, title }) => ({
            kind,
            severity,
            title,
            detail
          }))
          const incomplete = positions.filter((p) => p.issues.some((issue) => issue.kind === "incomplete_history"))
          if (incomplete.length > 0) {
            alerts.push({
              kind: "incomplete_history",
              severity: "warning",
              title: "History incomplete",
              detail: `${
                incomplete.map((p) => p.token).join(", ")
              }: more left an address than its recorded history holds.`
            })
          }
          const unpriced = positions.filter((p) => p.value.usd === null)
          if (unpriced.length > 0) {
            alerts.push({
              kind: "missing_prices",
              severity: "info",
              title: "Positions without a price",
              detail: `${unpriced.map((p) => p.token).join(", ")} have no price feed round; their value is unknown.`
            })
          }
          const zero = { amount: "0", formatted: null, usd: "0", knownAmount: "0", unknownCount: 0 }
          return {
            asOf: asOfOf(report),
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
            positions: positions.map(positionView),
            totals: Option.match(report, {
              onNone: () => ({
                value: zero,
                costBasis: zero,
                unrealisedGain: zero,
                realisedGainThisYear: zero,
                incomeThisYear: zero
              }),
              onSome: (r) => ({
                value: totalView(r.totals.value, currency),
                costBasis: totalView(r.totals.costBasis, currency),
                unrealisedGain: totalView(r.totals.unrealisedGain, currency),
                realisedGainThisYear: totalView(r.totals.realisedGainInYear, currency),
                incomeThisYear: totalView(r.totals.incomeInYear, currency)
              })
            }),
            recentActivity: recent.map(eventView)
          }
        }).pipe(orUnavailable))
  }))
