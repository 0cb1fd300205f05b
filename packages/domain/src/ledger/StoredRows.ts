/**
 * Movement and disposal rows as the database stores them: the few figures a row is made of (amounts as integer
 * strings × 1e18, the rate quote, the price round), written straight from the ledger's records, and expanded into
 * the exact report rows (`movementRows`, `disposalRows`) when read. `wallet`, `counterparty` and `tokenAddress`
 * stay named fields, so queries can filter on them; the rest is one positional array `v`. What the row's id already
 * says is left out (null): the transaction hash of an id `<tx hash>:<log index>`, the lot an acquisition opens. A row without `v` (an
 * older build's, or an income or split row) is stored whole and read as it is. Open lot and disposal rows store the
 * dividend steps a lot accrued as spans [from, to) of its token's steps, stored once per token (`storedSteps`) and
 * given to `expandLotRow` and `expandDisposalRow`, which make each step's income from the row's raw amount.
 */
import { incomeOf, spansOf } from "./Accrual.js"
import type { Converted } from "./Convert.js"
import { divRound, formatWad, PRICE_SCALE, utcDate, WAD } from "./Fixed.js"
import { holdingPeriod } from "./HoldingPeriod.js"
import type { BasisComponent, Disposal, Lot, Movement, NullReason, PriceProvenance } from "./LedgerReport.js"
import type { DisposalRecord, LedgerState, LotRecord, MovementRecord, TokenBook } from "./LedgerState.js"
import {
  acquisitionPart,
  type ComponentPart,
  Conversions,
  type FiguresCache,
  type OpenLot,
  provenance
} from "./LotFigures.js"
import type { PriceRef } from "./Prices.js"
import { disposalFigures, type DisposalGains, disposalReasons, minus } from "./ReportRows.js"

/** A rate quote: 0 for the identity of the figure's own date (reporting in USD), null for none. */
type StoredQuote = 0 | null | readonly [string, string, string, string, 0 | 1]
type StoredPrice = readonly [string, string, number, string] | null
type StoredReasons = ReadonlyArray<readonly [string, string]>

export interface StoredRow {
  readonly wallet: string
  readonly counterparty: string
  readonly tokenAddress: string
  readonly v: ReadonlyArray<unknown>
}

const big = (value: bigint | null): string | null => (value === null ? null : value.toString())
const unbig = (value: unknown): bigint | null => (value === null ? null : BigInt(value as string))
const bool = (value: boolean): 0 | 1 => (value ? 1 : 0)

/**
 * Each quote's and price round's stored form, made once: rows citing the same one share the array, which a stored
 * page keeps once (`StoredPage`).
 */
const quotesStored = new WeakMap<object, StoredQuote>()
const pricesStored = new WeakMap<PriceRef, StoredPrice>()

const storedQuote = (conversions: Conversions, date: string): StoredQuote => {
  const q = conversions.quote(date)
  if (q === null) return null
  if (q.source === "identity" && q.currency === "USD" && q.rate === "1" && q.rateDate === date && !q.carriedForward) {
    return 0
  }
  let stored = quotesStored.get(q)
  if (stored === undefined) {
    stored = [q.currency, q.rate, q.rateDate, q.source, bool(q.carriedForward)]
    quotesStored.set(q, stored)
  }
  return stored
}

const storedPrice = (price: PriceRef | null): StoredPrice => {
  if (price === null) return null
  let stored = pricesStored.get(price)
  if (stored === undefined) {
    const p = provenance(price)!
    stored = [p.feed, p.roundId, p.updatedAt, p.answer]
    pricesStored.set(price, stored)
  }
  return stored
}

const storedReasons = (reasons: ReadonlyArray<NullReason>): StoredReasons => reasons.map((r) => [r.reason, r.eventId])

const sharesMultiplier = (multiplier: bigint): string | null => (multiplier === WAD ? null : multiplier.toString())

/** A transfer's hash, null when its event id already spells it (`<tx hash>:<log index>`, as the chain record's). */
const storedTxHash = (id: string, txHash: string, logIndex: number): string | null =>
  id.length === txHash.length + 1 + String(logIndex).length && id.startsWith(txHash) && id.endsWith(`:${logIndex}`)
    ? null
    : txHash

const txHashOf = (stored: unknown, id: string, logIndex: number): string =>
  (stored as string | null) ?? id.slice(0, id.length - 1 - String(logIndex).length)

/** A movement's lot ids, null for the one lot an acquisition opens (its id is the event's). */
const storedLotIds = (id: string, lotIds: ReadonlyArray<string>): ReadonlyArray<string> | null =>
  lotIds.length === 1 && lotIds[0] === id ? null : lotIds

/** A movement row to store (see `movementRows` for the row it expands into). */
export const storedMovement = (state: LedgerState, conversions: Conversions, record: MovementRecord): StoredRow => {
  const { classification, event } = record
  const raw = BigInt(event.raw)
  const valueUsd = record.price === null ? null : divRound(raw * record.price.answer, PRICE_SCALE)
  return {
    wallet: record.wallet,
    counterparty: record.counterparty,
    tokenAddress: event.tokenAddress,
    v: [
      event.id,
      classification.type,
      classification.relationship,
      classification.classifiedBy,
      bool(classification.classifiedBy === "user" || classification.confirmed),
      bool(record.needsReview),
      bool(record.taxable),
      record.treatment,
      record.direction,
      event.token,
      raw.toString(),
      sharesMultiplier(record.multiplier),
      event.timestamp,
      state.context.currency,
      big(valueUsd),
      storedQuote(conversions, utcDate(event.timestamp)),
      storedPrice(record.price),
      storedLotIds(event.id, record.lotIds),
      record.disposalCount,
      storedReasons(record.nullReasons),
      storedTxHash(event.id, event.txHash, event.logIndex),
      event.block,
      event.logIndex
    ]
  }
}

/** A disposal row to store (see `disposalRows`), from its figures. */
export const storedDisposal = (
  state: LedgerState,
  conversions: Conversions,
  record: DisposalRecord,
  figures: ReturnType<typeof disposalFigures> = disposalFigures(state, conversions, record)
): StoredRow => {
  const { event, lot } = record
  return {
    wallet: record.wallet,
    counterparty: record.counterparty,
    tokenAddress: event.tokenAddress,
    v: [
      event.id,
      record.slice,
      record.type,
      event.token,
      event.timestamp,
      record.raw.toString(),
      sharesMultiplier(record.multiplier),
      lot === null ? null : lot.id,
      lot === null ? null : lot.acquiredAt,
      bool(lot !== null && lot.dateUnknown),
      state.context.currency,
      big(figures.proceedsUsd),
      big(figures.basisUsd),
      big(figures.basis),
      storedQuote(conversions, figures.date),
      storedPrice(record.price),
      lot === null ? [] : storedStepComponents(conversions, lot, record.step, record.raw),
      bool(record.taxable),
      bool(record.needsReview),
      record.classifiedBy,
      storedReasons(disposalReasons(state, conversions, record, figures)),
      storedTxHash(event.id, event.txHash, event.logIndex),
      event.block,
      event.logIndex
    ]
  }
}

/** A stored component of a basis: [0 acquisition | 1 income, event id, time, USD, quote, price]. */
const storedComponent = (conversions: Conversions, { meta, usd }: ComponentPart): Array<unknown> => [
  meta.kind === "acquisition" ? 0 : 1,
  meta.eventId,
  meta.at,
  big(usd),
  storedQuote(conversions, utcDate(meta.at)),
  storedPrice(meta.price)
]

/**
 * A token's dividend step as stored lot and disposal rows cite it (`storedSteps`): [event id, time, quote, price,
 * income per raw unit (× INDEX_SCALE attoUSD; null: no price)]. What every lot accruing the step shares is stored
 * once per token, not once per lot (and sale) and step.
 */
export type StoredStep = readonly [string, number, StoredQuote, StoredPrice, string | null]

/** The token's steps as lot and disposal rows cite them, by index position. */
export const storedSteps = (state: LedgerState, book: TokenBook): Array<StoredStep> => {
  const conversions = new Conversions(state)
  return book.accrual.steps.map(({ meta, perRaw }) => [
    meta.eventId,
    meta.at,
    storedQuote(conversions, utcDate(meta.at)),
    storedPrice(meta.price),
    big(perRaw)
  ])
}

/**
 * The stored components of the basis of the first `raw` of a lot (a sold slice's, or all of it) that accrued up to
 * index position `at`: its acquisition whole, then the spans [from, to) of the token's steps it accrued (the steps
 * are the token's `storedSteps`; each one's income is `raw` × its income per raw unit, made when read).
 */
const storedStepComponents = (
  conversions: Conversions,
  lot: LotRecord,
  at: number,
  raw: bigint
): Array<unknown> => {
  const out: Array<unknown> = [storedComponent(conversions, acquisitionPart(lot, raw))]
  for (const [from, to] of spansOf(lot, at)) if (from < to) out.push([from, to])
  return out
}

/**
 * A stored open lot row, with `wallet`, `location` and `id` named (reads select by them): what `lotRowMaker` lists,
 * with the figures of `cache` where it has them. Expanded by `expandLotRow`.
 */
export const storedLotRowMaker = (state: LedgerState, cache?: FiguresCache) => {
  const conversions = new Conversions(state)
  const currency = state.context.currency
  return ({ book, location, lot, wallet }: OpenLot): StoredLotRow => {
    const accrual = book.accrual
    const at = accrual.steps.length
    const figures = cache === undefined
      ? conversions.basis(accrual, lot, at)
      : (cache.get(accrual, lot, at) ?? cache.set(accrual, lot, at, conversions.basis(accrual, lot, at))).figures
    const reasons = figures.basisConverted === null && figures.basisUsd !== null
      ? [...lot.nullReasons, ...conversions.staleReasons(accrual, lot, at)]
      : conversions.reasons(accrual, lot, at)
    return {
      id: lot.id,
      location,
      wallet,
      v: [
        book.symbol,
        book.tokenAddress,
        lot.acquiredAt,
        lot.raw.toString(),
        lot.multiplier.toString(),
        sharesMultiplier(book.multiplier),
        big(figures.basisUsd),
        big(figures.basisConverted),
        currency,
        storedStepComponents(conversions, lot, at, lot.raw),
        lot.sourceEventId === lot.id ? null : lot.sourceEventId,
        storedReasons(reasons)
      ]
    }
  }
}

export interface StoredLotRow {
  readonly id: string
  readonly location: Lot["location"]
  readonly wallet: string | null
  readonly v: ReadonlyArray<unknown>
}

/** The stored movements, in event order; from the `from`-th on (as `movementRows`). */
export function* storedMovementRows(state: LedgerState, from = 0): Generator<StoredRow> {
  const conversions = new Conversions(state)
  const { base, items, length } = state.movements
  for (let i = Math.max(from, base); i < length; i++) yield storedMovement(state, conversions, items[i - base]!)
}

/**
 * The stored disposals, in event order; from the `from`-th on (as `disposalRows`). `gains`: each row's gains are
 * added to it, for `release` (which then need not compute them again).
 */
export function* storedDisposalRows(
  state: LedgerState,
  from = 0,
  gains?: Array<DisposalGains>
): Generator<StoredRow> {
  const conversions = new Conversions(state)
  const { base, items, length } = state.disposals
  for (let i = Math.max(from, base); i < length; i++) {
    const record = items[i - base]!
    const figures = disposalFigures(state, conversions, record)
    gains?.push(figures)
    yield storedDisposal(state, conversions, record, figures)
  }
}

interface Quote {
  readonly currency: string
  readonly rate: string
  readonly rateDate: string
  readonly source: string
  readonly carriedForward: boolean
  readonly units: bigint
  readonly scale: bigint
}

const quoteOf = (stored: unknown, date: string): Quote | null => {
  if (stored === null) return null
  if (stored === 0) {
    return {
      currency: "USD",
      rate: "1",
      rateDate: date,
      source: "identity",
      carriedForward: false,
      units: 1n,
      scale: 1n
    }
  }
  const [currency, rate, rateDate, source, carried] = stored as readonly [string, string, string, string, 0 | 1]
  const [whole, fraction = ""] = rate.split(".")
  return {
    currency,
    rate,
    rateDate,
    source,
    carriedForward: carried === 1,
    units: BigInt(whole! + fraction),
    scale: 10n ** BigInt(fraction.length)
  }
}

const amountOf = (usd: bigint | null, quote: Quote | null): bigint | null =>
  usd === null || quote === null
    ? null
    : quote.scale === 1n
    ? usd * quote.units
    : divRound(usd * quote.units, quote.scale)

const convertedOf = (usd: bigint | null, quote: Quote | null): Converted | null => {
  const amount = amountOf(usd, quote)
  return amount === null ? null : {
    currency: quote!.currency as Converted["currency"],
    amount: formatWad(amount),
    rate: quote!.rate,
    rateDate: quote!.rateDate,
    source: quote!.source,
    carriedForward: quote!.carriedForward
  }
}

const priceOf = (stored: unknown): PriceProvenance | null => {
  if (stored === null) return null
  const [feed, roundId, updatedAt, answer] = stored as readonly [string, string, number, string]
  return { feed, roundId, updatedAt, answer }
}

const reasonsOf = (stored: unknown): Array<NullReason> =>
  (stored as StoredReasons).map(([reason, eventId]) => ({ reason, eventId }) as NullReason)

const usdText = (value: bigint | null): string | null => (value === null ? null : formatWad(value))

const sharesOf = (raw: bigint, multiplier: unknown): string =>
  formatWad(multiplier === null ? raw : divRound(raw * BigInt(multiplier as string), WAD))

const isStored = (row: unknown): row is StoredRow =>
  typeof row === "object" && row !== null && Array.isArray((row as { v?: unknown }).v)

/** A stored movement's transaction (its hash from its id when the row left it out). */
const walletTransactionOf = (v: ReadonlyArray<unknown>, id: string): Movement["walletTransaction"] => ({
  txHash: txHashOf(v[20], id, v[22] as number),
  block: v[21] as number,
  logIndex: v[22] as number
})

/** A stored event row as the report lists it (a movement stored compactly; any other row as it was stored). */
export const expandEventRow = (row: unknown): unknown => {
  if (!isStored(row)) return row
  const v = row.v
  const raw = BigInt(v[10] as string)
  const timestamp = v[12] as number
  const date = utcDate(timestamp)
  const id = v[0] as string
  const valueUsd = unbig(v[14])
  const disposalIds: Array<string> = new Array(v[18] as number)
  for (let i = 0; i < disposalIds.length; i++) disposalIds[i] = `${id}:${i}`
  const movement: Movement = {
    id,
    type: v[1] as Movement["type"],
    relationship: v[2] as Movement["relationship"],
    classifiedBy: v[3] as Movement["classifiedBy"],
    confirmed: v[4] === 1,
    needsReview: v[5] === 1,
    taxable: v[6] === 1,
    treatment: v[7] as Movement["treatment"],
    direction: v[8] as Movement["direction"],
    token: v[9] as string,
    tokenAddress: row.tokenAddress,
    wallet: row.wallet,
    counterparty: row.counterparty,
    raw: v[10] as string,
    qty: formatWad(raw),
    shares: sharesOf(raw, v[11]),
    date,
    timestamp,
    currency: v[13] as Movement["currency"],
    valueUsd: usdText(valueUsd),
    value: convertedOf(valueUsd, quoteOf(v[15], date)),
    price: priceOf(v[16]),
    lotIds: v[17] === null ? [id] : [...(v[17] as ReadonlyArray<string>)],
    disposalIds,
    nullReasons: reasonsOf(v[19]),
    walletTransaction: walletTransactionOf(v, id)
  }
  return movement
}

/** What the activity export writes of a movement: the row without its figures (value, price, lots, reasons). */
export type MovementActivity = Pick<
  Movement,
  | "id"
  | "type"
  | "relationship"
  | "classifiedBy"
  | "needsReview"
  | "taxable"
  | "token"
  | "wallet"
  | "counterparty"
  | "qty"
  | "shares"
  | "date"
  | "walletTransaction"
>

/**
 * A stored event row as the activity export reads it: a compact movement with the fields of `MovementActivity`
 * only (its value's division, its conversion and its price are not made for a file that does not show them); any
 * other row as it was stored.
 */
export const expandActivityRow = (row: unknown): unknown => {
  if (!isStored(row)) return row
  const v = row.v
  const id = v[0] as string
  const raw = BigInt(v[10] as string)
  const activity: MovementActivity = {
    id,
    type: v[1] as Movement["type"],
    relationship: v[2] as Movement["relationship"],
    classifiedBy: v[3] as Movement["classifiedBy"],
    needsReview: v[5] === 1,
    taxable: v[6] === 1,
    token: v[9] as string,
    wallet: row.wallet,
    counterparty: row.counterparty,
    qty: formatWad(raw),
    shares: sharesOf(raw, v[11]),
    date: utcDate(v[12] as number),
    walletTransaction: walletTransactionOf(v, id)
  }
  return activity
}

const componentOf = (stored: unknown): BasisComponent => {
  const [kind, eventId, at, usd, quote, price] = stored as readonly [0 | 1, string, number, unknown, unknown, unknown]
  return component(kind === 0 ? "acquisition" : "income", eventId, at, unbig(usd), quote, price)
}

const component = (
  kind: BasisComponent["kind"],
  eventId: string,
  at: number,
  amount: bigint | null,
  quote: unknown,
  price: unknown
): BasisComponent => {
  const date = utcDate(at)
  return {
    kind,
    eventId,
    at,
    date,
    usd: usdText(amount),
    converted: convertedOf(amount, quoteOf(quote, date)),
    price: priceOf(price)
  }
}

/**
 * The basis components of the first `raw` of a lot, as stored: each whole, or a span [from, to) of the token's
 * `steps` whose income it accrued.
 */
const componentsOf = (
  stored: ReadonlyArray<ReadonlyArray<unknown>>,
  raw: bigint,
  steps: ReadonlyArray<StoredStep> | undefined
): Array<BasisComponent> => {
  const out: Array<BasisComponent> = []
  for (const part of stored) {
    if (part.length !== 2) {
      out.push(componentOf(part))
      continue
    }
    const [from, to] = part as readonly [number, number]
    for (let k = from; k < to; k++) {
      const step = steps?.[k]
      if (step === undefined) throw new Error(`a stored row cites dividend step ${k} of its token, which is not stored`)
      const perRaw = unbig(step[4])
      out.push(component("income", step[0], step[1], perRaw === null ? null : incomeOf(raw, perRaw), step[2], step[3]))
    }
  }
  return out
}

/**
 * A stored disposal row as the report lists it, its steps' income with the token's `steps` (`storedSteps`); a row
 * stored whole is returned as it is.
 */
export const expandDisposalRow = (row: unknown, steps?: ReadonlyArray<StoredStep>): unknown => {
  if (!isStored(row)) return row
  const v = row.v
  const eventId = v[0] as string
  const slice = v[1] as number
  const disposedAt = v[4] as number
  const date = utcDate(disposedAt)
  const raw = BigInt(v[5] as string)
  const acquiredAt = v[8] as number | null
  const acquired = acquiredAt === null ? null : utcDate(acquiredAt)
  const proceedsUsd = unbig(v[11])
  const basisUsd = unbig(v[12])
  const basis = unbig(v[13])
  const quote = quoteOf(v[14], date)
  const gainUsd = minus(proceedsUsd, basisUsd)
  const disposal: Disposal = {
    id: `${eventId}:${slice}`,
    eventId,
    slice,
    type: v[2] as Disposal["type"],
    token: v[3] as string,
    tokenAddress: row.tokenAddress,
    wallet: row.wallet,
    counterparty: row.counterparty,
    date,
    disposedAt,
    raw: v[5] as string,
    qty: formatWad(raw),
    shares: sharesOf(raw, v[6]),
    lotId: v[7] as string | null,
    acquired,
    acquiredAt,
    holdingPeriod: acquired === null || v[9] === 1 ? null : holdingPeriod(acquired, date),
    currency: v[10] as Disposal["currency"],
    proceedsUsd: usdText(proceedsUsd),
    basisUsd: usdText(basisUsd),
    gainUsd: usdText(gainUsd),
    proceeds: convertedOf(proceedsUsd, quote),
    basis: usdText(basis),
    gain: usdText(gainUsd === null ? null : minus(amountOf(proceedsUsd, quote), basis)),
    price: priceOf(v[15]),
    basisComponents: componentsOf(v[16] as ReadonlyArray<ReadonlyArray<unknown>>, raw, steps),
    taxable: v[17] === 1,
    needsReview: v[18] === 1,
    classifiedBy: v[19] as Disposal["classifiedBy"],
    nullReasons: reasonsOf(v[20]),
    walletTransaction: {
      txHash: txHashOf(v[21], eventId, v[23] as number),
      block: v[22] as number,
      logIndex: v[23] as number
    }
  }
  return disposal
}

/** Where a stored lot row's lot is held and what FIFO orders it by, read without making its steps' income. */
export const lotRowHead = (row: unknown): Pick<Lot, "id" | "location" | "wallet" | "acquiredAt" | "raw"> => {
  if (!isStored(row)) {
    const lot = row as Lot
    return { id: lot.id, location: lot.location, wallet: lot.wallet, acquiredAt: lot.acquiredAt, raw: lot.raw }
  }
  const stored = row as unknown as StoredLotRow
  return {
    id: stored.id,
    location: stored.location,
    wallet: stored.wallet,
    acquiredAt: stored.v[2] as number,
    raw: stored.v[3] as string
  }
}

/**
 * A stored lot row as the report lists it, its steps' income with the token's `steps` (`storedSteps`); a row stored
 * whole is returned as it is.
 */
export const expandLotRow = (row: unknown, steps?: ReadonlyArray<StoredStep>): unknown => {
  if (!isStored(row)) return row
  const stored = row as unknown as StoredLotRow
  const v = stored.v
  const acquiredAt = v[2] as number
  const raw = BigInt(v[3] as string)
  const components = componentsOf(v[9] as ReadonlyArray<ReadonlyArray<unknown>>, raw, steps)
  const lot: Lot = {
    id: stored.id,
    token: v[0] as string,
    tokenAddress: v[1] as string,
    location: stored.location,
    wallet: stored.wallet,
    acquired: utcDate(acquiredAt),
    acquiredAt,
    raw: v[3] as string,
    qty: formatWad(raw),
    multiplierAtAcquisition: formatWad(BigInt(v[4] as string)),
    shares: sharesOf(raw, v[5]),
    basisUsd: usdText(unbig(v[6])),
    basis: usdText(unbig(v[7])),
    currency: v[8] as Lot["currency"],
    rate: components[0]?.converted?.rate ?? null,
    components,
    sourceEventId: (v[10] as string | null) ?? stored.id,
    nullReasons: reasonsOf(v[11])
  }
  return lot
}

/** What the stored movement's table columns hold, and its chain position. */
export const storedMovementKeys = (row: StoredRow) => {
  const v = row.v
  return {
    id: v[0] as string,
    type: v[1] as string,
    token: v[9] as string,
    day: utcDate(v[12] as number),
    needsReview: v[5] === 1,
    block: v[21] as number,
    logIndex: v[22] as number
  }
}

/** What the stored disposal's table columns hold. */
export const storedDisposalKeys = (row: StoredRow) => ({ token: row.v[3] as string, day: utcDate(row.v[4] as number) })
