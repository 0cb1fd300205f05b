/**
 * The figures of a lot (or of a slice of one) when they are shown: its basis in USD and in the reporting currency,
 * the per-step breakdown of its basis, and why a figure is unknown. Derived on demand from the lot's few numbers and
 * its token's income index; each figure rounded once, half to even at 18 decimals.
 */
import type { ReportingCurrency } from "../Currency.js"
import { accruedPerRaw, incomeOf, spansOf } from "./Accrual.js"
import { applyRate, type Converted, convertedOf, rateOn, type RateQuote, staleRateOn } from "./Convert.js"
import { divRound, formatFixed, formatWad, utcDate, WAD } from "./Fixed.js"
import type { BasisComponent, Lot, NullReason, PriceProvenance } from "./LedgerReport.js"
import type { Accrual, ComponentMeta, LedgerState, LotQueue, LotRecord, StepRecord, TokenBook } from "./LedgerState.js"
import { logChanges, sliceAcquisition } from "./Lots.js"
import type { PriceRef } from "./Prices.js"

const provenances = new WeakMap<PriceRef, PriceProvenance>()

/** A price round as figures cite it (made once per round: every lot accruing a step cites the same one). */
export const provenance = (price: PriceRef | null): PriceProvenance | null => {
  if (price === null) return null
  let out = provenances.get(price)
  if (out === undefined) {
    out = {
      feed: price.round.feed,
      roundId: price.round.roundId,
      updatedAt: price.round.updatedAt,
      answer: formatFixed(price.answer, 8)
    }
    provenances.set(price, out)
  }
  return out
}

export const formatUsd = (value: bigint | null): string | null => (value === null ? null : formatWad(value))

/** The income index in the reporting currency: each step's income per raw unit at the rate of its own date. */
interface ConvertedIndex {
  readonly index: ReadonlyArray<bigint>
  /** Steps with no price or no rate for their date, counted. */
  readonly unknown: ReadonlyArray<number>
}

/** What `convertedOf` gives at the identity rate (reporting in USD), without formatting the amount again. */
const identityOf = (amount: string, date: string): Converted => ({
  currency: "USD",
  amount,
  rate: "1",
  rateDate: date,
  source: "identity",
  carriedForward: false
})

/** A lot's (or slice's) basis: USD and reporting currency, attoUSD-style fixed point (× 1e18). */
export interface LotBasis {
  readonly acquisitionUsd: bigint | null
  readonly incomeUsd: bigint | null
  readonly basisUsd: bigint | null
  readonly incomeConverted: bigint | null
  readonly basisConverted: bigint | null
}

interface CachedFigures {
  readonly at: number
  readonly last: StepRecord | undefined
  readonly figures: LotBasis
  reasons?: ReadonlyArray<NullReason>
}

/**
 * A lot's figures kept from one report to the next (an incremental build reports again after a few events): valid
 * while the lot record is the same object (records are immutable), and its token's index has the same steps (the
 * same position and the same last step record; steps are append-only and shared between states). Only for states
 * applied on top of each other with the same rates for the dates already applied (what a checkpoint guarantees).
 */
/** What the report sums over one queue's open lots (see `ReportBuilder`). */
export interface PoolFigures {
  readonly version: number
  readonly at: number
  readonly last: StepRecord | undefined
  readonly basisUsd: bigint | null
  readonly basisConverted: bigint | null
  /** Why the lots' basis (or its conversion) is unknown, each reason once, in lot order. */
  readonly reasons: ReadonlyArray<NullReason>
  readonly lotIds: ReadonlyArray<string>
  readonly openRaw: bigint
  readonly accruedUsd: bigint | null
  readonly accruedConverted: bigint | null
}

export class FiguresCache {
  private readonly entries = new WeakMap<LotRecord, CachedFigures>()
  private readonly pools = new WeakMap<LotQueue, PoolFigures>()

  /** A queue's sums, while the queue object is unchanged and its token's index has the same steps. */
  pool(accrual: Accrual, queue: LotQueue): PoolFigures | undefined {
    const entry = this.pools.get(queue)
    const at = accrual.steps.length
    return entry !== undefined && entry.version === queue.version && entry.at === at &&
        entry.last === accrual.steps[at - 1]
      ? entry
      : undefined
  }

  /** A queue's sums made at an earlier version, while its token's index has the same steps (see `followChanges`). */
  earlierPool(accrual: Accrual, queue: LotQueue): PoolFigures | undefined {
    const entry = this.pools.get(queue)
    const at = accrual.steps.length
    return entry !== undefined && entry.at === at && entry.last === accrual.steps[at - 1] ? entry : undefined
  }

  setPool(queue: LotQueue, figures: PoolFigures): PoolFigures {
    logChanges(queue)
    this.pools.set(queue, figures)
    return figures
  }

  get(accrual: Accrual, lot: LotRecord, at: number): CachedFigures | undefined {
    const entry = this.entries.get(lot)
    return entry !== undefined && entry.at === at && entry.last === accrual.steps[at - 1] ? entry : undefined
  }

  set(accrual: Accrual, lot: LotRecord, at: number, figures: LotBasis): CachedFigures {
    const entry: CachedFigures = { at, last: accrual.steps[at - 1], figures }
    this.entries.set(lot, entry)
    return entry
  }
}

/** Conversions of one report: each date's rate looked up once, each token's converted index built once. */
export class Conversions {
  private readonly quotes = new Map<string, RateQuote | null>()
  private readonly twins = new Map<Accrual, ConvertedIndex>()

  /** Reporting in USD: every converted figure is its USD figure. */
  private readonly identity: boolean

  constructor(private readonly state: LedgerState) {
    const { rates } = state.context
    this.identity = rates === undefined || rates.currency === "USD"
  }

  quote(date: string): RateQuote | null {
    let quote = this.quotes.get(date)
    if (quote === undefined) {
      quote = rateOn(date, this.state.context.rates)
      this.quotes.set(date, quote)
    }
    return quote
  }

  /** Whether `date` has no rate because the newest one before it is too old to carry forward. */
  stale(date: string): boolean {
    return this.quote(date) === null && staleRateOn(date, this.state.context.rates)
  }

  amount(usd: bigint | null, date: string): bigint | null {
    if (usd === null) return null
    const quote = this.quote(date)
    return quote === null ? null : applyRate(usd, quote)
  }

  converted(usd: bigint | null, date: string): Converted | null {
    if (usd === null) return null
    const quote = this.quote(date)
    return quote === null ? null : convertedOf(applyRate(usd, quote), quote)
  }

  private twin(accrual: Accrual): ConvertedIndex {
    let twin = this.twins.get(accrual)
    if (twin === undefined || twin.index.length < accrual.index.length) {
      const index: Array<bigint> = [0n]
      const unknown: Array<number> = [0]
      for (let k = 0; k < accrual.steps.length; k++) {
        const step = accrual.steps[k]!
        const quote = step.perRaw === null ? null : this.quote(utcDate(step.meta.at))
        index.push(index[k]! + (quote === null ? 0n : divRound(step.perRaw! * quote.units, quote.scale)))
        unknown.push(unknown[k]! + (quote === null ? 1 : 0))
      }
      twin = { index, unknown }
      this.twins.set(accrual, twin)
    }
    return twin
  }

  /** The basis of the first `raw` of `lot` (all of it by default), having accrued up to index position `at`. */
  basis(accrual: Accrual, lot: LotRecord, at: number, raw: bigint = lot.raw): LotBasis {
    const acquisitionUsd = sliceAcquisition(lot, raw)
    const perRaw = accruedPerRaw(accrual.index, accrual.unpriced, lot, at)
    const incomeUsd = perRaw === null ? null : incomeOf(raw, perRaw) + (raw === lot.raw ? lot.incomeAdjust : 0n)
    const basisUsd = acquisitionUsd === null || incomeUsd === null ? null : acquisitionUsd + incomeUsd
    let incomeConverted: bigint | null = null
    let basisConverted: bigint | null = null
    if (this.identity) {
      incomeConverted = incomeUsd
      basisConverted = basisUsd
    } else if (incomeUsd !== null) {
      const twin = this.twin(accrual)
      const convertedPerRaw = accruedPerRaw(twin.index, twin.unknown, lot, at)
      incomeConverted = convertedPerRaw === null ? null : incomeOf(raw, convertedPerRaw)
      const acquisitionConverted = this.amount(acquisitionUsd, utcDate(lot.acquiredAt))
      basisConverted = basisUsd === null || acquisitionConverted === null || incomeConverted === null
        ? null
        : acquisitionConverted + incomeConverted
    }
    return { acquisitionUsd, incomeUsd, basisUsd, incomeConverted, basisConverted }
  }

  /** The per-step breakdown of the basis of the first `raw` of `lot`: its acquisition, then each step's income. */
  components(accrual: Accrual, lot: LotRecord, at: number, raw: bigint = lot.raw): Array<BasisComponent> {
    return componentParts(accrual, lot, at, raw).map(({ meta, usd }) => this.component(meta, usd))
  }

  private component(meta: ComponentMeta, usd: bigint | null): BasisComponent {
    const date = utcDate(meta.at)
    const text = formatUsd(usd)
    return {
      kind: meta.kind,
      eventId: meta.eventId,
      at: meta.at,
      date,
      usd: text,
      converted: this.identity && text !== null ? identityOf(text, date) : this.converted(usd, date),
      price: provenance(meta.price)
    }
  }

  /** Why the lot's basis is unknown: its own reasons, then each dividend step it accrued without a price. */
  reasons(accrual: Accrual, lot: LotRecord, at: number): ReadonlyArray<NullReason> {
    if (accruedPerRaw(accrual.index, accrual.unpriced, lot, at) !== null) return lot.nullReasons
    const out = [...lot.nullReasons]
    for (const [from, to] of spansOf(lot, at)) {
      for (let k = from; k < to; k++) {
        const step = accrual.steps[k]!
        if (step.perRaw === null) out.push({ reason: "missing_price", eventId: step.meta.eventId })
      }
    }
    return out
  }

  /** The reasons a lot's converted basis is unknown because a part's date has only a stale rate. */
  staleReasons(accrual: Accrual, lot: LotRecord, at: number): Array<NullReason> {
    const out: Array<NullReason> = []
    if (lot.acquisitionUsd !== null && this.stale(utcDate(lot.acquiredAt))) {
      out.push({ reason: "stale_rate", eventId: lot.sourceEventId })
    }
    for (const [from, to] of spansOf(lot, at)) {
      for (let k = from; k < to; k++) {
        const step = accrual.steps[k]!
        if (step.perRaw !== null && this.stale(utcDate(step.meta.at))) {
          out.push({ reason: "stale_rate", eventId: step.meta.eventId })
        }
      }
    }
    return out
  }
}

/** A part of a basis: its acquisition, or a step's income. */
export interface ComponentPart {
  readonly meta: ComponentMeta
  readonly usd: bigint | null
}

/** The acquisition part of the basis of the first `raw` of `lot`. */
export const acquisitionPart = (lot: LotRecord, raw: bigint = lot.raw): ComponentPart => ({
  meta: { kind: "acquisition", eventId: lot.sourceEventId, at: lot.acquiredAt, price: lot.price },
  usd: sliceAcquisition(lot, raw)
})

/** The parts of the basis of the first `raw` of `lot`, unformatted: its acquisition, then each step's income (USD). */
export const componentParts = (
  accrual: Accrual,
  lot: LotRecord,
  at: number,
  raw: bigint = lot.raw
): Array<ComponentPart> => {
  const out = [acquisitionPart(lot, raw)]
  for (const [from, to] of spansOf(lot, at)) {
    for (let k = from; k < to; k++) {
      const step = accrual.steps[k]!
      out.push({ meta: step.meta, usd: step.perRaw === null ? null : incomeOf(raw, step.perRaw) })
    }
  }
  return out
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export interface OpenLot {
  readonly book: TokenBook
  readonly lot: LotRecord
  readonly location: Lot["location"]
  readonly wallet: string | null
}

export interface OpenPool {
  readonly book: TokenBook
  readonly queue: LotQueue
  readonly location: Lot["location"]
  readonly wallet: string | null
}

/** The lot queues in report order: by token, then pool (address, or the account's), then the token's in transit. */
export function* openPoolsOf(state: LedgerState): Generator<OpenPool> {
  const books = [...state.books.values()].sort((a, b) => byString(a.symbol, b.symbol))
  const location = state.context.rule.lotScope === "account" ? "account" : "wallet"
  for (const book of books) {
    for (const poolKey of [...book.pools.keys()].sort(byString)) {
      const wallet = location === "wallet" ? book.holders.get(poolKey)!.address : null
      yield { book, queue: book.pools.get(poolKey)!, location, wallet }
    }
    yield { book, queue: book.transit, location: "in_transit", wallet: null }
  }
}

/** The open lots in report order: by token, then pool (address, or the account's), oldest first; in transit last. */
export function* openLotsOf(state: LedgerState): Generator<OpenLot> {
  for (const { book, location, queue, wallet } of openPoolsOf(state)) {
    const { head, lots } = queue
    for (let i = head; i < lots.length; i++) yield { book, lot: lots[i]!, location, wallet }
  }
}

/** An open lot as the report lists it. */
export const lotRow = (
  conversions: Conversions,
  currency: ReportingCurrency,
  book: TokenBook,
  lot: LotRecord,
  location: Lot["location"],
  wallet: string | null,
  figures: LotBasis
): Lot => {
  const at = book.accrual.steps.length
  const components = conversions.components(book.accrual, lot, at)
  const basis = figures.basisConverted
  return {
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
    rate: components[0]!.converted?.rate ?? null,
    components,
    sourceEventId: lot.sourceEventId,
    nullReasons: basis === null && figures.basisUsd !== null
      ? [...lot.nullReasons, ...conversions.staleReasons(book.accrual, lot, at)]
      : [...conversions.reasons(book.accrual, lot, at)]
  }
}

/** Makes the rows of a state's open lots (one `Conversions` for all), with figures from `cache` where it has them. */
export const lotRowMaker = (state: LedgerState, cache?: FiguresCache): (open: OpenLot) => Lot => {
  const conversions = new Conversions(state)
  return ({ book, location, lot, wallet }) => {
    const at = book.accrual.steps.length
    const figures = cache === undefined
      ? conversions.basis(book.accrual, lot, at)
      : (cache.get(book.accrual, lot, at) ?? cache.set(book.accrual, lot, at, conversions.basis(book.accrual, lot, at)))
        .figures
    return lotRow(conversions, state.context.currency, book, lot, location, wallet, figures)
  }
}

/** The open lots of a state, as the report lists them, one at a time (for a report made with `lots: false`). */
export function* lotRows(state: LedgerState): Generator<Lot> {
  const row = lotRowMaker(state)
  for (const open of openLotsOf(state)) yield row(open)
}
