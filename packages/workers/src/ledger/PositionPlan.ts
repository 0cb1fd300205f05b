/**
 * Which position rows a build writes: a row is written again only when its JSON differs from the stored row's. Rows
 * leave out the lots' ids (`PositionRow`): a large holding has thousands, which `ledger_lots` holds already.
 */
import type { PositionRow } from "@scaledger/db/reads/LedgerViews"
import type { Position } from "@scaledger/domain/ledger/LedgerReport"

/** What is kept of each stored position row, in `ord` order. */
export interface StoredPosition {
  readonly key: string
  readonly json: string
}

export interface PositionPlan {
  /** The rows to write, and their `ord` (undefined: every row is written, in order). */
  readonly rows: ReadonlyArray<PositionRow>
  readonly ords: ReadonlyArray<number> | undefined
  /** What the stored rows are once written, for the next build. */
  readonly stored: ReadonlyArray<StoredPosition>
}

const keyOf = (row: PositionRow): string => `${row.token}|${row.wallet ?? ""}`

export const positionRow = ({ lotIds: _ids, ...row }: Position): PositionRow => row

/**
 * Compares the build's positions with the stored ones (`previous`, none: replace all). When the positions are the
 * same ones in the same order, only those that changed are written, at their `ord`.
 */
export const planPositionRows = (
  positions: ReadonlyArray<Position>,
  previous: ReadonlyArray<StoredPosition> | undefined
): PositionPlan => {
  const rows = positions.map(positionRow)
  const stored = rows.map((row): StoredPosition => ({ key: keyOf(row), json: JSON.stringify(row) }))
  const same = previous !== undefined && previous.length === stored.length &&
    stored.every((row, i) => row.key === previous[i]!.key)
  if (!same) return { rows, ords: undefined, stored }
  const changed: Array<PositionRow> = []
  const ords: Array<number> = []
  for (let i = 0; i < stored.length; i++) {
    if (previous[i]!.json !== stored[i]!.json) {
      changed.push(rows[i]!)
      ords.push(i)
    }
  }
  return { rows: changed, ords, stored }
}
