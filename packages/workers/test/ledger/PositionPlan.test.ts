import { describe, expect, it } from "@effect/vitest"
import type { Position } from "@scaledger/domain/ledger/LedgerReport"
import { planPositionRows } from "@scaledger/workers/ledger/PositionPlan"

const position = (token: string, wallet: string | null, lotIds: ReadonlyArray<string>, balance = "1"): Position =>
  ({ token, wallet, lotIds, balance }) as unknown as Position

describe("planPositionRows", () => {
  const ids = ["a", "b"]
  const first = [position("AAA", "0x1", ids), position("BBB", "0x1", ["c"])]

  it("writes every row without stored ones, and keeps those whose id array and rest are the same", () => {
    const all = planPositionRows(first, undefined)
    expect(all.ords).toBeUndefined()
    expect(all.rows).toEqual(first)
    const next = planPositionRows([position("AAA", "0x1", ids), position("BBB", "0x1", ["c"], "2")], all.stored)
    expect(next.ords).toEqual([1])
    expect(next.rows.map((row) => row.token)).toEqual(["BBB"])
  })

  it("writes a row whose id list is another array, even with the same ids", () => {
    const stored = planPositionRows(first, undefined).stored
    expect(planPositionRows([position("AAA", "0x1", ["a", "b"]), first[1]!], stored).ords).toEqual([0])
  })

  it("rewrites every row when positions were added, removed or reordered", () => {
    const stored = planPositionRows(first, undefined).stored
    expect(planPositionRows([first[1]!, first[0]!], stored).ords).toBeUndefined()
    expect(planPositionRows([...first, position("CCC", null, [])], stored).ords).toBeUndefined()
  })
})
