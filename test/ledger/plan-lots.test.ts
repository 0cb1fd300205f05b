import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import { planLotRows, type StoredLotRows } from "@scaledger/workers/ledger/LotPlan"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { traderEvents, traderPrices, traderWallets } from "../../packages/domain/bench/trader.js"

type Writes = ReturnType<typeof planLotRows>["writes"]

/** The rows a table would hold after applying the writes, in `ord` order. */
const apply = (table: Map<number, string>, writes: Writes): Array<string> => {
  if (writes.replace) table.clear()
  for (const ord of writes.deletes) {
    expect(table.has(ord)).toBe(true)
    table.delete(ord)
  }
  for (const row of writes.rows) {
    expect(table.has(row.ord)).toBe(false)
    table.set(row.ord, row.json)
  }
  return [...table.entries()].sort((a, b) => a[0] - b[0]).map(([, json]) => json)
}

const [w1, w2] = traderWallets(1)
const settings = {
  wallets: [{ address: w1, self: true }, { address: w2, self: true }],
  country: "US" as const,
  prices: traderPrices(20_000),
  initialMultipliers: {}
}
const rowsOf = (state: LedgerState) => [...Ledger.lotRows(state)].map((row) => JSON.stringify(row))
const more = (state: LedgerState, from: number, to: number) =>
  Either.getOrThrow(Ledger.apply(state, traderEvents(to, 1, from), { consume: true }))

describe("lot rows written by an incremental build", () => {
  it("writes only the lots that changed, keeping the read order; a dividend step rewrites its token's lots", () => {
    const cache = new Ledger.FiguresCache()
    const table = new Map<number, string>()
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: traderEvents(3_000) }))
    let plan = planLotRows(state, undefined, cache)
    expect(plan.writes.replace).toBe(true)
    expect(apply(table, plan.writes)).toEqual(rowsOf(state))
    // A few blocks: new lots, sales, moves between the two addresses.
    for (const [from, to] of [[3_001, 3_001], [3_002, 3_013], [3_014, 3_020]] as const) {
      state = more(state, from, to)
      plan = planLotRows(state, plan.stored, cache)
      expect(plan.writes.replace).toBe(false)
      expect(plan.writes.rows.length).toBeLessThan(20)
      expect(apply(table, plan.writes)).toEqual(rowsOf(state))
    }
    // Block 4,000 is a dividend step of one token: each of its lots gets a basis component.
    state = more(state, 3_021, 4_001)
    const stepped = rowsOf(state).filter((json) => JSON.parse(json).components.length > 1).length
    plan = planLotRows(state, plan.stored, cache)
    expect(plan.writes.rows.length).toBeGreaterThanOrEqual(stepped)
    expect(apply(table, plan.writes)).toEqual(rowsOf(state))
  })

  it("rewrites everything when there is no room left between the kept rows", () => {
    const cache = new Ledger.FiguresCache()
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: traderEvents(2_000) }))
    const first = planLotRows(state, undefined, cache)
    // The same rows stored with no room between them (ords 0, 1, 2, ...).
    let ord = 0
    const packed: StoredLotRows = new Map(
      [...first.stored].map(([queue, pool]) => {
        const ords = new Map([...pool.ords.keys()].map((lot) => [lot, ord++] as const))
        const values = [...ords.values()]
        return [queue, { ...pool, ords, first: values[0] ?? -1, final: values[values.length - 1] ?? -1 }] as const
      })
    )
    const table = new Map<number, string>()
    first.writes.rows.forEach((row, i) => table.set(i, row.json))
    // New lots at the end of a pool that another pool's rows follow at once.
    state = more(state, 2_001, 2_003)
    const plan = planLotRows(state, packed, cache)
    expect(plan.writes.replace).toBe(true)
    expect(apply(table, plan.writes)).toEqual(rowsOf(state))
  })
})
