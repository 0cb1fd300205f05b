/** A transfer applied: acquisitions, disposals (FIFO slices), moves between own addresses, collateral, bridges. */
import { position, startAccruing, stopAccruing } from "./Accrual.js"
import { type ResolvedMovement, resolveMovement } from "./Classify.js"
import { divRound, formatWad, PRICE_SCALE } from "./Fixed.js"
import type { LedgerInvalidEvent } from "./LedgerErrors.js"
import type { TransferEvent } from "./LedgerInput.js"
import type { NullReason } from "./LedgerReport.js"
import type { Holder, TokenBook } from "./LedgerState.js"
import {
  bookOf,
  displayOf,
  holderOf,
  incompleteHistory,
  newLot,
  NO_IDS,
  NO_REASONS,
  parseRaw,
  poolOf,
  reduceHolding,
  takeFrom,
  unknownLot,
  type Work
} from "./LedgerWork.js"
import { insertLot, moveSlices, type Slice } from "./Lots.js"
import { priceAt, type PriceRef } from "./Prices.js"

/** Why a movement's figures are null: an unconfirmed label, a missing price (no list made when neither). */
const movementReasons = (
  event: TransferEvent,
  resolved: ResolvedMovement,
  price: PriceRef | null
): ReadonlyArray<NullReason> => {
  if (!resolved.unconfirmed && price !== null) return NO_REASONS
  const list: Array<NullReason> = []
  if (resolved.unconfirmed) list.push({ reason: "unconfirmed_label", eventId: event.id })
  if (price === null) list.push({ reason: "missing_price", eventId: event.id })
  return list
}

export const applyTransfer = (work: Work, event: TransferEvent): LedgerInvalidEvent | undefined => {
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
  const fromDisplay = displayOf(work, event.from)
  const toDisplay = displayOf(work, event.to)
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
  /** The lots the movement opens or moves, made only when it does (a disposal opens none). */
  let lotIds: Array<string> | undefined
  let disposalCount = 0
  let nullReasons: ReadonlyArray<NullReason> = NO_REASONS
  switch (resolved.treatment) {
    case "acquisition": {
      const reasons = movementReasons(event, resolved, price)
      if (raw > 0n) {
        const usd = resolved.unconfirmed || price === null ? null : divRound(raw * price.answer, PRICE_SCALE)
        const lot = newLot(work, book, event.id, event, raw, price, usd, reasons)
        insertLot(poolOf(work, book, holder.key), lot)
        holder.raw += raw
        lotIds = [lot.id]
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
        lotIds = []
        moveSlices(slices, event.id, poolOf(work, book, receiverKey), lotIds)
      }
      reduceHolding(sender, moved)
      receiver.raw += raw
      if (raw > moved) {
        const reason = sender.watched ? "incomplete_history" : "self_transfer_unmatched"
        if (sender.watched) incompleteHistory(sender, event, raw - moved, moved)
        const lot = unknownLot(work, book, event, raw - moved, reason)
        insertLot(poolOf(work, book, receiverKey), lot)
        lotIds ??= []
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
        lotIds = [lot.id]
        nullReasons = lot.nullReasons
      }
      break
    }
    case "bridge_out": {
      const moved = raw < holder.raw ? raw : holder.raw
      if (moved > 0n) {
        const at = position(book.accrual)
        lotIds = []
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
        lotIds = []
        moveSlices(takeFrom(book, book.transit, matched), event.id, receiving, lotIds, (lot) => startAccruing(lot, at))
      }
      if (raw > matched) {
        const lot = unknownLot(work, book, event, raw - matched, "bridge_unmatched")
        insertLot(receiving, lot)
        lotIds ??= []
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
    lotIds: lotIds === undefined || lotIds.length === 0 ? NO_IDS : lotIds,
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
  const eventReasons = movementReasons(event, resolved, price)
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
