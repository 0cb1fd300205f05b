import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  Ledger,
  type LedgerEvent,
  LedgerReport,
  type LedgerReport as Report,
  type LedgerSettings
} from "../../src/ledger/index.js"
import { type History, interpret, type Op, type OpKind, OWN, settingsFor, UNREGISTERED_OWN } from "./generate.js"

const WEIGHTED_KINDS: ReadonlyArray<readonly [OpKind, number]> = [
  ["buy", 8],
  ["mint", 2],
  ["price", 5],
  ["sell", 5],
  ["burn", 1],
  ["self", 5],
  ["selfToOther", 2],
  ["aiSell", 1],
  ["collateralPost", 2],
  ["collateralWithdraw", 2],
  ["bridgeOut", 2],
  ["bridgeIn", 2],
  ["dividend", 3],
  ["split", 1]
]

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.oneof(...WEIGHTED_KINDS.map(([kind, weight]) => ({ arbitrary: fc.constant(kind), weight }))),
  wallet: fc.nat(2),
  other: fc.nat(2),
  token: fc.nat(2),
  amount: fc.integer({ min: 1, max: 1000 }),
  gap: fc.integer({ min: 0, max: 60 * 86_400 }),
  classified: fc.boolean()
})

interface Case {
  readonly history: History
  readonly settings: LedgerSettings
  readonly registerOther: boolean
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    // a first price round per token, or none (then its early movements have no price)
    priced: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    ops: fc.array(opArb, { minLength: 5, maxLength: 60, size: "large" }),
    country: fc.constantFrom("US" as const, "SG" as const, "DE" as const),
    registerOther: fc.boolean()
  })
  .map(({ country, ops, priced, registerOther }) => {
    const firstPrices = priced.flatMap((on, token): Array<Op> =>
      on ? [{ kind: "price", wallet: 0, other: 0, token, amount: 100 + token * 50, gap: 0, classified: false }] : []
    )
    const history = interpret([...firstPrices, ...ops])
    return { history, settings: settingsFor(history, country, registerOther), registerOther }
  })

const build = (settings: LedgerSettings, events: ReadonlyArray<LedgerEvent>) =>
  Either.getOrThrow(Ledger.build({ ...settings, events }))
const reportOf = (c: Case, events: ReadonlyArray<LedgerEvent> = c.history.events): Report =>
  Ledger.report(build(c.settings, events), c.history.end)

const RUNS = { numRuns: 150 }

describe("ledger properties over random valid histories", () => {
  it("raw quantity is conserved: open lots and positions equal the chain balance plus collateral posted", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const report = reportOf(c)
        const own = c.registerOther ? [...OWN, UNREGISTERED_OWN] : OWN
        for (const token of ["AAPL", "CRWD", "TSLA"]) {
          let accountExpected = 0n
          for (const wallet of own) {
            const key = `${wallet.toLowerCase()}|${token}`
            const expected = (c.history.balances.get(key) ?? 0n) + (c.history.posted.get(key) ?? 0n)
            accountExpected += expected
            const holding = report.positions
              .filter((p) => p.token === token)
              .flatMap((p) => p.holdings)
              .find((h) => h.wallet.toLowerCase() === wallet.toLowerCase())
            const balance = holding === undefined ? 0n : toRaw(holding.balance)
            expect(balance).toBe(expected)
            if (report.lotScope === "wallet") {
              const lots = report.lots.filter((l) =>
                l.token === token && l.location === "wallet" && l.wallet!.toLowerCase() === wallet.toLowerCase()
              )
              expect(lots.reduce((sum, l) => sum + BigInt(l.raw), 0n)).toBe(expected)
            }
            expect(expected >= 0n).toBe(true)
          }
          if (report.lotScope === "account") {
            const lots = report.lots.filter((l) => l.token === token && l.location === "account")
            expect(lots.reduce((sum, l) => sum + BigInt(l.raw), 0n)).toBe(accountExpected)
          }
          const transit = report.lots.filter((l) => l.token === token && l.location === "in_transit")
          expect(transit.reduce((sum, l) => sum + BigInt(l.raw), 0n)).toBe(c.history.inTransit.get(token) ?? 0n)
        }
        // a complete history raises no incomplete-history issue
        expect(report.positions.flatMap((p) => p.issues).filter((i) => i.kind === "incomplete_history")).toEqual([])
      }),
      RUNS
    )
  })

  it("basis is conserved through self-transfers and splits", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { events } = c.history
        let state = build(c.settings, [])
        let before = basisSummary(Ledger.report(state, c.history.end))
        for (const event of events) {
          state = Either.getOrThrow(Ledger.apply(state, [event]))
          const after = basisSummary(Ledger.report(state, c.history.end))
          const own = new Set(c.settings.wallets.filter((w) => w.self).map((w) => w.address.toLowerCase()))
          const selfTransfer = event.kind === "transfer" && own.has(event.from.toLowerCase()) &&
            own.has(event.to.toLowerCase())
          const split = event.kind === "multiplier" && event.stepKind === "split"
          if (selfTransfer || split) expect(after).toEqual(before)
          before = after
        }
      }),
      { numRuns: 60 }
    )
  })

  it("disposals consume the oldest lots of their scope first", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        let state = build(c.settings, [])
        for (const event of c.history.events) {
          const lotsBefore = Ledger.report(state, c.history.end).lots
          state = Either.getOrThrow(Ledger.apply(state, [event]))
          const report = Ledger.report(state, c.history.end)
          const slices = report.disposals.filter((d) => d.eventId === event.id && d.lotId !== null)
          if (slices.length === 0) continue
          const first = slices[0]!
          const pool = lotsBefore.filter((l) =>
            l.token === first.token &&
            (report.lotScope === "account"
              ? l.location === "account"
              : l.location === "wallet" && l.wallet === first.wallet)
          )
          expect(slices.map((s) => s.lotId)).toEqual(pool.slice(0, slices.length).map((l) => l.id))
          slices.forEach((s, i) => {
            const lot = pool[i]!
            if (i < slices.length - 1) expect(s.raw).toBe(lot.raw)
            else expect(BigInt(s.raw) <= BigInt(lot.raw)).toBe(true)
          })
          for (let i = 1; i < pool.length; i++) expect(pool[i - 1]!.acquiredAt <= pool[i]!.acquiredAt).toBe(true)
        }
      }),
      { numRuns: 60 }
    )
  })

  it("rebuilding equals applying incrementally, byte for byte", () => {
    fc.assert(
      fc.property(caseArb, fc.nat(), fc.nat(), (c, p, q) => {
        const { events } = c.history
        const [i, j] = [p % (events.length + 1), q % (events.length + 1)].sort((a, b) => a - b) as [number, number]
        const empty = build(c.settings, [])
        const a = Either.getOrThrow(Ledger.apply(empty, events.slice(0, i)))
        const b = Either.getOrThrow(Ledger.apply(a, events.slice(i, j)))
        const incremental = Either.getOrThrow(Ledger.apply(b, events.slice(j)))
        const rebuilt = JSON.stringify(reportOf(c))
        expect(JSON.stringify(Ledger.report(incremental, c.history.end))).toBe(rebuilt)
        // the intermediate state is untouched by what was applied after it, and can be applied to again
        const again = Either.getOrThrow(Ledger.apply(a, events.slice(i)))
        expect(JSON.stringify(Ledger.report(again, c.history.end))).toBe(rebuilt)
        expect(JSON.stringify(Ledger.report(a, c.history.end))).toBe(JSON.stringify(reportOf(c, events.slice(0, i))))
      }),
      RUNS
    )
  })

  it("unknown never becomes zero", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const report = reportOf(c)
        for (const lot of report.lots) {
          const unknown = lot.components.some((x) => x.usd === null)
          expect(lot.basisUsd === null).toBe(unknown)
          expect(lot.nullReasons.length > 0).toBe(unknown)
        }
        for (const d of report.disposals) {
          if (d.lotId === null || d.basisComponents.some((x) => x.usd === null)) {
            expect(d.basisUsd).toBeNull()
            expect(d.gainUsd).toBeNull()
          }
          if (d.proceedsUsd === null) expect(d.gainUsd).toBeNull()
          if (d.classifiedBy === "ai_labeled") expect(d.proceedsUsd).toBeNull()
        }
        for (const p of report.positions) {
          const lots = report.lots.filter((l) => p.lotIds.includes(l.id) && l.token === p.token)
          if (lots.some((l) => l.basisUsd === null)) {
            expect(p.costBasisUsd).toBeNull()
            expect(p.unrealisedGainUsd).toBeNull()
          }
        }
        for (const total of Object.values(report.totals)) {
          if (total.unknownCount > 0) expect(total.usd).toBeNull()
          else expect(total.usd).toBe(total.knownUsd)
        }
      }),
      RUNS
    )
  })

  it("is deterministic and its report matches the LedgerReport schema", () => {
    const decode = Schema.decodeUnknownSync(LedgerReport)
    fc.assert(
      fc.property(caseArb, (c) => {
        const first = JSON.stringify(reportOf(c))
        const copy = structuredClone({ settings: c.settings, events: c.history.events })
        const second = JSON.stringify(Ledger.report(build(copy.settings, copy.events), c.history.end))
        expect(second).toBe(first)
        decode(JSON.parse(first))
      }),
      RUNS
    )
  })
})

/** Known basis in attoUSD over all open lots, and the raw quantity whose basis is unknown. */
const basisSummary = (report: Report) => {
  let known = 0n
  let unknownRaw = 0n
  for (const lot of report.lots) {
    if (lot.basisUsd === null) unknownRaw += BigInt(lot.raw)
    else known += toRaw(lot.basisUsd)
  }
  return { known, unknownRaw }
}

/** A decimal string with at most 18 places as an 18-decimal integer. */
const toRaw = (text: string): bigint => {
  const negative = text.startsWith("-")
  const [whole, fraction = ""] = (negative ? text.slice(1) : text).split(".")
  const value = BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, "0") || "0")
  return negative ? -value : value
}
