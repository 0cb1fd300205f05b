/**
 * Which stored lot rows an incremental build rewrites: only the lots that changed (a partly consumed lot, a new one,
 * a lot of a token whose income index grew), each with an `ord` between its unchanged neighbours so the read order
 * stays the ledger's; every row again (with room between them) when that is not possible.
 */
import type { LotWrites, StepWrites } from "@scaledger/db/ledger/LedgerStore"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerState, LotRecord, StepRecord } from "@scaledger/domain/ledger/LedgerState"

const MAX_ORD = 2_147_483_647
/** Room left between stored lots for lots that arrive later (`ledger_lots.ord` is an integer). */
const LOT_GAP = 1_024

/**
 * What the stored lot rows of one lot queue were made from: the queue's version (the queue object counts its
 * changes), its token's index position and last step (a step adds a basis component to every lot), the token's
 * multiplier (the lots' shares) and where the queue is; and each lot's `ord`, by lot record (immutable: a consumed
 * lot is a new record).
 */
export interface StoredPool {
  readonly version: number
  readonly at: number
  readonly last: unknown
  readonly multiplier: bigint
  readonly location: string
  readonly wallet: string | null
  readonly ords: ReadonlyMap<object, number>
  /** The first and last `ord` (-1 when the queue has no lots). */
  readonly first: number
  readonly final: number
}

/** Stored lot rows per lot queue (keyed by the queue object). */
export type StoredLotRows = ReadonlyMap<object, StoredPool>

/**
 * The plan for a state's open lots. A queue that did not change since its rows were stored (same object, version,
 * index position, multiplier, place) keeps them without its lots being looked at; in a queue that changed, a lot
 * whose record is the one stored keeps its row; rows are made (with `cache`'s figures) only for the rest. O(queues +
 * lots of the changed queues).
 */
export const planLotRows = (
  state: LedgerState,
  stored: StoredLotRows | undefined,
  cache: Ledger.FiguresCache
): { readonly writes: LotWrites; readonly stored: StoredLotRows } => {
  const pools = [...Ledger.openPoolsOf(state)]
  // The plan keeps each queue's version: the next one follows the changes from there.
  for (const pool of pools) Ledger.logChanges(pool.queue)
  const rowOf = Ledger.storedLotRowMaker(state, cache)
  const sizeOf = (pool: Ledger.OpenPool) => pool.queue.lots.length - pool.queue.head
  const total = pools.reduce((sum, pool) => sum + sizeOf(pool), 0)
  const stampOf = ({ book, location, queue, wallet }: Ledger.OpenPool) => {
    const at = book.accrual.steps.length
    return {
      version: queue.version,
      at,
      last: book.accrual.steps[at - 1],
      multiplier: book.multiplier,
      location,
      wallet
    }
  }
  const sameStamp = (old: StoredPool, pool: Ledger.OpenPool): boolean => {
    const stamp = stampOf(pool)
    return old.at === stamp.at && old.last === stamp.last && old.multiplier === stamp.multiplier &&
      old.location === stamp.location && old.wallet === stamp.wallet
  }
  const row = (pool: Ledger.OpenPool, i: number, ord: number) => {
    const open = { book: pool.book, lot: pool.queue.lots[i]!, location: pool.location, wallet: pool.wallet }
    return { token: pool.book.symbol, ord, json: JSON.stringify(rowOf(open)) }
  }
  /**
   * Every row again. The rows are made as the store takes them (a chunk is made while the one before it is
   * written), not all before the first is written: a long history has hundreds of thousands of open lots.
   */
  const replaceAll = () => {
    const gap = total * LOT_GAP < MAX_ORD ? LOT_GAP : 1
    const next = new Map<object, StoredPool>()
    let count = 0
    for (const pool of pools) {
      const ords = new Map<object, number>()
      const first = sizeOf(pool) === 0 ? -1 : count * gap
      for (let i = pool.queue.head; i < pool.queue.lots.length; i++) ords.set(pool.queue.lots[i]!, count++ * gap)
      next.set(pool.queue, { ...stampOf(pool), ords, first, final: sizeOf(pool) === 0 ? -1 : (count - 1) * gap })
    }
    function* rows() {
      let n = 0
      for (const pool of pools) {
        for (let i = pool.queue.head; i < pool.queue.lots.length; i++) yield row(pool, i, n++ * gap)
      }
    }
    return { writes: { replace: true, deletes: [], rows: rows() }, stored: next }
  }
  if (stored === undefined) return replaceAll()
  // Queues kept whole: unchanged, and in order after the ones kept before them.
  const keptWhole: Array<StoredPool | undefined> = new Array(pools.length)
  let last = -1
  for (let p = 0; p < pools.length; p++) {
    const pool = pools[p]!
    const old = stored.get(pool.queue)
    if (
      old !== undefined && old.version === pool.queue.version && sameStamp(old, pool) &&
      old.ords.size === sizeOf(pool) && (old.first === -1 || old.first > last)
    ) {
      keptWhole[p] = old
      if (old.first !== -1) last = old.final
    }
  }
  const nextKept: Array<number> = new Array(pools.length)
  let following = MAX_ORD + 1
  for (let p = pools.length - 1; p >= 0; p--) {
    nextKept[p] = following
    if (keptWhole[p] !== undefined && keptWhole[p]!.first !== -1) following = keptWhole[p]!.first
  }
  const next = new Map<object, StoredPool>()
  const rows: Array<{ token: string; ord: number; json: string }> = []
  const deletes: Array<number> = []
  let previous = -1
  /**
   * A changed queue whose changes since its rows were stored are all in its log (lots appended, lots taken from the
   * head), with the same stamp: its rows follow the log, O(changes), without a look at every lot. False (nothing
   * done) when the log does not cover them or a new row finds no room between `after` and `before`. Takes over
   * `old.ords`.
   */
  const followLog = (pool: Ledger.OpenPool, old: StoredPool, after: number, before: number): boolean => {
    const { queue } = pool
    if (old.version < queue.changesFrom || !sameStamp(old, pool)) return false
    /** Stored lots taken since, the lots appended since (those taken again skipped), the new record at the head. */
    const gone: Array<LotRecord> = []
    const appended: Array<LotRecord> = []
    let appendedFrom = 0
    let rest: LotRecord | null = null
    /** The `ord` of the stored lot the head's new record replaces (free once that lot's row is deleted). */
    let restOrd: number | undefined
    for (let k = old.version - queue.changesFrom; k < queue.changes.length; k++) {
      const change = queue.changes[k]!
      if ("added" in change) {
        appended.push(change.added)
        continue
      }
      let lastOrd: number | undefined
      for (const lot of change.removed) {
        lastOrd = old.ords.get(lot)
        if (lastOrd !== undefined) gone.push(lot)
        else if (lot === rest) lastOrd = restOrd
        else if (appended[appendedFrom] === lot) appendedFrom++
        else return false
        rest = null
      }
      if (change.rest !== null) {
        rest = change.rest
        restOrd = lastOrd
      }
    }
    const kept = old.ords.size - gone.length
    const size = sizeOf(pool)
    const added = appended.length - appendedFrom
    if ((rest === null ? 0 : 1) + kept + added !== size) return false
    const { head, lots } = queue
    const keptFrom = head + (rest === null ? 0 : 1)
    if (rest !== null && lots[head] !== rest) return false
    for (let j = 0; j < added; j++) if (lots[keptFrom + kept + j] !== appended[appendedFrom + j]) return false
    const firstKept = kept === 0 ? undefined : old.ords.get(lots[keptFrom]!)
    if (kept > 0 && (firstKept === undefined || firstKept <= after || old.final >= before)) return false
    const restBound = firstKept ?? before
    const restAt = rest === null
      ? undefined
      : restOrd !== undefined && restOrd > after && restOrd < restBound
      ? restOrd
      : firstKept !== undefined
      ? firstKept - 1
      : after + 1
    if (restAt !== undefined && (restAt <= after || restAt >= restBound)) return false
    const lastBefore = kept > 0 ? old.final : restAt ?? after
    if (added > 0 && lastBefore + added >= before) return false
    if (rows.length + added + (rest === null ? 0 : 1) > total / 2) return false
    // Room for every new row: the rows follow the log.
    const ords = old.ords as Map<object, number>
    for (const lot of gone) {
      deletes.push(ords.get(lot)!)
      ords.delete(lot)
    }
    if (restAt !== undefined) {
      ords.set(rest!, restAt)
      rows.push(row(pool, head, restAt))
    }
    for (let j = 0; j < added; j++) {
      ords.set(lots[keptFrom + kept + j]!, lastBefore + 1 + j)
      rows.push(row(pool, keptFrom + kept + j, lastBefore + 1 + j))
    }
    const first = restAt ?? firstKept ?? (added > 0 ? lastBefore + 1 : -1)
    const final = added > 0 ? lastBefore + added : kept > 0 ? old.final : restAt ?? -1
    next.set(queue, { ...stampOf(pool), ords, first, final })
    previous = final === -1 ? previous : final
    return true
  }
  for (let p = 0; p < pools.length; p++) {
    const pool = pools[p]!
    const whole = keptWhole[p]
    if (whole !== undefined) {
      next.set(pool.queue, whole)
      if (whole.first !== -1) previous = whole.final
      continue
    }
    const old = stored.get(pool.queue)
    if (old !== undefined && followLog(pool, old, previous, nextKept[p]!)) continue
    const oldOrds = old !== undefined && sameStamp(old, pool) ? old.ords : undefined
    const { head, lots } = pool.queue
    // Lots of the queue that keep their row: the same record, in order, before the next queue kept whole.
    const kept: Array<number | undefined> = new Array(lots.length - head)
    let lastKept = previous
    for (let i = head; i < lots.length; i++) {
      const ord = oldOrds?.get(lots[i]!)
      if (ord !== undefined && ord > lastKept && ord < nextKept[p]!) {
        kept[i - head] = ord
        lastKept = ord
      }
    }
    const bound: Array<number> = new Array(lots.length - head)
    let after = nextKept[p]!
    for (let i = lots.length - 1; i >= head; i--) {
      bound[i - head] = after
      if (kept[i - head] !== undefined) after = kept[i - head]!
    }
    const ords = new Map<object, number>()
    const keptOrds = new Set<number>()
    let first = -1
    for (let i = head; i < lots.length; i++) {
      let ord = kept[i - head]
      if (ord === undefined) {
        ord = previous + 1
        if (ord >= bound[i - head]!) return replaceAll()
        rows.push(row(pool, i, ord))
        if (rows.length > total / 2) return replaceAll()
      } else {
        keptOrds.add(ord)
      }
      if (first === -1) first = ord
      ords.set(lots[i]!, ord)
      previous = ord
    }
    if (old !== undefined) { for (const ord of old.ords.values()) if (!keptOrds.has(ord)) deletes.push(ord) }
    next.set(pool.queue, { ...stampOf(pool), ords, first, final: first === -1 ? -1 : previous })
  }
  for (const [queue, old] of stored) if (!next.has(queue)) { for (const ord of old.ords.values()) deletes.push(ord) }
  return { writes: { replace: false, deletes, rows }, stored: next }
}

/** The steps each token's stored row of steps was made from (by token symbol): the step records, in order. */
export type StoredStepRows = ReadonlyMap<string, ReadonlyArray<StepRecord>>

/**
 * Which tokens' rows of steps (`Ledger.storedSteps`, what the lot rows cite) a build writes: every token's when
 * nothing is known of the stored ones; else those whose steps are not the very records stored (a step added, or
 * made again: a provisional step re-applied), and the rows of tokens left without steps are deleted.
 */
export const planStepRows = (
  state: LedgerState,
  stored: StoredStepRows | undefined
): { readonly writes: StepWrites; readonly stored: StoredStepRows } => {
  const next = new Map<string, ReadonlyArray<StepRecord>>()
  const rows: Array<{ readonly token: string; readonly json: string }> = []
  for (const book of state.books.values()) {
    const steps = book.accrual.steps
    if (steps.length === 0) continue
    next.set(book.symbol, steps.slice())
    const old = stored?.get(book.symbol)
    if (old === undefined || old.length !== steps.length || old.some((step, k) => step !== steps[k])) {
      rows.push({ token: book.symbol, json: JSON.stringify(Ledger.storedSteps(state, book)) })
    }
  }
  const deletes = stored === undefined ? [] : [...stored.keys()].filter((token) => !next.has(token))
  return { writes: { replace: stored === undefined, deletes, rows }, stored: next }
}
