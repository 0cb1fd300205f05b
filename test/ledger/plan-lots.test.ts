import { Ledger } from "@scaledger/domain/ledger/index"
import type { LedgerEvent, PriceTable } from "@scaledger/domain/ledger/LedgerInput"
import type { LedgerState } from "@scaledger/domain/ledger/LedgerState"
import { planLotRows, planStepRows, type StoredLotRows } from "@scaledger/workers/ledger/LotPlan"
import { Either } from "effect"
import { describe, expect, it } from "vitest"

type Writes = ReturnType<typeof planLotRows>["writes"]

/** A stored lot row of `token` as reads list it, with the token's steps as `state` stores them. */
const expanded = (json: string, state: LedgerState, token: string) =>
  JSON.stringify(
    Ledger.expandLotRow(
      JSON.parse(json),
      JSON.parse(JSON.stringify(Ledger.storedSteps(state, state.books.get(token)!)))
    )
  )

/** The rows a table would hold after applying the writes of `state`'s plan, in `ord` order, as reads list them. */
const apply = (table: Map<number, string>, writes: Writes, state: LedgerState): Array<string> => {
  if (writes.replace) table.clear()
  for (const ord of writes.deletes) {
    expect(table.has(ord)).toBe(true)
    table.delete(ord)
  }
  for (const row of writes.rows) {
    expect(table.has(row.ord)).toBe(false)
    table.set(row.ord, expanded(row.json, state, row.token))
  }
  return [...table.entries()].sort((a, b) => a[0] - b[0]).map(([, json]) => json)
}

const multiplierOne = (10n ** 18n).toString()
const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const [w1, w2, exchange, zero] = [hex40(1), hex40(2), hex40(3), hex40(0)]
const BASE = Date.UTC(2025, 0, 2) / 1000
const TOKENS = ["AAPL", "TSLA"]
/**
 * Blocks `from`..`to`, alternating two tokens: three purchases into the first address, a move to the second, a
 * sale from each (one lot of three stays open); a dividend step of AAPL every 1,000 blocks.
 */
const events = (to: number, from = 1): Array<LedgerEvent> =>
  Array.from({ length: to - from + 1 }, (_, k): Array<LedgerEvent> => {
    const i = from + k
    const t = i % 2
    const step = i / 1000
    const [src, dst] = [[zero, w1], [zero, w1], [zero, w1], [w1, w2], [w1, exchange], [w2, exchange]][
      Math.floor(i / 2) % 6
    ]!
    const multiplier = (n: number) => (10n ** 18n + BigInt(n) * 10n ** 15n).toString()
    return [
      ...(i % 1000 === 0
        ? [{
          kind: "multiplier" as const,
          id: `m:${i}`,
          token: "AAPL",
          tokenAddress: hex40(0xa000),
          from: multiplier(step - 1),
          to: multiplier(step),
          effectiveAt: BASE + i,
          block: i,
          logIndex: -1,
          stepKind: "dividend" as const
        }]
        : []),
      {
        kind: "transfer",
        id: `t:${i}`,
        token: TOKENS[t]!,
        tokenAddress: hex40(0xa000 + t),
        from: src,
        to: dst,
        raw: "1000000000000000000",
        block: i,
        logIndex: 0,
        txHash: `0x${i.toString(16).padStart(64, "0")}`,
        timestamp: BASE + i
      }
    ]
  }).flat()
const prices: PriceTable = Object.fromEntries(TOKENS.map((symbol, t) => [
  symbol,
  Array.from({ length: 50 }, (_, r) => ({
    roundId: String(r + 1),
    answer: String((100 + t * 10 + (r % 7)) * 1e8),
    updatedAt: BASE + r * 100 - 1,
    feed: hex40(0xf000 + t)
  }))
]))
const settings = {
  wallets: [{ address: w1, self: true }, { address: w2, self: true }],
  country: "US" as const,
  prices,
  initialMultipliers: { AAPL: multiplierOne }
}
const rowsOf = (state: LedgerState) => [...Ledger.lotRows(state)].map((row) => JSON.stringify(row))
const more = (state: LedgerState, from: number, to: number) =>
  Either.getOrThrow(Ledger.apply(state, events(to, from), { consume: true }))

describe("lot rows written by an incremental build", () => {
  it("writes only the lots that changed, keeping the read order; a dividend step rewrites its token's lots", () => {
    const cache = new Ledger.FiguresCache()
    const table = new Map<number, string>()
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: events(2_500) }))
    let plan = planLotRows(state, undefined, cache)
    expect(plan.writes.replace).toBe(true)
    expect(apply(table, plan.writes, state)).toEqual(rowsOf(state))
    // A few blocks: new lots, sales, moves between the two addresses.
    for (const [from, to] of [[2_501, 2_501], [2_502, 2_513], [2_514, 2_520]] as const) {
      state = more(state, from, to)
      plan = planLotRows(state, plan.stored, cache)
      const rows = [...plan.writes.rows]
      expect(plan.writes.replace).toBe(false)
      expect(rows.length).toBeLessThan(20)
      expect(apply(table, { ...plan.writes, rows }, state)).toEqual(rowsOf(state))
    }
    // Block 3,000 is a dividend step of AAPL: each of its lots gets a basis component.
    state = more(state, 2_521, 3_001)
    const stepped = rowsOf(state).filter((json) => JSON.parse(json).components.length > 1).length
    plan = planLotRows(state, plan.stored, cache)
    const rows = [...plan.writes.rows]
    expect(rows.length).toBeGreaterThanOrEqual(stepped)
    expect(apply(table, { ...plan.writes, rows }, state)).toEqual(rowsOf(state))
  })

  it("rewrites everything when there is no room left between the kept rows", () => {
    const cache = new Ledger.FiguresCache()
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: events(2_000) }))
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
    for (const [i, row] of [...first.writes.rows].entries()) table.set(i, expanded(row.json, state, row.token))
    // A new AAPL lot at the end of its pool, which the (unchanged) TSLA rows follow at once.
    state = more(state, 2_004, 2_004)
    const plan = planLotRows(state, packed, cache)
    expect(plan.writes.replace).toBe(true)
    expect(apply(table, plan.writes, state)).toEqual(rowsOf(state))
  })

  it("stays right over a seeded stream of blocks: purchases, whole and partial sales, moves, dividend steps", () => {
    // A seeded stream of single blocks: purchases into either address, sales of whole and partial lots, moves
    // between the two addresses (which may insert lots in front, outside the log), AAPL's dividend steps.
    let seed = 7
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
    const held = new Map<string, bigint>()
    const unit = 10n ** 18n
    let block = 0
    let step = 0
    const next = (): Array<LedgerEvent> => {
      block++
      const t = random() < 0.7 ? 0 : 1
      const token = TOKENS[t]!
      const base = { token, tokenAddress: hex40(0xa000 + t), block, logIndex: 0, timestamp: BASE + block }
      const transfer = (from: string, to: string, raw: bigint): LedgerEvent => ({
        ...base,
        kind: "transfer",
        id: `t:${block}`,
        from,
        to,
        raw: raw.toString(),
        txHash: `0x${block.toString(16).padStart(64, "0")}`
      })
      const r = random()
      const wallet = random() < 0.6 ? w1 : w2
      const balance = held.get(`${token}:${wallet}`) ?? 0n
      if (t === 0 && r < 0.03) {
        step++
        const multiplier = (n: number) => (unit + BigInt(n) * 10n ** 15n).toString()
        return [{
          ...base,
          logIndex: -1,
          kind: "multiplier",
          id: `m:${block}`,
          from: multiplier(step - 1),
          to: multiplier(step),
          effectiveAt: BASE + block,
          stepKind: "dividend"
        }]
      }
      if (r < 0.55 || balance === 0n) {
        held.set(`${token}:${wallet}`, balance + unit)
        return [transfer(zero, wallet, unit)]
      }
      const raw = r < 0.8 ? balance * BigInt(Math.floor(random() * 60) + 1) / 100n : unit / 2n
      const amount = raw === 0n || raw > balance ? balance : raw
      held.set(`${token}:${wallet}`, balance - amount)
      if (r < 0.9) return [transfer(wallet, exchange, amount)]
      const other = wallet === w1 ? w2 : w1
      held.set(`${token}:${other}`, (held.get(`${token}:${other}`) ?? 0n) + amount)
      return [transfer(wallet, other, amount)]
    }
    const cache = new Ledger.FiguresCache()
    const table = new Map<number, string>()
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: Array.from({ length: 400 }, next).flat() }))
    let plan = planLotRows(state, undefined, cache)
    apply(table, plan.writes, state)
    for (let round = 0; round < 400; round++) {
      const batch = Array.from({ length: 1 + Math.floor(random() * 3) }, next).flat()
      state = Either.getOrThrow(Ledger.apply(state, batch, { consume: true }))
      plan = planLotRows(state, plan.stored, cache)
      expect(apply(table, plan.writes, state)).toEqual(rowsOf(state))
    }
  })

  it("its queues log their changes from the plan on, for the next plan to follow", () => {
    const state = Either.getOrThrow(Ledger.build({ ...settings, events: events(200) }))
    const queues = [...Ledger.openPoolsOf(state)].map((pool) => pool.queue)
    expect(queues.some((queue) => queue.logged)).toBe(false)
    planLotRows(state, undefined, new Ledger.FiguresCache())
    expect(queues.length).toBeGreaterThan(0)
    expect(queues.every((queue) => queue.logged)).toBe(true)
  })

  it("a partly sold lot keeps its row's place, and nothing else of its queue is written", () => {
    const cache = new Ledger.FiguresCache()
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: events(2_000) }))
    const first = planLotRows(state, undefined, cache)
    const table = new Map<number, string>()
    apply(table, first.writes, state)
    const tsla = rowsOf(state).findIndex((json) => JSON.parse(json).token === "TSLA")
    expect(tsla).toBeGreaterThan(0)
    // Half of TSLA's oldest open lot sold from the first address: its row is replaced in place (ord kept), not moved
    // after the rows before it.
    const sale: LedgerEvent = {
      kind: "transfer",
      id: "t:sale",
      token: "TSLA",
      tokenAddress: hex40(0xa001),
      from: w1,
      to: exchange,
      raw: "500000000000000000",
      block: 2_001,
      logIndex: 0,
      txHash: `0x${"5".repeat(64)}`,
      timestamp: BASE + 2_001
    }
    state = Either.getOrThrow(Ledger.apply(state, [sale], { consume: true }))
    const plan = planLotRows(state, first.stored, cache)
    expect(plan.writes.replace).toBe(false)
    expect([...plan.writes.rows].map((row) => row.ord)).toEqual(plan.writes.deletes)
    expect(plan.writes.deletes).toHaveLength(1)
    expect(apply(table, plan.writes, state)).toEqual(rowsOf(state))
  })
})

describe("rows of the tokens' steps written by a build", () => {
  it("writes every token's steps first, then only a token whose steps are not the records stored", () => {
    let state = Either.getOrThrow(Ledger.build({ ...settings, events: events(2_500) }))
    const tokens = (writes: ReturnType<typeof planStepRows>["writes"]) => writes.rows.map((row) => row.token)
    const first = planStepRows(state, undefined)
    // AAPL has two steps (blocks 1,000 and 2,000); TSLA none, so no row.
    expect(first.writes.replace).toBe(true)
    expect(tokens(first.writes)).toEqual(["AAPL"])
    expect(JSON.parse(first.writes.rows[0]!.json).map((step: Array<unknown>) => step[0])).toEqual(["m:1000", "m:2000"])
    // Blocks without a step: nothing to write.
    state = more(state, 2_501, 2_600)
    const same = planStepRows(state, first.stored)
    expect(same.writes).toEqual({ replace: false, deletes: [], rows: [] })
    // A step: AAPL's row again, with it.
    state = more(state, 2_601, 3_000)
    const stepped = planStepRows(state, same.stored)
    expect(tokens(stepped.writes)).toEqual(["AAPL"])
    expect(JSON.parse(stepped.writes.rows[0]!.json)).toHaveLength(3)
    // The same steps made again (a provisional step re-applied on a checkpoint, a rebuild): written again.
    const again = Either.getOrThrow(Ledger.build({ ...settings, events: events(3_000) }))
    expect(tokens(planStepRows(again, stepped.stored).writes)).toEqual(["AAPL"])
    // A token left without steps (its only step rolled back): its row goes.
    const before = Either.getOrThrow(Ledger.build({ ...settings, events: events(900) }))
    expect(planStepRows(before, stepped.stored).writes).toEqual({ replace: false, deletes: ["AAPL"], rows: [] })
  })
})
