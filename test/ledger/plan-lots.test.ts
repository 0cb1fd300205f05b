import { planLots } from "@scaledger/workers/ledger/LedgerBuilder"
import { describe, expect, it } from "vitest"

const lot = (id: string, qty: string, token = "AAPL") => ({ token, row: { id, qty } })

/** The rows a table would hold after applying the writes, in `ord` order. */
const apply = (
  table: Map<number, string>,
  writes: ReturnType<typeof planLots>["writes"]
): Array<string> => {
  if (writes.replace) table.clear()
  for (const ord of writes.deletes) table.delete(ord)
  for (const row of writes.rows) {
    expect(table.has(row.ord)).toBe(false)
    table.set(row.ord, row.json)
  }
  return [...table.entries()].sort((a, b) => a[0] - b[0]).map(([, json]) => json)
}

describe("lot rows written by an incremental build", () => {
  it("writes only the lots that changed, keeping the read order", () => {
    const table = new Map<number, string>()
    const before = [lot("a", "1"), lot("b", "1"), lot("c", "1"), lot("x", "2", "TSLA"), lot("y", "2", "TSLA")]
    const first = planLots(before, undefined)
    expect(first.writes.replace).toBe(true)
    apply(table, first.writes)
    // FIFO: `a` sold, `b` partly sold, a new AAPL lot `d` at the end of its pool, TSLA untouched.
    const after = [lot("b", "0.5"), lot("c", "1"), lot("d", "3"), lot("x", "2", "TSLA"), lot("y", "2", "TSLA")]
    const second = planLots(after, first.stored)
    expect(second.writes.replace).toBe(false)
    expect(second.writes.rows.map((r) => JSON.parse(r.json).id)).toEqual(["b", "d"])
    expect(second.writes.deletes).toHaveLength(2)
    expect(apply(table, second.writes)).toEqual(after.map((l) => JSON.stringify(l.row)))
  })

  it("rewrites everything when most lots changed (a dividend step) or no room is left", () => {
    const before = [lot("a", "1"), lot("b", "1"), lot("c", "1")]
    const first = planLots(before, undefined)
    expect(planLots(before.map((l) => lot(l.row.id, "1.01")), first.stored).writes.replace).toBe(true)
    // 1,100 new lots between two kept ones: more than the room left there.
    const crowded = [lot("a", "1"), ...Array.from({ length: 1_100 }, (_, i) => lot(`n${i}`, "1")), lot("b", "1")]
    const table = new Map<number, string>()
    apply(table, first.writes)
    const plan = planLots([...crowded, lot("c", "1")], first.stored)
    expect(plan.writes.replace).toBe(true)
    expect(apply(table, plan.writes)).toEqual([...crowded, lot("c", "1")].map((l) => JSON.stringify(l.row)))
  })
})
