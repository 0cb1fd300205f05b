/**
 * What a worker keeps of an account's build to make the next one from it, and the keys that tell whether it still
 * holds (settings, multiplier changes, the price and rate history its figures used).
 */
import type { AccountLedgerInputs } from "@scaledger/db/ledger/LedgerInputs"
import { utcDateOf } from "@scaledger/domain/CalendarDates"
import type { Ledger } from "@scaledger/domain/ledger/index"
import type { MultiplierEvent, PriceTable, RateTable } from "@scaledger/domain/ledger/LedgerInput"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import type { StoredLotRows, StoredStepRows } from "./LotPlan.js"
import type { StoredPosition } from "./PositionPlan.js"

/**
 * What a worker keeps of an account's last build to make the next one incrementally: the ledger state after the
 * account's final events (provisional ones, newer than the finality depth, can still be rewritten by a reorg and
 * are applied on top at each build), with what is needed to tell whether it still holds.
 */
export interface LedgerCheckpoint {
  /** The state after the final events, up to `state.cursor`. */
  readonly state: LedgerState
  /** The settings it was built under (wallets, country, currency, known tokens' initial multipliers). */
  readonly key: string
  /**
   * The transfers' watermark when the build began (`LedgerInputs.recordedWatermark`): a transfer at or before the
   * cursor recorded by a transaction it did not see (a backfill of older blocks) means the checkpoint may lack it.
   */
  readonly watermark: string
  /**
   * The last transfer applied and the block hash it was recorded with after the build (null: rolled back since):
   * a re-org deep enough to drop any applied transfer drops this one too (it rolls back every block above a fork).
   */
  readonly lastTransfer:
    | { readonly txHash: string; readonly logIndex: number; readonly blockHash: string | null }
    | null
  /** The tokens (keys) and dates of the transfers up to the cursor: a resumed build reads only those after it. */
  readonly tokenKeys: ReadonlyArray<string>
  readonly dates: ReadonlyArray<string>
  /** The multiplier changes applied (ids, in order). */
  readonly multipliers: string
  /** The price rounds and rates the applied events could use (up to the cursor's time): late ones force a rebuild. */
  readonly history: string
  /** The state's row counts, and its stored event rows (movements + income + splits) and disposal rows. */
  readonly rows: Ledger.RowCounts
  readonly eventRows: number
  /** The build version stored from it; set by the worker once stored. */
  readonly version: number
  /** The lot rows stored by that build (of the state with its provisional events); set by the worker. */
  readonly lots?: StoredLotRows
  /** The tokens' rows of steps stored by that build; set by the worker. */
  readonly steps?: StoredStepRows
  /** The position rows stored by that build; set by the worker. */
  readonly positions?: ReadonlyArray<StoredPosition>
  /** The lot figures of the reports made so far, for the next report to reuse where the lots did not change. */
  readonly figures: Ledger.FiguresCache
}

const ONE = "1000000000000000000"

export const settingsKey = (inputs: AccountLedgerInputs, state: LedgerState | undefined): string =>
  JSON.stringify([
    inputs.wallets,
    inputs.country,
    inputs.currency,
    inputs.classificationStamp,
    // The initial multiplier of each token the state already holds (1.0 when none is known): a token first seen
    // later brings its own.
    [...(state?.books.keys() ?? [])].sort().map((token) => [token, inputs.initialMultipliers[token] ?? ONE])
  ])

export const multiplierIds = (events: ReadonlyArray<MultiplierEvent>, throughBlock: number): string =>
  events.filter((event) => event.block <= throughBlock).map((event) => event.id).join("|")

/** The time of a state's last applied event (-1 before any). */
export const cursorTime = (state: LedgerState): number => {
  const event = state.cursor.event
  return event === null ? -1 : event.kind === "transfer" ? event.timestamp : event.effectiveAt
}

/**
 * What the figures of the events up to `time` were computed from: per token, the price rounds recorded up to then
 * (count, last round), and the rates of the dates up to then. A round or a rate recorded later for an earlier time
 * (the price recorder walks feed history backwards; FX history can arrive late) changes it, and the account is
 * rebuilt fully instead of keeping figures computed without them.
 */
export const historyKey = (prices: PriceTable, rates: RateTable | undefined, time: number): string => {
  const parts: Array<string> = []
  for (const token of Object.keys(prices).sort()) {
    const rounds = prices[token]!
    // The rounds up to `time` (sorted by `updatedAt`, as the ledger requires): found by bisection, not walked.
    let count = 0
    let hi = rounds.length
    while (count < hi) {
      const mid = (count + hi) >>> 1
      if (rounds[mid]!.updatedAt <= time) count = mid + 1
      else hi = mid
    }
    const last = count === 0 ? undefined : rounds[count - 1]!
    parts.push(`${token}=${count}@${last === undefined ? "" : `${last.roundId}:${last.answer}:${last.updatedAt}`}`)
  }
  if (rates !== undefined) {
    const until = time < 0 ? "" : utcDateOf(time * 1000)
    for (const entry of rates.rates) {
      if (entry.date <= until) parts.push(`${entry.date}=${entry.rate}:${entry.rateDate}:${entry.source}`)
    }
  }
  return parts.join("|")
}
