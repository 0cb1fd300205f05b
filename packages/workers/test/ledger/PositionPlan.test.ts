import { describe, expect, it } from "@effect/vitest"
import type { Position } from "@scaledger/domain/ledger/LedgerReport"
import { planPositionRows } from "@scaledger/workers/ledger/PositionPlan"

const position = (token: string, wallet: string | null, lotIds: ReadonlyArray<string>, balance = "1"): Position =>
  ({ token, wallet, lotIds, balance }) as unknown as Position

describe("planPositionRows", () => {
  const first = [position("AAA", "0x1", ["a", "b"]), position("BBB", "0x1", ["c"])]

  it("writes every row without stored ones, without their lot ids, and then only the rows that changed", () => {
    const all = planPositionRows(first, undefined)
    expect(all.ords).toBeUndefined()
    expect(all.rows).toEqual([{ token: "AAA", wallet: "0x1", balance: "1" }, {
      token: "BBB",
      wallet: "0x1",
      balance: "1"
    }])
    const next = planPositionRows([position("AAA", "0x1", ["a", "b"]), position("BBB", "0x1", ["c"], "2")], all.stored)
    expect(next.ords).toEqual([1])
    expect(next.rows).toEqual([{ token: "BBB", wallet: "0x1", balance: "2" }])
  })

  it("does not write a row whose lot ids alone changed (the lot rows hold them)", () => {
    const stored = planPositionRows(first, undefined).stored
    expect(planPositionRows([position("AAA", "0x1", ["a", "b", "d"]), first[1]!], stored).ords).toEqual([])
  })

  it("rewrites every row when positions were added, removed or reordered", () => {
    const stored = planPositionRows(first, undefined).stored
    expect(planPositionRows([first[1]!, first[0]!], stored).ords).toBeUndefined()
    expect(planPositionRows([...first, position("CCC", null, [])], stored).ords).toBeUndefined()
  })
})
