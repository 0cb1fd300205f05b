/**
 * Which stored lot rows an incremental build rewrites: only the lots that changed (a partly consumed lot, a new one,
 * a lot of a token whose income index grew), each with an `ord` between its unchanged neighbours so the read order
 * stays the ledger's; every row again (with room between them) when that is not possible.
 */
import type { LotWrites } from "@scaledger/db"
import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import { createHash } from "node:crypto"

const MAX_ORD = 2_147_483_647
/** Room left between stored lots for lots that arrive later (`ledger_lots.ord` is an integer). */
const LOT_GAP = 1_024

interface Planned<K, S extends { readonly ord: number }> {
  readonly writes: LotWrites
  readonly stored: ReadonlyMap<K, S>
}

/**
 * The plan for `count` lots in read order: `keyAt(i)` names lot `i` in `stored`, `unchanged(i, old)` says whether
 * its stored row is still right, `stampAt(i, ord)` is what to remember of it, `rowAt(i)` its row (made only for the
 * rows written).
 */
const plan = <K, S extends { readonly ord: number }>(
  count: number,
  keyAt: (i: number) => K,
  unchanged: (i: number, old: S) => boolean,
  stampAt: (i: number, ord: number) => S,
  rowAt: (i: number) => { readonly token: string; readonly json: string },
  stored: ReadonlyMap<K, S> | undefined
): Planned<K, S> => {
  const replaceAll = (): Planned<K, S> => {
    const gap = count * LOT_GAP < MAX_ORD ? LOT_GAP : 1
    const next = new Map<K, S>()
    const rows = new Array<{ token: string; ord: number; json: string }>(count)
    for (let i = 0; i < count; i++) {
      next.set(keyAt(i), stampAt(i, i * gap))
      rows[i] = { ...rowAt(i), ord: i * gap }
    }
    return { writes: { replace: true, deletes: [], rows }, stored: next }
  }
  if (stored === undefined) return replaceAll()
  // Unchanged lots keep their ord, as long as the kept ones stay in order.
  const kept: Array<number | undefined> = new Array(count)
  const keys: Array<K> = new Array(count)
  let last = -1
  let changed = 0
  for (let i = 0; i < count; i++) {
    keys[i] = keyAt(i)
    const old = stored.get(keys[i]!)
    if (old !== undefined && old.ord > last && unchanged(i, old)) {
      kept[i] = old.ord
      last = old.ord
    } else if (++changed > count / 2) {
      return replaceAll()
    }
  }
  const nextKept: Array<number> = new Array(count)
  let following = MAX_ORD + 1
  for (let i = count - 1; i >= 0; i--) {
    nextKept[i] = following
    if (kept[i] !== undefined) following = kept[i]!
  }
  const keptOrds = new Set<number>()
  const next = new Map<K, S>()
  const rows: Array<{ token: string; ord: number; json: string }> = []
  let previous = -1
  for (let i = 0; i < count; i++) {
    let ord = kept[i]
    if (ord === undefined) {
      ord = previous + 1
      if (ord >= nextKept[i]!) return replaceAll()
      rows.push({ ...rowAt(i), ord })
      next.set(keys[i]!, stampAt(i, ord))
    } else {
      keptOrds.add(ord)
      next.set(keys[i]!, stored.get(keys[i]!)!)
    }
    previous = ord
  }
  const deletes: Array<number> = []
  for (const { ord } of stored.values()) if (!keptOrds.has(ord)) deletes.push(ord)
  return { writes: { replace: false, deletes, rows }, stored: next }
}

/** Stored lot rows named by token and id, compared by a digest of their JSON. */
export type StoredLots = ReadonlyMap<string, { readonly ord: number; readonly digest: string }>

const digestOf = (json: string) => createHash("sha1").update(json).digest("base64")

/** The plan for lot rows already made (each compared whole). */
export const planLots = (
  lots: ReadonlyArray<{ readonly token: string; readonly row: { readonly id: string } }>,
  stored: StoredLots | undefined
): { readonly writes: LotWrites; readonly stored: StoredLots } => {
  const json = lots.map((lot) => JSON.stringify(lot.row))
  const digests = json.map(digestOf)
  return plan(
    lots.length,
    (i) => `${lots[i]!.token}|${lots[i]!.row.id}`,
    (i, old) => old.digest === digests[i],
    (i, ord) => ({ ord, digest: digests[i]! }),
    (i) => ({ token: lots[i]!.token, json: json[i]! }),
    stored
  )
}

/**
 * What a stored lot row was made from, besides the lot record itself (immutable: a consumed lot is a new record):
 * its token's index position and last step (a step adds a basis component), the token's multiplier (its shares),
 * and where the lot is.
 */
export interface StoredLotRow {
  readonly ord: number
  readonly at: number
  readonly last: unknown
  readonly multiplier: bigint
  readonly location: string
  readonly wallet: string | null
}

/** Stored lot rows keyed by the lot record they were made from. */
export type StoredLotRows = ReadonlyMap<object, StoredLotRow>

/**
 * The plan for a state's open lots: a lot whose record, index position, multiplier and place are those of its
 * stored row keeps it, without its row being made again; rows are made (with `cache`'s figures) only for the rest.
 * O(open lots) comparisons, O(changed lots) rows.
 */
export const planLotRows = (
  state: LedgerState,
  stored: StoredLotRows | undefined,
  cache: Ledger.FiguresCache
): { readonly writes: LotWrites; readonly stored: StoredLotRows } => {
  const open = [...Ledger.openLotsOf(state)]
  const rowOf = Ledger.lotRowMaker(state, cache)
  return plan<object, StoredLotRow>(
    open.length,
    (i) => open[i]!.lot,
    (i, old) => {
      const { book, location, wallet } = open[i]!
      const at = book.accrual.steps.length
      return old.at === at && old.last === book.accrual.steps[at - 1] && old.multiplier === book.multiplier &&
        old.location === location && old.wallet === wallet
    },
    (i, ord) => {
      const { book, location, wallet } = open[i]!
      const at = book.accrual.steps.length
      return { ord, at, last: book.accrual.steps[at - 1], multiplier: book.multiplier, location, wallet }
    },
    (i) => ({ token: open[i]!.book.symbol, json: JSON.stringify(rowOf(open[i]!)) }),
    stored
  )
}
