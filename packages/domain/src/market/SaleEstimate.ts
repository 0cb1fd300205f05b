/**
 * estimate_sale: what selling `shares` of a token on `date` at `price` would look like under FIFO, before doing it.
 *
 * Pure. The lots come from the account's stored ledger build and are matched by the ledger's own FIFO
 * (`LedgerFifo.ts`); holding periods use the ledger's US calendar rule (`ledger/HoldingPeriod.ts`).
 */
import { addDays, daysBetween } from "../CalendarDates.js"
import {
  applyRate,
  divRound,
  type FifoLot,
  fifoSlices,
  formatFixed,
  holdingPeriod,
  isAcquisitionDateUnknown,
  type Lot,
  oneYearHeldOn,
  parseFixed,
  type RateQuote,
  WAD
} from "./LedgerFifo.js"

/**
 * A pool's lot as FIFO orders and draws it, the whole lot (its basis components, one per dividend step it accrued)
 * made by `whole` only if the sale draws from it: a long history's pool holds many lots, and a sale reads a few.
 */
export interface LotSource extends FifoLot {
  readonly whole: () => Lot
}

export interface SaleRequest {
  /** One pool's open lots (a wallet's under wallet lot scope, the account's under account scope). */
  readonly lots: ReadonlyArray<Lot | LotSource>
  /**
   * Raw units the selling address holds, when that is less than its pool can give: under account lot scope the pool
   * is the account's, but one address can sell only its own balance. Left out: the pool's total.
   */
  readonly heldRaw?: bigint | undefined
  /** The multiplier in force now (18-decimal string): shares = raw × multiplier. */
  readonly multiplier: string
  /** Share units to sell (decimal string, at most 18 decimals). */
  readonly shares: string
  /** USD per share (decimal string), null when no price is known. */
  readonly priceUsd: string | null
  /** The sale date, `YYYY-MM-DD` (UTC). */
  readonly date: string
  /** The rate proceeds are converted at (the sale date's, with provenance), null when there is none. */
  readonly rate: RateQuote | null
}

export interface SaleLot {
  readonly lotId: string
  readonly acquired: string
  readonly wallet: string | null
  readonly raw: string
  readonly shares: string
  /** Null when the lot's acquisition date is unknown (made up for tokens no recorded lot covers). */
  readonly holdingPeriod: "short" | "long" | null
  readonly proceeds: string | null
  readonly basis: string | null
  readonly gain: string | null
  readonly proceedsUsd: string | null
  readonly basisUsd: string | null
  readonly gainUsd: string | null
  /** Short-term lots: the first date a sale is long-term, and how many days away that is. Null for long-term. */
  readonly longTermOn: string | null
  readonly daysToLongTerm: number | null
  /** Short-term lots: the gain (reporting currency) that would be long-term instead if the sale waited. */
  readonly gainBecomingLongTerm: string | null
  readonly unknownBecause: ReadonlyArray<{ readonly reason: string; readonly eventId: string }>
  readonly eventIds: ReadonlyArray<string>
}

/**
 * The slices of one holding period. When a slice's holding period is unknown, both terms' figures are null (its
 * shares are in neither), as `realisedGains` is for a disposal of such a lot.
 */
export interface TermTotals {
  readonly shares: string
  readonly proceeds: string | null
  readonly basis: string | null
  readonly gain: string | null
}

export interface SaleEstimate {
  readonly shares: string
  readonly raw: string
  readonly proceeds: string | null
  readonly basis: string | null
  readonly gain: string | null
  readonly proceedsUsd: string | null
  readonly basisUsd: string | null
  readonly gainUsd: string | null
  readonly shortTerm: TermTotals
  readonly longTerm: TermTotals
  /** If the sale waited until every short-term lot turned long-term: the date and the gain that would move. */
  readonly ifWaited: { readonly date: string; readonly gainBecomingLongTerm: string | null } | null
  readonly lots: ReadonlyArray<SaleLot>
}

export type SaleEstimateError =
  | { readonly _tag: "InvalidShares"; readonly message: string }
  | { readonly _tag: "InsufficientShares"; readonly held: string; readonly requested: string }

const fmt = (value: bigint | null): string | null => (value === null ? null : formatFixed(value, 18))

const add = (a: bigint | null, b: bigint | null): bigint | null => (a === null || b === null ? null : a + b)
const sub = (a: bigint | null, b: bigint | null): bigint | null => (a === null || b === null ? null : a - b)

const parseDecimal = (text: string): bigint | null => {
  try {
    return parseFixed(text, 18)
  } catch {
    return null
  }
}

const wholeLot = (lot: Lot | LotSource): Lot => ("whole" in lot ? lot.whole() : lot)

/** Computes the estimate, or says why it cannot (bad share count, more than the pool holds). */
export const estimateSale = (request: SaleRequest): { ok: SaleEstimate } | { error: SaleEstimateError } => {
  const sharesWad = parseDecimal(request.shares)
  if (sharesWad === null || sharesWad <= 0n) {
    return { error: { _tag: "InvalidShares", message: `shares must be a positive decimal (at most 18 decimals)` } }
  }
  const multiplier = parseFixed(request.multiplier, 18)
  const raw = divRound(sharesWad * WAD, multiplier)
  if (raw === 0n) {
    return {
      error: {
        _tag: "InvalidShares",
        message: `shares ${request.shares} rounds to no raw token unit at the multiplier in force (${
          formatFixed(multiplier, 18)
        }; half a unit rounds to even, so to 0): nothing to sell`
      }
    }
  }
  const pooled = request.lots.reduce((total, lot) => total + BigInt(lot.raw), 0n)
  const held = request.heldRaw !== undefined && request.heldRaw < pooled ? request.heldRaw : pooled
  if (raw > held) {
    return {
      error: {
        _tag: "InsufficientShares",
        held: formatFixed(divRound(held * multiplier, WAD), 18),
        requested: request.shares
      }
    }
  }
  const price = request.priceUsd === null ? null : parseFixed(request.priceUsd, 18)
  const convert = (usd: bigint | null): bigint | null =>
    usd === null || request.rate === null ? null : applyRate(usd, request.rate)

  const totals = {
    short: { shares: 0n, proceeds: 0n as bigint | null, basis: 0n as bigint | null },
    long: { shares: 0n, proceeds: 0n as bigint | null, basis: 0n as bigint | null }
  }
  /** The slices whose holding period is unknown: in the sale's totals, in neither term's. */
  const unknownTotals = { proceeds: 0n as bigint | null, basis: 0n as bigint | null }
  let proceedsUsdTotal: bigint | null = 0n
  let basisUsdTotal: bigint | null = 0n
  let waitUntil: string | null = null
  let becomingLong: bigint | null = 0n
  let termUnknown = false
  let sharesTotal = 0n
  const lots: Array<SaleLot> = fifoSlices(request.lots, raw, wholeLot).map((slice) => {
    const shares = divRound(slice.raw * multiplier, WAD)
    const proceedsUsd = price === null ? null : divRound(shares * price, WAD)
    const proceeds = convert(proceedsUsd)
    const basis = slice.basisConverted
    const gain = sub(proceeds, basis)
    sharesTotal += shares
    const term = isAcquisitionDateUnknown(slice.lot.id) ? null : holdingPeriod(slice.lot.acquired, request.date)
    const longTermOn = term === "short" ? addDays(oneYearHeldOn(slice.lot.acquired), 1) : null
    if (term === null) {
      termUnknown = true
      unknownTotals.proceeds = add(unknownTotals.proceeds, proceeds)
      unknownTotals.basis = add(unknownTotals.basis, basis)
    } else {
      const bucket = term === "short" ? totals.short : totals.long
      bucket.shares += shares
      bucket.proceeds = add(bucket.proceeds, proceeds)
      bucket.basis = add(bucket.basis, basis)
    }
    proceedsUsdTotal = add(proceedsUsdTotal, proceedsUsd)
    basisUsdTotal = add(basisUsdTotal, slice.basisUsd)
    if (longTermOn !== null) {
      if (waitUntil === null || longTermOn > waitUntil) waitUntil = longTermOn
      becomingLong = add(becomingLong, gain)
    }
    return {
      lotId: slice.lot.id,
      acquired: slice.lot.acquired,
      wallet: slice.lot.wallet,
      raw: slice.raw.toString(),
      shares: formatFixed(shares, 18),
      holdingPeriod: term,
      proceeds: fmt(proceeds),
      basis: fmt(basis),
      gain: fmt(gain),
      proceedsUsd: fmt(proceedsUsd),
      basisUsd: fmt(slice.basisUsd),
      gainUsd: fmt(sub(proceedsUsd, slice.basisUsd)),
      longTermOn,
      daysToLongTerm: longTermOn === null ? null : daysBetween(request.date, longTermOn),
      gainBecomingLongTerm: longTermOn === null ? null : fmt(gain),
      unknownBecause: slice.lot.nullReasons,
      eventIds: slice.lot.components.map((c) => c.eventId)
    }
  })
  const term = (t: typeof totals.short): TermTotals => ({
    shares: formatFixed(t.shares, 18),
    proceeds: termUnknown ? null : fmt(t.proceeds),
    basis: termUnknown ? null : fmt(t.basis),
    gain: termUnknown ? null : fmt(sub(t.proceeds, t.basis))
  })
  const proceeds = add(add(totals.short.proceeds, totals.long.proceeds), unknownTotals.proceeds)
  const basis = add(add(totals.short.basis, totals.long.basis), unknownTotals.basis)
  return {
    ok: {
      shares: formatFixed(sharesTotal, 18),
      raw: raw.toString(),
      proceeds: fmt(proceeds),
      basis: fmt(basis),
      gain: fmt(sub(proceeds, basis)),
      proceedsUsd: fmt(proceedsUsdTotal),
      basisUsd: fmt(basisUsdTotal),
      gainUsd: fmt(sub(proceedsUsdTotal, basisUsdTotal)),
      shortTerm: term(totals.short),
      longTerm: term(totals.long),
      ifWaited: waitUntil === null ? null : { date: waitUntil, gainBecomingLongTerm: fmt(becomingLong) },
      lots
    }
  }
}
