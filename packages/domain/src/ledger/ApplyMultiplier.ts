/** A multiplier change applied: a split (shares change, nothing else) or a dividend step (income, in the index). */
import { addStep, incomeOf } from "./Accrual.js"
import { divRound, formatWad, PRICE_SCALE } from "./Fixed.js"
import { LedgerInvalidEvent } from "./LedgerErrors.js"
import type { MultiplierEvent } from "./LedgerInput.js"
import type { NullReason } from "./LedgerReport.js"
import type { Holder, TokenBook } from "./LedgerState.js"
import { ACCOUNT_POOL, bookOf, NO_REASONS, parseRaw, type Work } from "./LedgerWork.js"
import { snapshotOf } from "./Lots.js"
import { priceAt } from "./Prices.js"

export const applyMultiplier = (work: Work, event: MultiplierEvent): LedgerInvalidEvent | undefined => {
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
  const accountLots = wallet ? undefined : snapshotOf(book.pools.get(ACCOUNT_POOL))
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
      lots: accountLots ?? snapshotOf(pool),
      nullReasons: reasons
    })
  }
}
