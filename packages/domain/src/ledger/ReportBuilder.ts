/** The report of a ledger state: positions, lots, token basis records and totals, with the rows of `ReportRows`. */
import { formatMoney } from "../Currency.js"
import { accruedAny } from "./Accrual.js"
import { divRound, formatWad, PRICE_SCALE, utcDate, utcYear, WAD } from "./Fixed.js"
import type { Holding, Issue, LedgerReport, Lot, NullReason, Position, TokenBasis } from "./LedgerReport.js"
import type { Holder, LedgerState, LotQueue, LotRecord, TokenBook } from "./LedgerState.js"
import {
  Conversions,
  FiguresCache,
  formatUsd,
  type LotBasis,
  lotRow,
  openLotsOf,
  type PoolFigures,
  provenance
} from "./LotFigures.js"
import { followChanges, uniqueReasons } from "./PoolSums.js"
import { priceAt } from "./Prices.js"
import {
  disposalRows,
  incomeReasons,
  incomeRows,
  minus,
  movementRows,
  needsReviewCount,
  realisedInYear,
  splitRows,
  TotalBuilder
} from "./ReportRows.js"

export interface ReportOptions {
  /**
   * Whether to include the per-event lists (movements, disposals, income, splits); default true. A large ledger
   * can leave them out and stream them with the row functions instead. Totals count them either way.
   */
  readonly rows?: boolean
  /**
   * Whether to include the open lots (with their per-step basis breakdowns) and each token record's list of their ids;
   * default true. Left out, positions (with their own lot ids) and totals are the same, the token records' `lotIds`
   * are empty, and `Ledger.lotRows` streams the lots one at a time.
   */
  readonly lots?: boolean
  /**
   * Lot figures kept from the report of an earlier state this one was applied on top of (an incremental build):
   * only the lots the new events touched are figured again.
   */
  readonly cache?: FiguresCache
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

// ---------------------------------------------------------------------------------------------------------------
// The report

/** Builds the report of a ledger state. Pure: the same state and asOf give byte-identical JSON. */
export const buildReport = (state: LedgerState, asOf: number, options: ReportOptions = {}): LedgerReport => {
  const { context } = state
  const { currency, rule } = context
  const withRows = options.rows ?? true
  const withLots = options.lots ?? true
  const year = utcYear(asOf)
  const asOfDate = utcDate(asOf)
  const inYear = (t: number): boolean => t <= asOf && utcYear(t) === year
  const conversions = new Conversions(state)
  const books = [...state.books.values()].sort((a, b) => byString(a.symbol, b.symbol))

  // Lots ---------------------------------------------------------------------------------------------------------
  const lots: Array<Lot> = []
  const cache = options.cache ?? new FiguresCache()
  const cachedOf = (book: TokenBook, lot: LotRecord) => {
    const at = book.accrual.steps.length
    return cache.get(book.accrual, lot, at) ??
      cache.set(book.accrual, lot, at, conversions.basis(book.accrual, lot, at))
  }
  const basisOf = (book: TokenBook, lot: LotRecord): LotBasis => cachedOf(book, lot).figures
  /** The sums over a queue's open lots, made again only when the queue or its token's index changed. */
  const poolOf = (book: TokenBook, queue: LotQueue): PoolFigures => {
    const kept = cache.pool(book.accrual, queue)
    if (kept !== undefined) return kept
    const at = book.accrual.steps.length
    const followed = followChanges(cache.earlierPool(book.accrual, queue), book, queue, (lot) => {
      const entry = cachedOf(book, lot)
      return { figures: entry.figures, reasons: entry.reasons ??= conversions.reasons(book.accrual, lot, at) }
    })
    if (followed !== undefined) return cache.setPool(queue, followed)
    let basisUsd: bigint | null = 0n
    let basisConverted: bigint | null = 0n
    let openRaw = 0n
    let accruedUsd: bigint | null = 0n
    let accruedConverted: bigint | null = 0n
    const lists: Array<ReadonlyArray<NullReason>> = []
    const stale: Array<ReadonlyArray<NullReason>> = []
    const lotIds: Array<string> = []
    for (let i = queue.head; i < queue.lots.length; i++) {
      const lot = queue.lots[i]!
      const entry = cachedOf(book, lot)
      const figures = entry.figures
      lotIds.push(lot.id)
      openRaw += lot.raw
      basisUsd = basisUsd === null || figures.basisUsd === null ? null : basisUsd + figures.basisUsd
      basisConverted = basisConverted === null || figures.basisConverted === null
        ? null
        : basisConverted + figures.basisConverted
      lists.push(entry.reasons ??= conversions.reasons(book.accrual, lot, at))
      if (context.rates !== undefined && figures.basisUsd !== null && figures.basisConverted === null) {
        stale.push(conversions.staleReasons(book.accrual, lot, at))
      }
      if (accruedAny(lot, at)) {
        accruedUsd = accruedUsd === null || figures.incomeUsd === null ? null : accruedUsd + figures.incomeUsd
        accruedConverted = accruedConverted === null || figures.incomeConverted === null
          ? null
          : accruedConverted + figures.incomeConverted
      }
    }
    return cache.setPool(queue, {
      version: queue.version,
      at,
      last: book.accrual.steps[at - 1],
      basisUsd,
      basisConverted,
      reasons: uniqueReasons([...lists, ...stale]),
      lotIds,
      openRaw,
      accruedUsd,
      accruedConverted
    })
  }
  const noPool: PoolFigures = {
    version: 0,
    at: 0,
    last: undefined,
    basisUsd: 0n,
    basisConverted: 0n,
    reasons: [],
    lotIds: [],
    openRaw: 0n,
    accruedUsd: 0n,
    accruedConverted: 0n
  }
  if (withLots) {
    for (const { book, location, lot, wallet } of openLotsOf(state)) {
      lots.push(lotRow(conversions, currency, book, lot, location, wallet, basisOf(book, lot)))
    }
  }

  // Income of the year, per position -----------------------------------------------------------------------------
  const totalIncome = new TotalBuilder()
  const totalIncomeTaxable = new TotalBuilder()
  /** Per position: the income of the year, and why a part of it is unknown (a step without a price, a stale rate). */
  const unreported = new Map<
    string,
    { usd: bigint | null; converted: bigint | null; ids: Array<string>; reasons: Array<ReadonlyArray<NullReason>> }
  >()
  for (let i = 0; i < state.income.length - state.income.base; i++) {
    const record = state.income.items[i]!
    const { event } = record
    if (!inYear(event.effectiveAt)) continue
    const date = utcDate(event.effectiveAt)
    const converted = conversions.amount(record.income, date)
    // The position's income is unknown with this record's: its reasons go to the position (the lots that accrued
    // it may be gone, sold or moved, and with them the reasons their basis gave).
    const reasons = converted === null ? incomeReasons(conversions, record, date) : []
    totalIncome.add(record.income, converted)
    if (record.taxable) totalIncomeTaxable.add(record.income, converted)
    const key = `${event.token}|${rule.lotScope === "wallet" ? record.holderKey : "account"}`
    let entry = unreported.get(key)
    if (entry === undefined) {
      entry = { usd: 0n, converted: 0n, ids: [], reasons: [] }
      unreported.set(key, entry)
    }
    entry.ids.push(record.id)
    if (reasons.length > 0) entry.reasons.push(reasons)
    entry.usd = record.income === null || entry.usd === null ? null : entry.usd + record.income
    entry.converted = entry.usd === null || converted === null || entry.converted === null
      ? null
      : entry.converted + converted
    if (rule.lotScope === "account") {
      // Each holder's own income too (one record per holder), for the per-address figures of a pooled position.
      const holderKey = `${event.token}|holder|${record.holderKey}`
      let own = unreported.get(holderKey)
      if (own === undefined) {
        own = { usd: 0n, converted: 0n, ids: [], reasons: [] }
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
  /**
   * The pool's reasons, why the year's income is unknown (`income`: its records' reasons), and why the current value
   * is unknown: no usable price, or a stale rate.
   */
  const positionReasons = (
    pool: PoolFigures,
    income: ReadonlyArray<ReadonlyArray<NullReason>>,
    valueUsd: bigint | null,
    valueConverted: bigint | null
  ): ReadonlyArray<NullReason> => {
    const valuation = `valuation:${asOfDate}`
    if (valueUsd === null) {
      return uniqueReasons([pool.reasons, ...income, [{ reason: "missing_price", eventId: valuation }]])
    }
    if (context.rates !== undefined && valueConverted === null && conversions.stale(asOfDate)) {
      return uniqueReasons([pool.reasons, ...income, [{ reason: "stale_rate", eventId: valuation }]])
    }
    return income.length === 0 ? pool.reasons : uniqueReasons([pool.reasons, ...income])
  }
  const positionOut = (
    book: TokenBook,
    holders: ReadonlyArray<Holder>,
    poolKey: string,
    wallet: string | null
  ): void => {
    const queue = book.pools.get(poolKey)
    const pool = queue === undefined ? noPool : poolOf(book, queue)
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
    const basisUsd = pool.basisUsd
    const basisConverted = basisUsd === null ? null : pool.basisConverted
    const income = unreported.get(`${book.symbol}|${poolKey}`)
    const incomeUsd = income === undefined ? 0n : income.usd
    const incomeConverted = income === undefined ? 0n : income.converted
    const price = priceAt(context.prices, book.symbol, asOf)
    // Nothing held is worth nothing, priced or not: a position listed after all of it left (for its income of the
    // year, or an issue) must not make the value unknown.
    const valueOf = (held: bigint): bigint | null =>
      held === 0n ? 0n : price === null ? null : divRound(held * price.answer, PRICE_SCALE)
    const valueUsd = valueOf(raw)
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
        const ownValueUsd = valueOf(holder.raw)
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
        from: pool.lotIds.length === 0 ? null : formatWad(queue!.lots[queue!.head]!.multiplier)
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
      openLots: pool.lotIds.length,
      // Shared with the kept sums: an unchanged queue gives the same array (the worker writes its row only if not).
      lotIds: pool.lotIds,
      nullReasons: [...positionReasons(pool, income?.reasons ?? [], valueUsd, valueConverted)],
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
    const visit = (pool: PoolFigures): void => {
      if (withLots) { for (const id of pool.lotIds) lotIds.push(id) }
      accrued = accrued === null || pool.accruedUsd === null ? null : accrued + pool.accruedUsd
      accruedConverted = accruedConverted === null || pool.accruedConverted === null
        ? null
        : accruedConverted + pool.accruedConverted
    }
    for (const poolKey of [...book.pools.keys()].sort(byString)) {
      const pool = poolOf(book, book.pools.get(poolKey)!)
      openRaw += pool.openRaw
      visit(pool)
    }
    visit(poolOf(book, book.transit))
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

  const realised = realisedInYear(state, conversions, year, asOf)
  const needsReview = needsReviewCount(state)

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
      // In the reporting currency, as the positions show it (a basis known only in USD is not shown).
      positionsWithBasis: positions.filter((p) => p.costBasisConverted !== null).length,
      needsReview,
      fxCurrency: currency
    },
    totals: {
      value,
      costBasis: totalBasis.done(),
      unrealisedGain: totalUnrealised.done(),
      realisedGainInYear: realised.all.done(),
      realisedGainTaxableInYear: realised.taxable.done(),
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
    ignored: state.ignored.items.slice(0, state.ignored.length - state.ignored.base),
    duplicates: state.duplicates.items.slice(0, state.duplicates.length - state.duplicates.base)
  }
}
