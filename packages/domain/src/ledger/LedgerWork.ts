/**
 * The work of one `Ledger.apply`: the books it copied, the records it appends, and the helpers both kinds of event
 * use (books, holders, pools, new lots, FIFO slices keeping their income to the last digit).
 */
import { accruedPerRaw, copyAccrual, emptyAccrual, position } from "./Accrual.js"
import { addressKey } from "./Classify.js"
import { formatWad } from "./Fixed.js"
import { LedgerInvalidEvent } from "./LedgerErrors.js"
import type { LedgerEvent, TransferEvent } from "./LedgerInput.js"
import type { Issue, NullReason, NullReasonCode } from "./LedgerReport.js"
import type {
  AppendLog,
  DisposalRecord,
  DuplicateRecord,
  Holder,
  IncomeRecord,
  LedgerContext,
  LotQueue,
  LotRecord,
  MovementRecord,
  SplitRecord,
  TokenBook
} from "./LedgerState.js"
import { copyQueue, newQueue, type Slice, takeFifo } from "./Lots.js"
import type { PriceRef } from "./Prices.js"

export const ONE = 10n ** 18n
export const NO_REASONS: ReadonlyArray<NullReason> = []
export const NO_IDS: ReadonlyArray<string> = []
const NO_SPANS: ReadonlyArray<readonly [number, number]> = []
export const ACCOUNT_POOL = "account"

export interface Work {
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

export const ownItems = <A>(log: AppendLog<A>): Array<A> =>
  log.items.length === log.length - log.base ? log.items : log.items.slice(0, log.length - log.base)

export const copyBook = (book: TokenBook): TokenBook => {
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

export const bookOf = (work: Work, symbol: string, tokenAddress: string): TokenBook => {
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

export const holderOf = (book: TokenBook, key: string, address: string, watched: boolean): Holder => {
  let holder = book.holders.get(key)
  if (holder === undefined) {
    holder = { key, address, watched, raw: 0n, encumbered: 0n, issues: [] }
    book.holders.set(key, holder)
  }
  return holder
}

export const poolOf = (work: Work, book: TokenBook, holderKey: string): LotQueue => {
  const key = work.context.rule.lotScope === "wallet" ? holderKey : ACCOUNT_POOL
  let queue = book.pools.get(key)
  if (queue === undefined) {
    queue = newQueue()
    book.pools.set(key, queue)
  }
  return queue
}

/** FIFO slices of a pool; the lot split in two keeps its income to the last digit (see `restOf`). */
export const takeFrom = (book: TokenBook, queue: LotQueue, raw: bigint): Array<Slice> => {
  const { accrual } = book
  const at = position(accrual)
  return takeFifo(queue, raw, (lot) => accruedPerRaw(accrual.index, accrual.unpriced, lot, at))
}

/** Keeps `encumbered` within what the holder owns after its balance went down. */
export const reduceHolding = (holder: Holder, raw: bigint): void => {
  holder.raw -= raw
  if (holder.encumbered > holder.raw) holder.encumbered = holder.raw
}

/** The id suffix of a lot made up for tokens no recorded lot covers: its acquisition date is unknown. */
const UNMATCHED_LOT = "#unmatched"

/** Whether a lot (by its id) was made up for tokens no recorded lot covers, so its acquisition date is unknown. */
export const isAcquisitionDateUnknown = (lotId: string): boolean => lotId.endsWith(UNMATCHED_LOT)

export const newLot = (
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

export const unknownLot = (
  work: Work,
  book: TokenBook,
  event: TransferEvent,
  raw: bigint,
  reason: NullReasonCode
): LotRecord =>
  newLot(work, book, `${event.id}${UNMATCHED_LOT}`, event, raw, null, null, [{ reason, eventId: event.id }], true)

export const incompleteHistory = (holder: Holder, event: TransferEvent, missing: bigint, recorded: bigint): void => {
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
export const displayOf = (work: Work, given: string): Display => {
  let cache = displays.get(work.context)
  if (cache === undefined) {
    cache = new Map()
    displays.set(work.context, cache)
  }
  let display = cache.get(given)
  if (display === undefined) {
    const own = work.context.classify.own.get(addressKey(work.context.classify, given))
    display = own === undefined ? { address: given, watched: false } : { address: own, watched: true }
    if (cache.size < 100_000) cache.set(given, display)
  }
  return display
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57

/** A non-negative decimal integer; cheap checks first, BigInt for the rest (it rejects inner non-digits). */
export const parseRaw = (event: LedgerEvent, text: string): bigint | LedgerInvalidEvent => {
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
