import { Either } from "effect"
import { applyMultiplier } from "./ApplyMultiplier.js"
import { applyTransfer } from "./ApplyTransfer.js"
import { reportingCurrencyOf } from "./Convert.js"
import { countryRule, countryRules } from "./CountryRule.js"
import { type LedgerError, LedgerEventsOutOfOrder, LedgerInvalidEvent, LedgerInvalidSettings } from "./LedgerErrors.js"
import type { CounterpartyLabel, LedgerEvent, LedgerInput, LedgerSettings, TransferEvent } from "./LedgerInput.js"
import type { LedgerReport } from "./LedgerReport.js"
import { type AppendLog, type LedgerContext, type LedgerState, LedgerStateTypeId } from "./LedgerState.js"
import { ownItems, type Work } from "./LedgerWork.js"
import { indexPrices, type PriceIndex } from "./Prices.js"
import { buildReport, type ReportOptions } from "./ReportBuilder.js"

export {
  FiguresCache,
  lotRowMaker,
  lotRows,
  type OpenLot,
  openLotsOf,
  type OpenPool,
  openPoolsOf
} from "./LotFigures.js"
export { logChanges } from "./Lots.js"
export { type ReportOptions } from "./ReportBuilder.js"
export {
  type DisposalGains,
  disposalRows,
  incomeRows,
  movementRows,
  release,
  type RowCounts,
  rowCounts,
  splitRows
} from "./ReportRows.js"
export {
  expandActivityRow,
  expandDisposalRow,
  expandEventRow,
  expandLotRow,
  lotRowHead,
  type MovementActivity,
  storedDisposalKeys,
  storedDisposalRows,
  storedLotRowMaker,
  storedMovementKeys,
  storedMovementRows,
  type StoredRow,
  type StoredStep,
  storedSteps
} from "./StoredRows.js"

const EMPTY_PRICES: PriceIndex = new Map()

// ---------------------------------------------------------------------------------------------------------------
// Settings

const makeContext = (settings: LedgerSettings): Either.Either<LedgerContext, LedgerInvalidSettings> => {
  // Settings not decoded with `LedgerSettings` (an embedding app's plain object) may name a country with no rule.
  if (!Object.hasOwn(countryRules, settings.country)) {
    return Either.left(
      new LedgerInvalidSettings({
        reason: `country ${JSON.stringify(settings.country)} is not one of ${Object.keys(countryRules).join(", ")}`
      })
    )
  }
  const own = new Map<string, string>()
  for (const wallet of settings.wallets) {
    if (wallet.self) own.set(wallet.address.toLowerCase(), wallet.address)
  }
  const labels = new Map<string, CounterpartyLabel>()
  if (settings.labels !== undefined) {
    for (const address of Object.keys(settings.labels).sort()) {
      labels.set(address.toLowerCase(), settings.labels[address]!)
    }
  }
  let prices = EMPTY_PRICES
  if (settings.prices !== undefined) {
    const indexed = indexPrices(settings.prices)
    if (typeof indexed === "string") return Either.left(new LedgerInvalidSettings({ reason: indexed }))
    prices = indexed
  }
  if (settings.rates !== undefined) {
    for (const entry of settings.rates.rates) {
      if (!/^\d+(\.\d+)?$/.test(entry.rate) || /^0+(\.0+)?$/.test(entry.rate)) {
        return Either.left(new LedgerInvalidSettings({ reason: `rate for ${entry.date} is not a positive decimal` }))
      }
    }
  }
  const initialMultipliers = new Map<string, bigint>()
  if (settings.initialMultipliers !== undefined) {
    for (const [token, value] of Object.entries(settings.initialMultipliers)) {
      if (!/^\d+$/.test(value) || BigInt(value) === 0n) {
        return Either.left(
          new LedgerInvalidSettings({ reason: `initial multiplier of ${token} must be a positive integer` })
        )
      }
      initialMultipliers.set(token, BigInt(value))
    }
  }
  return Either.right({
    settings,
    rule: countryRule(settings.country),
    classify: { own, labels },
    prices,
    rates: settings.rates,
    currency: reportingCurrencyOf(settings.rates),
    initialMultipliers
  })
}

const emptyLog = <A>(): AppendLog<A> => ({ items: [], length: 0, base: 0 })
const logOf = <A>(items: Array<A>, base: number): AppendLog<A> => ({ items, length: base + items.length, base })

/** A ledger with no events, for the given settings (wallets, country, labels, prices, rates). */
export const empty = (settings: LedgerSettings): Either.Either<LedgerState, LedgerInvalidSettings> =>
  Either.map(makeContext(settings), (context) => ({
    [LedgerStateTypeId]: LedgerStateTypeId,
    context,
    books: new Map(),
    movements: emptyLog(),
    disposals: emptyLog(),
    income: emptyLog(),
    splits: emptyLog(),
    ignored: emptyLog(),
    duplicates: emptyLog(),
    released: { realised: new Map(), realisedTaxable: new Map(), needsReview: 0 },
    cursor: { block: -1, logIndex: Number.NEGATIVE_INFINITY, event: null },
    seq: 0,
    eventCount: 0
  }))

// ---------------------------------------------------------------------------------------------------------------
// Applying events

const sameLog = (a: TransferEvent, b: TransferEvent): boolean =>
  a.txHash.toLowerCase() === b.txHash.toLowerCase() &&
  a.from.toLowerCase() === b.from.toLowerCase() &&
  a.to.toLowerCase() === b.to.toLowerCase() &&
  a.raw === b.raw &&
  a.tokenAddress.toLowerCase() === b.tokenAddress.toLowerCase()

const applyEvent = (work: Work, event: LedgerEvent): LedgerError | undefined => {
  const cursor = work
  if (event.block < cursor.block || (event.block === cursor.block && event.logIndex < cursor.logIndex)) {
    return new LedgerEventsOutOfOrder({
      eventId: event.id,
      block: event.block,
      logIndex: event.logIndex,
      previousEventId: cursor.last?.id ?? "",
      previousBlock: cursor.block,
      previousLogIndex: cursor.logIndex
    })
  }
  if (event.block === cursor.block && event.logIndex === cursor.logIndex) {
    const previous = cursor.last!
    if (event.kind === "transfer" && previous.kind === "transfer") {
      if (!sameLog(event, previous)) {
        return new LedgerInvalidEvent({
          eventId: event.id,
          reason: `a different log than ${previous.id} at block ${event.block}, log index ${event.logIndex}`
        })
      }
      work.duplicates.push({ eventId: event.id, sameAs: previous.id })
      return undefined
    }
    if (event.kind !== "multiplier" || previous.kind !== "multiplier") {
      return new LedgerInvalidEvent({
        eventId: event.id,
        reason: `shares block ${event.block}, log index ${event.logIndex} with ${previous.id}: ` +
          "give multiplier changes a log index before the block's transfers"
      })
    }
  }
  work.block = event.block
  work.logIndex = event.logIndex
  work.last = event
  work.eventCount++
  return event.kind === "transfer" ? applyTransfer(work, event) : applyMultiplier(work, event)
}

export interface ApplyOptions {
  /**
   * The caller gives `state` up (a long build applying chunk after chunk): its lots are changed in place instead of
   * copied for the new state, so a chunk costs O(its events), not O(open lots). `state` must not be used again,
   * even when the apply fails (rebuild then).
   */
  readonly consume?: boolean
}

/**
 * Applies events, in (block, logIndex) order, after those already in `state`. Returns a new state; `state` is left
 * as it was (a failure leaves nothing half-applied), unless `options.consume`.
 * `report(apply(apply(empty, a), b))` equals `report(build(a ++ b))`.
 */
export const apply = (
  state: LedgerState,
  events: ReadonlyArray<LedgerEvent>,
  options?: ApplyOptions
): Either.Either<LedgerState, LedgerError> => {
  const work: Work = {
    context: state.context,
    books: new Map(state.books),
    copied: options?.consume === true ? new Set(state.books.keys()) : new Set(),
    movements: ownItems(state.movements),
    disposals: ownItems(state.disposals),
    income: ownItems(state.income),
    splits: ownItems(state.splits),
    ignored: ownItems(state.ignored),
    duplicates: ownItems(state.duplicates),
    block: state.cursor.block,
    logIndex: state.cursor.logIndex,
    last: state.cursor.event,
    seq: state.seq,
    eventCount: state.eventCount
  }
  const lengths = [
    state.movements.length - state.movements.base,
    state.disposals.length - state.disposals.base,
    state.income.length - state.income.base,
    state.splits.length - state.splits.base,
    state.ignored.length - state.ignored.base,
    state.duplicates.length - state.duplicates.base
  ] as const
  const logs = [work.movements, work.disposals, work.income, work.splits, work.ignored, work.duplicates] as const
  for (const event of events) {
    const error = applyEvent(work, event)
    if (error !== undefined) {
      // Items pushed past the state's lengths are invisible to it; trim them so the array can be reused.
      logs.forEach((log, i) => (log.length = lengths[i]!))
      return Either.left(error)
    }
  }
  return Either.right({
    [LedgerStateTypeId]: LedgerStateTypeId,
    context: state.context,
    books: work.books,
    movements: logOf(work.movements, state.movements.base),
    disposals: logOf(work.disposals, state.disposals.base),
    income: logOf(work.income, state.income.base),
    splits: logOf(work.splits, state.splits.base),
    ignored: logOf(work.ignored, state.ignored.base),
    duplicates: logOf(work.duplicates, state.duplicates.base),
    released: state.released,
    cursor: work.last === state.cursor.event
      ? state.cursor
      : { block: work.block, logIndex: work.logIndex, event: work.last },
    seq: work.seq,
    eventCount: work.eventCount
  })
}

/**
 * The state with newer inputs that only extend the ones it was built with: a price table with rounds recorded
 * since (the rounds up to the state's last event unchanged), a rate table with more dates, initial multipliers for
 * tokens not seen yet. Events already applied keep the figures they had; the events applied next, and the report,
 * use the new tables. This is how an incremental build resumes from a checkpoint:
 * `apply(withInputs(build(a), newer), b)` reports like `build(a ++ b)` under `newer`.
 */
export const withInputs = (
  state: LedgerState,
  inputs: Pick<LedgerSettings, "prices" | "rates" | "initialMultipliers">
): Either.Either<LedgerState, LedgerInvalidSettings> =>
  Either.map(
    makeContext({ ...state.context.settings, ...inputs }),
    (context): LedgerState => ({ ...state, context })
  )

/** The ledger of `input.events` under `input`'s settings. */
export const build = (
  input: LedgerSettings & { readonly events: ReadonlyArray<LedgerEvent> }
): Either.Either<LedgerState, LedgerError> => Either.flatMap(empty(input), (state) => apply(state, input.events))

/**
 * The report of a state: positions, lots, disposals, income, movements and totals. `asOf` gives the year of the
 * "in year" figures and the price of the current value; the positions reflect every event applied.
 */
export const report = (state: LedgerState, asOf: number, options?: ReportOptions): LedgerReport =>
  buildReport(state, asOf, options)

/** `report(build(input), input.asOf)`. */
export const run = (input: LedgerInput): Either.Either<LedgerReport, LedgerError> =>
  Either.map(build(input), (state) => report(state, input.asOf))
