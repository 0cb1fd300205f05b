/**
 * Which position rows a build writes. A position row lists its lots' ids (`lotIds`, thousands for a large
 * holding); the report shares that list with its kept per-queue sums (`Ledger.FiguresCache`), so a position whose
 * queue did not change carries the very same array. A row is written again only when its list is another array or
 * the rest of its JSON differs from the stored row's.
 */
import type { Position } from "@scaledger/domain/ledger/LedgerReport"

/** What is kept of each stored position row, in `ord` order. */
export interface StoredPosition {
  readonly key: string
  readonly lotIds: ReadonlyArray<string>
  /** The row's JSON without its lot ids. */
  readonly rest: string
}

export interface PositionPlan {
  /** The rows to write, and their `ord` (undefined: every row is written, in order). */
  readonly rows: ReadonlyArray<Position>
  readonly ords: ReadonlyArray<number> | undefined
  /** What the stored rows are once written, for the next build. */
  readonly stored: ReadonlyArray<StoredPosition>
}

const keyOf = (row: Position): string => `${row.token}|${row.wallet ?? ""}`

const restOf = (row: Position): string => JSON.stringify({ ...row, lotIds: undefined })

/**
 * Compares the build's positions with the stored ones (`previous`, none: replace all). When the positions are the
 * same ones in the same order, only those that changed are written, at their `ord`.
 */
export const planPositionRows = (
  positions: ReadonlyArray<Position>,
  previous: ReadonlyArray<StoredPosition> | undefined
): PositionPlan => {
  const stored = positions.map((row): StoredPosition => ({ key: keyOf(row), lotIds: row.lotIds, rest: restOf(row) }))
  const same = previous !== undefined && previous.length === stored.length &&
    stored.every((row, i) => row.key === previous[i]!.key)
  if (!same) return { rows: positions, ords: undefined, stored }
  const rows: Array<Position> = []
  const ords: Array<number> = []
  for (let i = 0; i < stored.length; i++) {
    const before = previous[i]!
    if (before.lotIds !== stored[i]!.lotIds || before.rest !== stored[i]!.rest) {
      rows.push(positions[i]!)
      ords.push(i)
    }
  }
  return { rows, ords, stored }
}
