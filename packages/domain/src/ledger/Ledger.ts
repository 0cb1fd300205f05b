import { Either } from "effect"
import {
  accruedPerRaw,
  addStep,
  copyAccrual,
  emptyAccrual,
  incomeOf,
  position,
  startAccruing,
  stopAccruing
} from "./Accrual.js"
import { type ResolvedMovement, resolveMovement } from "./Classify.js"
import { reportingCurrencyOf } from "./Convert.js"
import { countryRule } from "./CountryRule.js"
import { divRound, formatWad, PRICE_SCALE } from "./Fixed.js"
import { type LedgerError, LedgerEventsOutOfOrder, LedgerInvalidEvent, LedgerInvalidSettings } from "./LedgerErrors.js"
import type {
  CounterpartyLabel,
  LedgerEvent,
  LedgerInput,
  LedgerSettings,
  MultiplierEvent,
  TransferEvent
} from "./LedgerInput.js"
import type { Issue, LedgerReport, NullReason, NullReasonCode } from "./LedgerReport.js"
import {
  type AppendLog,
  type DisposalRecord,
  type DuplicateRecord,
  type Holder,
  type IncomeRecord,
  type LedgerContext,
  type LedgerState,
  LedgerStateTypeId,
  type LotQueue,
  type LotRecord,
  type MovementRecord,
  type SplitRecord,
  type TokenBook
} from "./LedgerState.js"
import { copyQueue, insertLot, moveSlices, newQueue, type Slice, takeFifo } from "./Lots.js"
import { indexPrices, priceAt, type PriceIndex, type PriceRef } from "./Prices.js"
import { buildReport, type ReportOptions } from "./ReportBuilder.js"

export { lotRows } from "./LotFigures.js"
export { type ReportOptions } from "./ReportBuilder.js"
export { disposalRows, incomeRows, movementRows, release, type RowCounts, rowCounts, splitRows } from "./ReportRows.js"

const ONE = 10n ** 18n
const EMPTY_PRICES: PriceIndex = new Map()
const NO_REASONS: ReadonlyArray<NullReason> = []
const NO_IDS: ReadonlyArray<string> = []
const NO_SPANS: ReadonlyArray<readonly [number, number]> = []
const ACCOUNT_POOL = "account"

// ---------------------------------------------------------------------------------------------------------------
// Settings

const makeContext = (settings: LedgerSettings): Either.Either<LedgerContext, LedgerInvalidSettings> => {
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

interface Work {
  readonly context: LedgerContext
  readonly books: Map<string, TokenBook>
  readonly copied: Set<string>
  readonly movements: Array<MovementRecord>
  readonly disposals: Array<DisposalRecord>
  readonly income: Array<IncomeRecord>
  readonly splits: Array<SplitRecord>
  readonly ignored: Array<Issue>
  readonly duplicates: Array<DuplicateRecord>
  /** The last applied event's position (fields, not an object per event). */
  block: number
  logIndex: number
  last: LedgerEvent | null
  seq: number
  eventCount: number
}

const ownItems = <A>(log: AppendLog<A>): Array<A> =>
  log.items.length === log.length - log.base ? log.items : log.items.slice(0, log.length - log.base)

const copyBook = (book: TokenBook): TokenBook => {
  const pools = new Map<string, LotQueue>()
  for (const [key, queue] of book.pools) pools.set(key, copyQueue(queue))
  const holders = new Map<string, Holder>()
  for (const [key, holder] of book.holders) holders.set(key, { ...holder, issues: holder.issues.slice() })
  return {
    symbol: book.symbol,
    tokenAddress: book.tokenAddress,
    multiplier: book.multiplier,
    pools,
    transit: copyQueue(book.transit),
    accrual: copyAccrual(book.accrual),
    holders,
    issues: book.issues.slice()
  }
}

const bookOf = (work: Work, symbol: string, tokenAddress: string): TokenBook => {
  let book = work.books.get(symbol)
  if (!work.copied.has(symbol)) {
    book = book === undefined
      ? {
        symbol,
        tokenAddress,
        multiplier: work.context.initialMultipliers.get(symbol) ?? ONE,
        pools: new Map(),
        transit: newQueue(),
        accrual: emptyAccrual(),
        holders: new Map(),
        issues: []
      }
      : copyBook(book)
    work.books.set(symbol, book)
    work.copied.add(symbol)
  }
  return book!
}

const holderOf = (book: TokenBook, key: string, address: string, watched: boolean): Holder => {
  let holder = book.holders.get(key)
  if (holder === undefined) {
    holder = { key, address, watched, raw: 0n, encumbered: 0n, issues: [] }
    book.holders.set(key, holder)
  }
  return holder
}

const poolOf = (work: Work, book: TokenBook, holderKey: string): LotQueue => {
  const key = work.context.rule.lotScope === "wallet" ? holderKey : ACCOUNT_POOL
  let queue = book.pools.get(key)
  if (queue === undefined) {
    queue = newQueue()
    book.pools.set(key, queue)
  }
  return queue
}

/** FIFO slices of a pool; the lot split in two keeps its income to the last digit (see `restOf`). */
const takeFrom = (book: TokenBook, queue: LotQueue, raw: bigint): Array<Slice> => {
  const { accrual } = book
  const at = position(accrual)
  return takeFifo(queue, raw, (lot) => accruedPerRaw(accrual.index, accrual.unpriced, lot, at))
}

/** Keeps `encumbered` within what the holder owns after its balance went down. */
const reduceHolding = (holder: Holder, raw: bigint): void => {
  holder.raw -= raw
  if (holder.encumbered > holder.raw) holder.encumbered = holder.raw
}

const newLot = (
  work: Work,
  book: TokenBook,
  id: string,
  event: TransferEvent,
  raw: bigint,
  price: PriceRef | null,
  usd: bigint | null,
  nullReasons: ReadonlyArray<NullReason>,
  dateUnknown = false
): LotRecord => ({
  id,
  seq: work.seq++,
  acquiredAt: event.timestamp,
  raw,
  multiplier: book.multiplier,
  price,
  acquisitionUsd: usd,
  spans: NO_SPANS,
  incomeAdjust: 0n,
  accruingFrom: position(book.accrual),
  sourceEventId: event.id,
  nullReasons,
  dateUnknown
})

const unknownLot = (
  work: Work,
  book: TokenBook,
  event: TransferEvent,
  raw: bigint,
  reason: NullReasonCode
): LotRecord =>
  newLot(work, book, `${event.id}#unmatched`, event, raw, null, null, [{ reason, eventId: event.id }], true)

const incompleteHistory = (holder: Holder, event: TransferEvent, missing: bigint, recorded: bigint): void => {
  holder.issues.push({
    kind: "incomplete_history",
    eventId: event.id,
    detail: `${formatWad(missing)} tokens left ${holder.address} beyond the ${formatWad(recorded)} recorded there`
  })
}

interface Display {
  readonly address: string
  readonly watched: boolean
}

const displays = new WeakMap<LedgerContext, Map<string, Display>>()

/** How an address is shown: an own one as its settings spell it (made once per address and context). */
const displayOf = (work: Work, key: string, given: string): Display => {
  let cache = displays.get(work.context)
  if (cache === undefined) {
    cache = new Map()
    displays.set(work.context, cache)
  }
  let display = cache.get(given)
  if (display === undefined) {
    const own = work.context.classify.own.get(key)
    display = own === undefined ? { address: given, watched: false } : { address: own, watched: true }
    if (cache.size < 100_000) cache.set(given, display)
  }
  return display
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57

/** A non-negative decimal integer; cheap checks first, BigInt for the rest (it rejects inner non-digits). */
const parseRaw = (event: LedgerEvent, text: string): bigint | LedgerInvalidEvent => {
  const n = text.length
  if (
    n > 0 && isDigit(text.charCodeAt(0)) && isDigit(text.charCodeAt(n - 1)) && (n === 1 || isDigit(text.charCodeAt(1)))
  ) {
    try {
      return BigInt(text)
    } catch {
      // falls through to the error
    }
  }
  return new LedgerInvalidEvent({ eventId: event.id, reason: `not a raw integer: ${text}` })
}

const applyTransfer = (work: Work, event: TransferEvent): LedgerInvalidEvent | undefined => {
  const raw = parseRaw(event, event.raw)
  if (typeof raw !== "bigint") return raw
  const resolved = resolveMovement(work.context.classify, event)
  if (resolved === null) {
    work.ignored.push({
      kind: "no_own_address",
      eventId: event.id,
      detail: `neither ${event.from} nor ${event.to} is own`
    })
    return undefined
  }
  const { rule } = work.context
  const book = bookOf(work, event.token, event.tokenAddress)
  const price = priceAt(work.context.prices, event.token, event.timestamp)
  const fromDisplay = displayOf(work, event.from.toLowerCase(), event.from)
  const toDisplay = displayOf(work, event.to.toLowerCase(), event.to)
  const walletDisplay = resolved.direction === "in" ? toDisplay : fromDisplay
  const counterpartyDisplay = resolved.direction === "in" ? fromDisplay : toDisplay
  const holder = holderOf(book, resolved.walletKey, walletDisplay.address, walletDisplay.watched)
  if (resolved.typeMismatch) {
    holder.issues.push({
      kind: "type_direction_mismatch",
      eventId: event.id,
      detail: `classified ${resolved.classification.type} but the tokens moved ${resolved.direction}`
    })
  }
  const lotIds: Array<string> = []
  let disposalCount = 0
  let nullReasons: ReadonlyArray<NullReason> = NO_REASONS
  switch (resolved.treatment) {
    case "acquisition": {
      let reasons: ReadonlyArray<NullReason> = NO_REASONS
      if (resolved.unconfirmed || price === null) {
        const list: Array<NullReason> = []
        if (resolved.unconfirmed) list.push({ reason: "unconfirmed_label", eventId: event.id })
        if (price === null) list.push({ reason: "missing_price", eventId: event.id })
        reasons = list
      }
      if (raw > 0n) {
        const usd = resolved.unconfirmed || price === null ? null : divRound(raw * price.answer, PRICE_SCALE)
        const lot = newLot(work, book, event.id, event, raw, price, usd, reasons)
        insertLot(poolOf(work, book, holder.key), lot)
        holder.raw += raw
        lotIds.push(lot.id)
      }
      nullReasons = reasons
      break
    }
    case "disposal": {
      const disposed = disposeOf(work, book, holder, event, raw, resolved, price, counterpartyDisplay.address)
      nullReasons = disposed.nullReasons
      disposalCount = disposed.count
      break
    }
    case "self_transfer": {
      const senderKey = resolved.direction === "in" ? resolved.counterpartyKey : resolved.walletKey
      const receiverKey = resolved.direction === "in" ? resolved.walletKey : resolved.counterpartyKey
      const senderDisplay = resolved.direction === "in" ? counterpartyDisplay : walletDisplay
      const receiverDisplay = resolved.direction === "in" ? walletDisplay : counterpartyDisplay
      const sender = holderOf(book, senderKey, senderDisplay.address, senderDisplay.watched)
      const receiver = holderOf(book, receiverKey, receiverDisplay.address, receiverDisplay.watched)
      const moved = raw < sender.raw ? raw : sender.raw
      if (rule.lotScope === "wallet" && moved > 0n) {
        const slices = takeFrom(book, poolOf(work, book, senderKey), moved)
        moveSlices(slices, event.id, poolOf(work, book, receiverKey), lotIds)
      }
      reduceHolding(sender, moved)
      receiver.raw += raw
      if (raw > moved) {
        const reason = sender.watched ? "incomplete_history" : "self_transfer_unmatched"
        if (sender.watched) incompleteHistory(sender, event, raw - moved, moved)
        const lot = unknownLot(work, book, event, raw - moved, reason)
        insertLot(poolOf(work, book, receiverKey), lot)
        lotIds.push(lot.id)
        nullReasons = lot.nullReasons
      }
      break
    }
    case "collateral_post": {
      const free = holder.raw - holder.encumbered
      if (raw > free) {
        holder.issues.push({
          kind: "collateral_exceeds_balance",
          eventId: event.id,
          detail: `${formatWad(raw)} tokens posted but only ${formatWad(free)} recorded free`
        })
        holder.encumbered = holder.raw
      } else {
        holder.encumbered += raw
      }
      break
    }
    case "collateral_withdraw": {
      if (raw <= holder.encumbered) {
        holder.encumbered -= raw
      } else {
        const excess = raw - holder.encumbered
        holder.encumbered = 0n
        const lot = unknownLot(work, book, event, excess, "collateral_unmatched")
        insertLot(poolOf(work, book, holder.key), lot)
        holder.raw += excess
        lotIds.push(lot.id)
        nullReasons = lot.nullReasons
      }
      break
    }
    case "bridge_out": {
      const moved = raw < holder.raw ? raw : holder.raw
      if (moved > 0n) {
        const at = position(book.accrual)
        moveSlices(
          takeFrom(book, poolOf(work, book, holder.key), moved),
          event.id,
          book.transit,
          lotIds,
          (lot) => stopAccruing(lot, at)
        )
      }
      reduceHolding(holder, moved)
      if (raw > moved) incompleteHistory(holder, event, raw - moved, moved)
      break
    }
    case "bridge_in": {
      const matched = raw < book.transit.total ? raw : book.transit.total
      const receiving = poolOf(work, book, holder.key)
      if (matched > 0n) {
        const at = position(book.accrual)
        moveSlices(takeFrom(book, book.transit, matched), event.id, receiving, lotIds, (lot) => startAccruing(lot, at))
      }
      if (raw > matched) {
        const lot = unknownLot(work, book, event, raw - matched, "bridge_unmatched")
        insertLot(receiving, lot)
        lotIds.push(lot.id)
        nullReasons = lot.nullReasons
      }
      holder.raw += raw
      break
    }
  }
  work.movements.push({
    classification: resolved.classification,
    needsReview: resolved.needsReview,
    unconfirmed: resolved.unconfirmed,
    treatment: resolved.treatment,
    direction: resolved.direction,
    walletKey: resolved.walletKey,
    counterpartyKey: resolved.counterpartyKey,
    typeMismatch: resolved.typeMismatch,
    event,
    wallet: resolved.direction === "self" ? fromDisplay.address : walletDisplay.address,
    counterparty: resolved.direction === "self" ? toDisplay.address : counterpartyDisplay.address,
    multiplier: book.multiplier,
    price,
    taxable: resolved.treatment === "disposal" && rule.disposalsTaxable,
    lotIds: lotIds.length === 0 ? NO_IDS : lotIds,
    disposalCount,
    nullReasons
  })
  return undefined
}

const disposeOf = (
  work: Work,
  book: TokenBook,
  holder: Holder,
  event: TransferEvent,
  raw: bigint,
  resolved: ResolvedMovement,
  price: PriceRef | null,
  counterparty: string
): { readonly nullReasons: ReadonlyArray<NullReason>; readonly count: number } => {
  const recorded = holder.raw
  const matched = raw < recorded ? raw : recorded
  const slices: Array<Slice | null> = matched > 0n ? takeFrom(book, poolOf(work, book, holder.key), matched) : []
  reduceHolding(holder, matched)
  if (raw > matched) {
    incompleteHistory(holder, event, raw - matched, recorded)
    slices.push(null)
  }
  if (resolved.unconfirmed) {
    holder.issues.push({
      kind: "unconfirmed_label",
      eventId: event.id,
      detail: "a model label not yet confirmed: proceeds and gain are not used until it is"
    })
  }
  const eventReasons: Array<NullReason> = []
  if (resolved.unconfirmed) eventReasons.push({ reason: "unconfirmed_label", eventId: event.id })
  if (price === null) eventReasons.push({ reason: "missing_price", eventId: event.id })
  const taxable = work.context.rule.disposalsTaxable
  for (let slice = 0; slice < slices.length; slice++) {
    const taken = slices[slice]!
    const lot = taken === null ? null : taken.lot
    let reasons: ReadonlyArray<NullReason> = eventReasons
    if (lot === null) reasons = [...eventReasons, { reason: "incomplete_history", eventId: event.id }]
    else if (lot.nullReasons.length > 0) reasons = [...eventReasons, ...lot.nullReasons]
    work.disposals.push({
      event,
      slice,
      type: resolved.classification.type,
      wallet: holder.address,
      counterparty,
      raw: taken === null ? raw - matched : taken.raw,
      multiplier: book.multiplier,
      lot,
      step: position(book.accrual),
      price,
      unconfirmed: resolved.unconfirmed,
      taxable,
      needsReview: resolved.needsReview,
      classifiedBy: resolved.classification.classifiedBy,
      nullReasons: reasons
    })
  }
  return { nullReasons: eventReasons, count: slices.length }
}

const applyMultiplier = (work: Work, event: MultiplierEvent): LedgerInvalidEvent | undefined => {
  const from = parseRaw(event, event.from)
  if (typeof from !== "bigint") return from
  const to = parseRaw(event, event.to)
  if (typeof to !== "bigint") return to
  if (from === 0n || to === 0n) {
    return new LedgerInvalidEvent({ eventId: event.id, reason: "a multiplier cannot be zero" })
  }
  const book = bookOf(work, event.token, event.tokenAddress)
  const holders = [...book.holders.values()].filter((h) => h.raw > 0n).sort((a, b) => (a.key < b.key ? -1 : 1))
  if (from !== book.multiplier && holders.length > 0) {
    book.issues.push({
      kind: "multiplier_discontinuity",
      eventId: event.id,
      detail: `the step starts from ${formatWad(from)} but the record had ${formatWad(book.multiplier)}`
    })
  }
  if (event.stepKind === "dividend" && to > from) {
    dividendStep(work, book, event, holders, from, to)
  } else if (to !== from) {
    if (event.stepKind === "dividend") {
      book.issues.push({
        kind: "multiplier_decrease_as_dividend",
        eventId: event.id,
        detail: `a dividend step cannot lower the multiplier (${formatWad(from)} → ${
          formatWad(to)
        }): no income recorded`
      })
    }
    for (const holder of holders) {
      work.splits.push({ id: `${event.id}:${holder.key}`, event, wallet: holder.address, from, to, raw: holder.raw })
    }
  }
  book.multiplier = to
  return undefined
}

const lotIdsOf = (queue: LotQueue | undefined): ReadonlyArray<string> => {
  if (queue === undefined) return NO_IDS
  const { head, lots } = queue
  const ids: Array<string> = new Array(lots.length - head)
  for (let i = head; i < lots.length; i++) ids[i - head] = lots[i]!.id
  return ids
}

/**
 * A dividend step: one entry in the token's income index (the lots' income is derived from it when shown) and
 * an income record per holder: its pool's raw × the step's income per raw unit (wallet scope), or its own raw
 * balance × the formula (account scope).
 */
const dividendStep = (
  work: Work,
  book: TokenBook,
  event: MultiplierEvent,
  holders: ReadonlyArray<Holder>,
  from: bigint,
  to: bigint
): void => {
  const price = priceAt(work.context.prices, event.token, event.effectiveAt)
  // income (attoUSD) = raw/1e18 × (m' − m)/1e18 × (answer/1e8) / (m/1e18) × 1e18 = raw × (m' − m) × answer / (m × 1e8)
  const factor = price === null ? null : (to - from) * price.answer
  const denominator = from * PRICE_SCALE
  const step = addStep(
    book.accrual,
    { kind: "income", eventId: event.id, at: event.effectiveAt, price },
    factor,
    denominator
  )
  const reasons: ReadonlyArray<NullReason> = price === null
    ? [{ reason: "missing_price", eventId: event.id }]
    : NO_REASONS
  const taxable = work.context.rule.incomeTaxable
  const wallet = work.context.rule.lotScope === "wallet"
  const accountIds = wallet ? NO_IDS : lotIdsOf(book.pools.get(ACCOUNT_POOL))
  for (const holder of holders) {
    const pool = wallet ? book.pools.get(holder.key) : undefined
    const raw = wallet ? (pool === undefined ? 0n : pool.total) : holder.raw
    const income = step.perRaw === null
      ? null
      : wallet
      ? incomeOf(raw, step.perRaw)
      : divRound(raw * factor!, denominator)
    work.income.push({
      id: `${event.id}:${holder.key}`,
      event,
      holderKey: holder.key,
      wallet: holder.address,
      from,
      to,
      raw: holder.raw,
      price,
      income,
      taxable,
      lotIds: wallet ? lotIdsOf(pool) : accountIds,
      nullReasons: reasons
    })
  }
}

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

/**
 * Applies events, in (block, logIndex) order, after those already in `state`. Returns a new state; `state` is left
 * as it was (a failure leaves nothing half-applied). `report(apply(apply(empty, a), b))` equals `report(build(a ++ b))`.
 */
export const apply = (
  state: LedgerState,
  events: ReadonlyArray<LedgerEvent>
): Either.Either<LedgerState, LedgerError> => {
  const work: Work = {
    context: state.context,
    books: new Map(state.books),
    copied: new Set(),
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
