import { formatMoney } from "../Currency.js"
import { divRound, formatWad, PRICE_SCALE, utcDate, utcYear, WAD } from "./Fixed.js"
import { holdingPeriod } from "./HoldingPeriod.js"
import type {
  Disposal,
  Holding,
  IncomeEvent,
  Issue,
  LedgerReport,
  Lot,
  Movement,
  NullReason,
  Position,
  SplitEvent,
  TokenBasis,
  Total
} from "./LedgerReport.js"
import type {
  DisposalRecord,
  Holder,
  IncomeRecord,
  LedgerState,
  LotRecord,
  MovementRecord,
  SplitRecord,
  TokenBook
} from "./LedgerState.js"
import { accruedAny } from "./Accrual.js"
import { Conversions, formatUsd, type LotBasis, provenance } from "./LotFigures.js"
import { priceAt } from "./Prices.js"

export interface ReportOptions {
  /**
   * Whether to include the per-event lists (movements, disposals, income, splits); default true. A large ledger
   * can leave them out and stream them with the row functions instead. Totals count them either way.
   */
  readonly rows?: boolean
}

const SHARE_PRICE_SCALE = 10n ** 28n

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const uniqueReasons = (lists: Iterable<ReadonlyArray<NullReason>>): Array<NullReason> => {
  const seen = new Set<string>()
  const out: Array<NullReason> = []
  for (const list of lists) {
    for (const reason of list) {
      const key = `${reason.reason}|${reason.eventId}`
      if (!seen.has(key)) {
        seen.add(key)
        out.push(reason)
      }
    }
  }
  return out
}

class TotalBuilder {
  private knownUsd = 0n
  private knownConverted = 0n
  private count = 0
  private unknownCount = 0
  private unconvertedCount = 0

  add(usd: bigint | null, converted: bigint | null): void {
    this.count++
    if (usd === null) {
      this.unknownCount++
      return
    }
    this.knownUsd += usd
    if (converted === null) this.unconvertedCount++
    else this.knownConverted += converted
  }

  done(): Total {
    const knownConverted = formatWad(this.knownConverted)
    return {
      usd: this.unknownCount === 0 ? formatWad(this.knownUsd) : null,
      knownUsd: formatWad(this.knownUsd),
      converted: this.unknownCount === 0 && this.unconvertedCount === 0 ? knownConverted : null,
      knownConverted,
      count: this.count,
      unknownCount: this.unknownCount,
      unconvertedCount: this.unconvertedCount
    }
  }
}

const minus = (a: bigint | null, b: bigint | null): bigint | null => (a === null || b === null ? null : a - b)

// ---------------------------------------------------------------------------------------------------------------
// Rows

interface DisposalFigures {
  readonly date: string
  readonly proceedsUsd: bigint | null
  readonly basisUsd: bigint | null
  readonly gainUsd: bigint | null
  readonly proceeds: bigint | null
  readonly basis: bigint | null
  readonly gain: bigint | null
}

const disposalFigures = (state: LedgerState, conversions: Conversions, record: DisposalRecord): DisposalFigures => {
  const date = utcDate(record.event.timestamp)
  const { lot, price } = record
  const proceedsUsd = record.unconfirmed || price === null ? null : divRound(record.raw * price.answer, PRICE_SCALE)
  const figures = lot === null
    ? null
    : conversions.basis(state.books.get(record.event.token)!.accrual, lot, record.step, record.raw)
  const basisUsd = figures === null ? null : figures.basisUsd
  const proceeds = conversions.amount(proceedsUsd, date)
  const basis = figures === null ? null : figures.basisConverted
  const gainUsd = minus(proceedsUsd, basisUsd)
  return {
    date,
    proceedsUsd,
    basisUsd,
    gainUsd,
    proceeds,
    basis,
    gain: gainUsd === null ? null : minus(proceeds, basis)
  }
}

const disposalRow = (state: LedgerState, conversions: Conversions, record: DisposalRecord): Disposal => {
  const { event, lot } = record
  const figures = disposalFigures(state, conversions, record)
  const { date } = figures
  const acquired = lot === null ? null : utcDate(lot.acquiredAt)
  return {
    id: `${event.id}:${record.slice}`,
    eventId: event.id,
    slice: record.slice,
    type: record.type,
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    counterparty: record.counterparty,
    date,
    disposedAt: event.timestamp,
    raw: record.raw.toString(),
    qty: formatWad(record.raw),
    shares: formatWad(divRound(record.raw * record.multiplier, WAD)),
    lotId: lot === null ? null : lot.id,
    acquired,
    acquiredAt: lot === null ? null : lot.acquiredAt,
    // A lot whose acquisition date is unknown (made up for tokens no recorded lot covers) has no holding period.
    holdingPeriod: acquired === null || lot!.dateUnknown ? null : holdingPeriod(acquired, date),
    currency: state.context.currency,
    proceedsUsd: formatUsd(figures.proceedsUsd),
    basisUsd: formatUsd(figures.basisUsd),
    gainUsd: formatUsd(figures.gainUsd),
    proceeds: conversions.converted(figures.proceedsUsd, date),
    basis: formatUsd(figures.basis),
    gain: formatUsd(figures.gain),
    price: provenance(record.price),
    basisComponents: lot === null
      ? []
      : conversions.components(state.books.get(event.token)!.accrual, lot, record.step, record.raw),
    taxable: record.taxable,
    needsReview: record.needsReview,
    classifiedBy: record.classifiedBy,
    nullReasons: [...record.nullReasons],
    walletTransaction: { txHash: event.txHash, block: event.block, logIndex: event.logIndex }
  }
}

const incomeRow = (state: LedgerState, conversions: Conversions, record: IncomeRecord): IncomeEvent => {
  const { event, price } = record
  const date = utcDate(event.effectiveAt)
  return {
    id: record.id,
    eventId: event.id,
    type: "income.multiplier_increase",
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    block: event.block,
    effectiveAt: event.effectiveAt,
    date,
    from: formatWad(record.from),
    to: formatWad(record.to),
    rawBalance: formatWad(record.raw),
    addedShares: formatWad(divRound(record.raw * (record.to - record.from), WAD)),
    sharePriceUsd: price === null ? null : formatWad(divRound(price.answer * SHARE_PRICE_SCALE, record.from)),
    price: provenance(price),
    currency: state.context.currency,
    incomeUsd: formatUsd(record.income),
    income: conversions.converted(record.income, date),
    taxable: record.taxable,
    needsReview: false,
    walletTransaction: null,
    lotIds: [...record.lotIds],
    nullReasons: [...record.nullReasons]
  }
}

const splitRow = (record: SplitRecord): SplitEvent => {
  const { event } = record
  return {
    id: record.id,
    eventId: event.id,
    type: "split",
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    block: event.block,
    effectiveAt: event.effectiveAt,
    date: utcDate(event.effectiveAt),
    from: formatWad(record.from),
    to: formatWad(record.to),
    rawBalance: formatWad(record.raw),
    sharesBefore: formatWad(divRound(record.raw * record.from, WAD)),
    sharesAfter: formatWad(divRound(record.raw * record.to, WAD)),
    taxable: false,
    walletTransaction: null
  }
}

const movementRow = (state: LedgerState, conversions: Conversions, record: MovementRecord): Movement => {
  const { classification, event } = record
  const date = utcDate(event.timestamp)
  const raw = BigInt(event.raw)
  const valueUsd = record.price === null ? null : divRound(raw * record.price.answer, PRICE_SCALE)
  const disposalIds: Array<string> = new Array(record.disposalCount)
  for (let i = 0; i < record.disposalCount; i++) disposalIds[i] = `${event.id}:${i}`
  return {
    id: event.id,
    type: classification.type,
    relationship: classification.relationship,
    classifiedBy: classification.classifiedBy,
    confirmed: classification.classifiedBy === "user" || classification.confirmed,
    needsReview: record.needsReview,
    taxable: record.taxable,
    treatment: record.treatment,
    direction: record.direction,
    token: event.token,
    tokenAddress: event.tokenAddress,
    wallet: record.wallet,
    counterparty: record.counterparty,
    raw: raw.toString(),
    qty: formatWad(raw),
    shares: formatWad(divRound(raw * record.multiplier, WAD)),
    date,
    timestamp: event.timestamp,
    currency: state.context.currency,
    valueUsd: formatUsd(valueUsd),
    value: conversions.converted(valueUsd, date),
    price: provenance(record.price),
    lotIds: [...record.lotIds],
    disposalIds,
    nullReasons: [...record.nullReasons],
    walletTransaction: { txHash: event.txHash, block: event.block, logIndex: event.logIndex }
  }
}

/**
 * The classified movements, in event order (GET /v1/events), formatted one at a time; from the `from`-th on (an
 * incremental build writes only those after its checkpoint).
 */
export function* movementRows(state: LedgerState, from = 0): Generator<Movement> {
  const conversions = new Conversions(state)
  for (let i = from; i < state.movements.length; i++) yield movementRow(state, conversions, state.movements.items[i]!)
}

/** The disposal rows (one per lot slice), in event order; from the `from`-th on. */
export function* disposalRows(state: LedgerState, from = 0): Generator<Disposal> {
  const conversions = new Conversions(state)
  for (let i = from; i < state.disposals.length; i++) yield disposalRow(state, conversions, state.disposals.items[i]!)
}

/** The income events of dividend steps (one per holder), in event order; from the `from`-th on. */
export function* incomeRows(state: LedgerState, from = 0): Generator<IncomeEvent> {
  const conversions = new Conversions(state)
  for (let i = from; i < state.income.length; i++) yield incomeRow(state, conversions, state.income.items[i]!)
}

/** The split records (one per holder), in event order; from the `from`-th on. */
export function* splitRows(state: LedgerState, from = 0): Generator<SplitEvent> {
  for (let i = from; i < state.splits.length; i++) yield splitRow(state.splits.items[i]!)
}

/** How many rows of each list a state holds: where an incremental build's new rows start. */
export interface RowCounts {
  readonly movements: number
  readonly disposals: number
  readonly income: number
  readonly splits: number
}

export const rowCounts = (state: LedgerState): RowCounts => ({
  movements: state.movements.length,
  disposals: state.disposals.length,
  income: state.income.length,
  splits: state.splits.length
})

// ---------------------------------------------------------------------------------------------------------------
// The report

/** Builds the report of a ledger state. Pure: the same state and asOf give byte-identical JSON. */
export const buildReport = (state: LedgerState, asOf: number, options: ReportOptions = {}): LedgerReport => {
  const { context } = state
  const { currency, rule } = context
  const withRows = options.rows ?? true
  const year = utcYear(asOf)
  const asOfDate = utcDate(asOf)
  const inYear = (t: number): boolean => t <= asOf && utcYear(t) === year
  const conversions = new Conversions(state)
  const books = [...state.books.values()].sort((a, b) => byString(a.symbol, b.symbol))
  const openLots = (book: TokenBook, poolKey: string): ReadonlyArray<LotRecord> => {
    const queue = book.pools.get(poolKey)
    return queue === undefined ? [] : queue.lots.slice(queue.head)
  }

  // Lots ---------------------------------------------------------------------------------------------------------
  const lots: Array<Lot> = []
  const lotBasis = new Map<LotRecord, LotBasis>()
  const basisOf = (book: TokenBook, lot: LotRecord): LotBasis => {
    let figures = lotBasis.get(lot)
    if (figures === undefined) {
      figures = conversions.basis(book.accrual, lot, book.accrual.steps.length)
      lotBasis.set(lot, figures)
    }
    return figures
  }
  const lotOut = (book: TokenBook, lot: LotRecord, location: Lot["location"], wallet: string | null): void => {
    const at = book.accrual.steps.length
    const components = conversions.components(book.accrual, lot, at)
    const figures = basisOf(book, lot)
    const basis = figures.basisConverted
    const acquisition = components[0]
    lots.push({
      id: lot.id,
      token: book.symbol,
      tokenAddress: book.tokenAddress,
      location,
      wallet,
      acquired: utcDate(lot.acquiredAt),
      acquiredAt: lot.acquiredAt,
      raw: lot.raw.toString(),
      qty: formatWad(lot.raw),
      multiplierAtAcquisition: formatWad(lot.multiplier),
      shares: formatWad(divRound(lot.raw * book.multiplier, WAD)),
      basisUsd: formatUsd(figures.basisUsd),
      basis: formatUsd(basis),
      currency,
      rate: acquisition?.converted?.rate ?? null,
      components,
      sourceEventId: lot.sourceEventId,
      nullReasons: basis === null && figures.basisUsd !== null
        ? [...lot.nullReasons, ...conversions.staleReasons(book.accrual, lot, at)]
        : [...conversions.reasons(book.accrual, lot, at)]
    })
  }
  for (const book of books) {
    for (const poolKey of [...book.pools.keys()].sort(byString)) {
      const location = rule.lotScope === "account" ? "account" : "wallet"
      const wallet = location === "wallet" ? book.holders.get(poolKey)!.address : null
      for (const lot of openLots(book, poolKey)) lotOut(book, lot, location, wallet)
    }
    for (const lot of book.transit.lots.slice(book.transit.head)) lotOut(book, lot, "in_transit", null)
  }

  // Income of the year, per position -----------------------------------------------------------------------------
  const totalIncome = new TotalBuilder()
  const totalIncomeTaxable = new TotalBuilder()
  const unreported = new Map<string, { usd: bigint | null; converted: bigint | null; ids: Array<string> }>()
  for (let i = 0; i < state.income.length; i++) {
    const record = state.income.items[i]!
    const { event } = record
    if (!inYear(event.effectiveAt)) continue
    const converted = conversions.amount(record.income, utcDate(event.effectiveAt))
    totalIncome.add(record.income, converted)
    if (record.taxable) totalIncomeTaxable.add(record.income, converted)
    const key = `${event.token}|${rule.lotScope === "wallet" ? record.holderKey : "account"}`
    let entry = unreported.get(key)
    if (entry === undefined) {
      entry = { usd: 0n, converted: 0n, ids: [] }
      unreported.set(key, entry)
    }
    entry.ids.push(record.id)
    entry.usd = record.income === null || entry.usd === null ? null : entry.usd + record.income
    entry.converted = entry.usd === null || converted === null || entry.converted === null
      ? null
      : entry.converted + converted
    if (rule.lotScope === "account") {
      // Each holder's own income too (one record per holder), for the per-address figures of a pooled position.
      const holderKey = `${event.token}|holder|${record.holderKey}`
      let own = unreported.get(holderKey)
      if (own === undefined) {
        own = { usd: 0n, converted: 0n, ids: [] }
        unreported.set(holderKey, own)
      }
      own.ids.push(record.id)
      own.usd = record.income === null || own.usd === null ? null : own.usd + record.income
      own.converted = own.usd === null || converted === null || own.converted === null
        ? null
        : own.converted + converted
    }
  }

  // Positions ----------------------------------------------------------------------------------------------------
  const positions: Array<Position> = []
  const totalValue = new TotalBuilder()
  const totalBasis = new TotalBuilder()
  const totalUnrealised = new TotalBuilder()
  const positionReasons = (
    book: TokenBook,
    poolLots: ReadonlyArray<LotRecord>,
    valueUnconverted: boolean
  ): Array<NullReason> => {
    const at = book.accrual.steps.length
    const lists: Array<ReadonlyArray<NullReason>> = poolLots.map((lot) => conversions.reasons(book.accrual, lot, at))
    if (context.rates !== undefined) {
      for (const lot of poolLots) {
        const figures = basisOf(book, lot)
        if (figures.basisUsd !== null && figures.basisConverted === null) {
          lists.push(conversions.staleReasons(book.accrual, lot, at))
        }
      }
      if (valueUnconverted && conversions.stale(asOfDate)) {
        lists.push([{ reason: "stale_rate", eventId: `valuation:${asOfDate}` }])
      }
    }
    return uniqueReasons(lists)
  }
  const positionOut = (
    book: TokenBook,
    holders: ReadonlyArray<Holder>,
    poolKey: string,
    wallet: string | null
  ): void => {
    const poolLots = openLots(book, poolKey)
    let raw = 0n
    let encumbered = 0n
    const holdings: Array<Holding> = []
    const issues: Array<Issue> = [...book.issues]
    for (const holder of holders) {
      raw += holder.raw
      encumbered += holder.encumbered
      holdings.push({
        wallet: holder.address,
        watched: holder.watched,
        balance: formatWad(holder.raw),
        encumbered: formatWad(holder.encumbered)
      })
      for (const issue of holder.issues) issues.push(issue)
    }
    let basisUsd: bigint | null = 0n
    let basisConverted: bigint | null = 0n
    for (const lot of poolLots) {
      const figures = basisOf(book, lot)
      basisUsd = basisUsd === null || figures.basisUsd === null ? null : basisUsd + figures.basisUsd
      const converted = figures.basisConverted
      basisConverted = basisConverted === null || converted === null ? null : basisConverted + converted
    }
    if (basisUsd === null) basisConverted = null
    const income = unreported.get(`${book.symbol}|${poolKey}`)
    const incomeUsd = income === undefined ? 0n : income.usd
    const incomeConverted = income === undefined ? 0n : income.converted
    const price = priceAt(context.prices, book.symbol, asOf)
    const valueUsd = price === null ? null : divRound(raw * price.answer, PRICE_SCALE)
    const valueConverted = conversions.amount(valueUsd, asOfDate)
    if (rule.lotScope === "account") {
      // Each address's own share: its balance at the position's price, its own income, the pool's basis pro rata.
      const poolRaw = raw
      const share = (amount: bigint | null, part: bigint): bigint | null =>
        amount === null ? null : poolRaw === 0n ? 0n : divRound(amount * part, poolRaw)
      for (let h = 0; h < holders.length; h++) {
        const holder = holders[h]!
        const own = unreported.get(`${book.symbol}|holder|${holder.key}`)
        const ownIncomeUsd = own === undefined ? 0n : own.usd
        const ownIncomeConverted = own === undefined ? 0n : own.converted
        const ownBasisUsd = share(basisUsd, holder.raw)
        const ownBasisConverted = share(basisConverted, holder.raw)
        const ownValueUsd = price === null ? null : divRound(holder.raw * price.answer, PRICE_SCALE)
        const ownValueConverted = conversions.amount(ownValueUsd, asOfDate)
        const ownUnrealisedUsd = minus(ownValueUsd, ownBasisUsd)
        holdings[h] = {
          ...holdings[h]!,
          figures: {
            sharesEquivalent: formatWad(divRound(holder.raw * book.multiplier, WAD)),
            costBasisUsd: formatUsd(ownBasisUsd),
            costBasisConverted: formatUsd(ownBasisConverted),
            costBasis: ownBasisConverted === null ? null : formatMoney(formatWad(ownBasisConverted), currency),
            unreportedIncomeUsd: formatUsd(ownIncomeUsd),
            unreportedIncomeConverted: formatUsd(ownIncomeConverted),
            unreportedIncome: ownIncomeConverted === null
              ? null
              : formatMoney(formatWad(ownIncomeConverted), currency),
            unreportedIncomeEventIds: own === undefined ? [] : [...own.ids],
            value: { usd: formatUsd(ownValueUsd), converted: conversions.converted(ownValueUsd, asOfDate) },
            unrealisedGainUsd: formatUsd(ownUnrealisedUsd),
            unrealisedGainConverted: formatUsd(
              ownUnrealisedUsd === null ? null : minus(ownValueConverted, ownBasisConverted)
            )
          }
        }
      }
    }
    const unrealisedUsd = minus(valueUsd, basisUsd)
    const unrealisedConverted = unrealisedUsd === null ? null : minus(valueConverted, basisConverted)
    totalValue.add(valueUsd, valueConverted)
    totalBasis.add(basisUsd, basisConverted)
    totalUnrealised.add(unrealisedUsd, unrealisedConverted)
    positions.push({
      token: book.symbol,
      tokenAddress: book.tokenAddress,
      scope: rule.lotScope,
      wallet,
      holdings,
      balance: formatWad(raw),
      raw: raw.toString(),
      encumbered: formatWad(encumbered),
      multiplier: {
        at: formatWad(book.multiplier),
        from: poolLots.length === 0 ? null : formatWad(poolLots[0]!.multiplier)
      },
      sharesEquivalent: formatWad(divRound(raw * book.multiplier, WAD)),
      currency,
      costBasisUsd: formatUsd(basisUsd),
      costBasisConverted: formatUsd(basisConverted),
      costBasis: basisConverted === null ? null : formatMoney(formatWad(basisConverted), currency),
      unreportedIncomeUsd: formatUsd(incomeUsd),
      unreportedIncomeConverted: formatUsd(incomeConverted),
      unreportedIncome: incomeConverted === null ? null : formatMoney(formatWad(incomeConverted), currency),
      unreportedIncomeEventIds: income === undefined ? [] : [...income.ids],
      value: {
        usd: formatUsd(valueUsd),
        converted: conversions.converted(valueUsd, asOfDate),
        price: provenance(price)
      },
      unrealisedGainUsd: formatUsd(unrealisedUsd),
      unrealisedGainConverted: formatUsd(unrealisedConverted),
      openLots: poolLots.length,
      lotIds: poolLots.map((lot) => lot.id),
      nullReasons: positionReasons(book, poolLots, valueUsd !== null && valueConverted === null),
      issues
    })
  }
  for (const book of books) {
    const holders = [...book.holders.values()].sort((a, b) => byString(a.key, b.key))
    const shown = (holder: Holder, poolKey: string): boolean =>
      holder.raw > 0n || holder.issues.length > 0 || unreported.has(`${book.symbol}|${poolKey}`)
    if (rule.lotScope === "wallet") {
      for (const holder of holders) {
        if (shown(holder, holder.key)) positionOut(book, [holder], holder.key, holder.address)
      }
    } else if (holders.some((holder) => shown(holder, "account"))) {
      positionOut(book, holders.filter((holder) => holder.raw > 0n || holder.issues.length > 0), "account", null)
    }
  }

  // Token basis records ------------------------------------------------------------------------------------------
  const tokens: Array<TokenBasis> = books.map((book) => {
    let openRaw = 0n
    const lotIds: Array<string> = []
    let accrued: bigint | null = 0n
    let accruedConverted: bigint | null = 0n
    const visit = (lot: LotRecord): void => {
      lotIds.push(lot.id)
      if (!accruedAny(lot, book.accrual.steps.length)) return
      const { incomeConverted, incomeUsd } = basisOf(book, lot)
      accrued = accrued === null || incomeUsd === null ? null : accrued + incomeUsd
      accruedConverted = accruedConverted === null || incomeConverted === null ? null : accruedConverted + incomeConverted
    }
    for (const poolKey of [...book.pools.keys()].sort(byString)) {
      for (const lot of openLots(book, poolKey)) {
        openRaw += lot.raw
        visit(lot)
      }
    }
    for (const lot of book.transit.lots.slice(book.transit.head)) visit(lot)
    const accruedUsd: bigint | null = accrued
    const accruedInCurrency: bigint | null = accruedUsd === null ? null : accruedConverted
    return {
      token: book.symbol,
      tokenAddress: book.tokenAddress,
      currency,
      lotMatching: "fifo",
      lotScope: rule.lotScope,
      multiplier: formatWad(book.multiplier),
      openQty: formatWad(openRaw),
      inTransitQty: formatWad(book.transit.total),
      lotIds,
      accruedIncomeAddedToBasisUsd: formatUsd(accruedUsd),
      accruedIncomeAddedToBasis: formatUsd(accruedInCurrency),
      issues: [...book.issues]
    }
  })

  // Realised gains of the year -----------------------------------------------------------------------------------
  const totalRealised = new TotalBuilder()
  const totalRealisedTaxable = new TotalBuilder()
  for (let i = 0; i < state.disposals.length; i++) {
    const record = state.disposals.items[i]!
    if (!inYear(record.event.timestamp)) continue
    const { gain, gainUsd } = disposalFigures(state, conversions, record)
    totalRealised.add(gainUsd, gain)
    if (record.taxable) totalRealisedTaxable.add(gainUsd, gain)
  }

  let needsReview = 0
  for (let i = 0; i < state.movements.length; i++) if (state.movements.items[i]!.needsReview) needsReview++

  const value = totalValue.done()
  return {
    asOf,
    asOfDate,
    year,
    rule,
    lotMatching: "fifo",
    lotScope: rule.lotScope,
    currency,
    summary: {
      valueUsd: value.usd,
      positionCount: positions.length,
      pricedPositions: positions.filter((p) => p.value.usd !== null).length,
      positionsWithBasis: positions.filter((p) => p.costBasisUsd !== null).length,
      needsReview,
      fxCurrency: currency
    },
    totals: {
      value,
      costBasis: totalBasis.done(),
      unrealisedGain: totalUnrealised.done(),
      realisedGainInYear: totalRealised.done(),
      realisedGainTaxableInYear: totalRealisedTaxable.done(),
      incomeInYear: totalIncome.done(),
      incomeTaxableInYear: totalIncomeTaxable.done()
    },
    rowsIncluded: withRows,
    positions,
    tokens,
    lots,
    disposals: withRows ? [...disposalRows(state)] : [],
    income: withRows ? [...incomeRows(state)] : [],
    splits: withRows ? [...splitRows(state)] : [],
    movements: withRows ? [...movementRows(state)] : [],
    ignored: state.ignored.items.slice(0, state.ignored.length),
    duplicates: state.duplicates.items.slice(0, state.duplicates.length)
  }
}
