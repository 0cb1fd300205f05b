import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { AlertMonitorLive } from "@scaledger/workers/alerts/AlertMonitor"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { BigNumber } from "bignumber.js"
import { Duration, Effect, Layer, Option, Schedule } from "effect"
import { serviceOnSeededChain, TestChain } from "../support/ChainHarness.js"
import { call, newKey, type Reply } from "../support/RestHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const ALICE_2 = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"

/** The alert monitor, deriving alerts from the record every 200 ms. */
const AlertMonitor = AlertMonitorLive.pipe(
  Layer.provide(Layer.mergeAll(AlertSources.Default, AlertsStore.Default, FxRates.Default)),
  Layer.provide(WebhookConfig.layer({ monitorPollMs: 200 }))
)

/** REST, ingestion, the ledger builder and the alert monitor as fibers on one database, against the seeded chain. */
const Service = serviceOnSeededChain(AlertMonitor)

/** Retries `read` until `ready` holds (the workers are asynchronous), failing after 30 s with the last answer. */
const until = <R>(what: string, read: Effect.Effect<Reply, never, R>, ready: (reply: Reply) => boolean) =>
  read.pipe(
    Effect.filterOrFail(ready, (reply) => `${what}: ${reply.status} ${reply.text.slice(0, 300)}`),
    Effect.retry(Schedule.spaced(Duration.millis(150)).pipe(Schedule.upTo(Duration.seconds(30)))),
    Effect.orDie
  )

const mul = (a: string, b: string) => new BigNumber(a).times(b).toFixed()

/**
 * The positions once the wallet's backfill has completed and the account's ledger build has caught up with every
 * input change (the first build, the replay answering the new wallet, can come before the backfill has fetched
 * everything).
 */
const settledAfterBackfill = (key: string, address: string, account: string) =>
  Effect.gen(function*() {
    yield* until(`${address}'s backfill`, call("GET", `/v1/wallets/${address}`, { key }), (r) =>
      r.status === 200 && r.body.backfill.status === "complete")
    // Every seeded price round recorded too (the price recorder walks feed history back to the first transfer).
    const chain = yield* TestChain
    const sql = yield* SqlClient.SqlClient
    yield* sql<{ n: string }>`SELECT count(*) AS n FROM price_rounds`.pipe(
      Effect.orDie,
      Effect.filterOrFail(([row]) =>
        Number(row!.n) >= chain.manifest.prices.length
      ),
      Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(30)))),
      Effect.orDie
    )
    const { id } = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(account)))
    const store = yield* LedgerStore
    yield* store.state(id).pipe(
      Effect.orDie,
      Effect.filterOrFail((state) => Option.isSome(state) && state.value.builtVersion >= state.value.requestedVersion),
      Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(30)))),
      Effect.orDie
    )
    return yield* call("GET", "/v1/positions", { key })
  })

describe("the ledger through the API, on the local chain", () => {
  it.live(
    "positions, share equivalence, events and replays: a self-transfer reads as a disposal until both addresses are own",
    () =>
      Effect.gen(function*() {
        const chain = yield* TestChain
        yield* Effect.flatMap(ChainStore, (store) =>
          store.cursor(chain.node.chainId, "recorder").pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail("no cursor"), onSome: Effect.succeed })),
            Effect.retry(Schedule.spaced(Duration.millis(50))),
            Effect.timeout(Duration.seconds(20)),
            Effect.orDie
          ))
        const { key } = yield* newKey("ledger-alice")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: ALICE, label: "alice" } })).status).toBe(201)

        // The first build is a replay: reads answer 409 with Retry-After until it is stored.
        const first = yield* call("GET", "/v1/positions", { key })
        if (first.status === 409) {
          expect(first.body.error.code).toBe("replay_in_progress")
          expect(first.headers["retry-after"]).toBe("1")
        }
        const settled = yield* settledAfterBackfill(key, ALICE, "ledger-alice")
        const byToken = Object.fromEntries(settled.body.positions.map((p: any) => [p.token, p]))
        expect(Object.keys(byToken).sort()).toEqual(["AAPL", "CRWD", "F", "MU"])
        // CRWD: minted 10, sent 1 to Bob, then the 4:1 split: 9 tokens are 36 shares; the lot was bought at 1.
        expect(byToken.CRWD).toMatchObject({
          wallet: ALICE,
          balance: "9",
          sharesEquivalent: "36",
          multiplier: { at: "4", from: "1" }
        })
        // AAPL: minted 20, 5 to Alice's second (not yet own) address, 1 back: 16 × 1.000566080061092436.
        expect(byToken.AAPL).toMatchObject({
          balance: "16",
          multiplier: { at: "1.000566080061092436", from: "1" },
          sharesEquivalent: mul("16", "1.000566080061092436")
        })
        expect(byToken.MU.sharesEquivalent).toBe(mul("2", "1.000074823219171086"))
        expect(byToken.F.sharesEquivalent).toBe(mul("900", "1.000145502866134027"))
        expect(settled.body.currency).toBe("USD")

        const toSecond = yield* call("GET", "/v1/events?type=transfer.out&needsReview=true", { key })
        const aappleOut = toSecond.body.events.find((e: any) => e.token === "AAPL")
        expect(aappleOut).toMatchObject({
          type: "transfer.out",
          counterparty: ALICE_2,
          needsReview: true,
          qty: "5",
          walletTransaction: {
            block: chain.manifest.transfers.find((t) => t.kind === "self" && t.symbol === "AAPL")!.block
          }
        })
        // The alert monitor raises the review backlog into the alert store, which the portfolio reads.
        const portfolio = yield* until(
          "the unlabeled-transfers alert",
          call("GET", "/v1/portfolio", { key }),
          (reply) => reply.body.alerts.some((a: any) => a.kind === "unlabeled-transfers")
        )
        expect(portfolio.body.alerts.find((a: any) => a.kind === "unlabeled-transfers")).toMatchObject({
          severity: "warning",
          title: "Transfers await review"
        })
        // One vocabulary and one shape: the portfolio's alerts are the store's open alerts, as GET /v1/alerts lists
        // them; notes about the positions themselves are `notices`, never alerts.
        const open = yield* call("GET", "/v1/alerts?open=true", { key })
        const unlabeled = portfolio.body.alerts.find((a: any) => a.kind === "unlabeled-transfers")
        expect(open.body.alerts.find((a: any) => a.id === unlabeled.id)).toEqual(unlabeled)
        for (const alert of portfolio.body.alerts) {
          expect(Object.keys(alert).sort()).toEqual(
            ["at", "detail", "id", "kind", "resolvedAt", "severity", "symbol", "title"]
          )
        }
        for (const notice of portfolio.body.notices) {
          expect(["incomplete_history", "missing_prices"]).toContain(notice.kind)
        }
        expect(portfolio.body.summary).toMatchObject({ positionCount: 4, fxCurrency: "USD" })

        // Income from multiplier growth appears as events with no wallet transaction.
        const income = yield* call("GET", "/v1/events?type=income.multiplier_increase", { key })
        const aaplIncome = income.body.events.find((e: any) => e.token === "AAPL")
        expect(aaplIncome).toMatchObject({
          type: "income.multiplier_increase",
          walletTransaction: null,
          from: "1",
          to: "1.000566080061092436",
          date: "2026-08-14"
        })
        // No split of CRWD is income.
        expect(income.body.events.some((e: any) => e.token === "CRWD")).toBe(false)
        const splits = yield* call("GET", "/v1/events?type=split", { key })
        expect(splits.body.events).toEqual([
          expect.objectContaining({ token: "CRWD", from: "1", to: "4", taxable: false })
        ])

        // Alice's second address, added as own: the same transfer becomes a movement between her addresses.
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: ALICE_2, label: "alice-2" } })).status).toBe(
          201
        )
        yield* settledAfterBackfill(key, ALICE_2, "ledger-alice")
        const replayed = yield* call("GET", "/v1/events?type=transfer.self", { key })
        expect(replayed.body.events.filter((e: any) => e.token === "AAPL").map((e: any) => e.needsReview)).toEqual([
          false,
          false
        ])
        const stillOut = yield* call("GET", "/v1/events?type=transfer.out", { key })
        expect(stillOut.body.events.some((e: any) => e.counterparty === ALICE_2)).toBe(false)
        const positions = yield* call("GET", "/v1/positions", { key })
        const aaplPositions = positions.body.positions.filter((p: any) => p.token === "AAPL")
        expect(aaplPositions.map((p: any) => [p.wallet, p.balance]).sort()).toEqual(
          [[ALICE_2, "4"], [ALICE, "16"]].sort()
        )
        const onlySecond = yield* call("GET", `/v1/positions?wallet=${ALICE_2.toLowerCase()}`, { key })
        expect(onlySecond.body.positions.map((p: any) => p.token)).toEqual(["AAPL"])

        // Marking the second address not own again (PATCH) is a replay too: the transfer reads as a disposal again.
        expect((yield* call("PATCH", `/v1/wallets/${ALICE_2}`, { key, body: { self: false } })).status).toBe(200)
        const unmarked = yield* until(
          "the un-own replay",
          call("GET", "/v1/events?type=transfer.out&needsReview=true", { key }),
          (r) => r.status === 200 && r.body.events.some((e: any) => e.token === "AAPL" && e.counterparty === ALICE_2)
        )
        expect(unmarked.body.events.filter((e: any) => e.counterparty === ALICE_2).map((e: any) => e.qty)).toEqual([
          "5"
        ])
        expect((yield* call("PATCH", `/v1/wallets/${ALICE_2}`, { key, body: { self: true } })).status).toBe(200)
        yield* until(
          "the re-own replay",
          call("GET", "/v1/events?type=transfer.self", { key }),
          (r) => r.status === 200 && r.body.events.some((e: any) => e.token === "AAPL")
        )

        // Under the German rule lots are pooled per account: one AAPL position across both addresses.
        expect((yield* call("PUT", "/v1/settings", { key, body: { country: "DE" } })).status).toBe(200)
        const pooled = yield* until(
          "the DE replay",
          call("GET", "/v1/positions", { key }),
          (r) => r.status === 200 && r.body.positions.some((p: any) => p.token === "AAPL" && p.wallet === null)
        )
        const aapl = pooled.body.positions.find((p: any) => p.token === "AAPL")
        expect(aapl.balance).toBe("20")
        expect(aapl.holdings.map((h: any) => [h.wallet, h.balance]).sort()).toEqual(
          [[ALICE_2, "4"], [ALICE, "16"]].sort()
        )
        const basis = yield* call("GET", "/v1/basis?token=aapl&lotMatching=lifo", { key })
        expect(basis.body).toMatchObject({ token: "AAPL", lotMatching: "fifo", lotScope: "account", currency: "USD" })
        // Written whole before it is sent: its length is known, and HEAD answers it without the body.
        expect(basis.headers["content-type"]).toBe("application/json")
        expect(basis.headers["content-length"]).toBe(String(Buffer.byteLength(basis.text)))
        const head = yield* call("HEAD", "/v1/basis?token=aapl", { key })
        expect([head.status, head.headers["content-length"], head.text]).toEqual([
          200,
          basis.headers["content-length"],
          ""
        ])

        // Filters and their errors.
        expectCode(yield* call("GET", "/v1/events?from=2026-13-01", { key }), 400, "invalid_date")
        const inverted = yield* call("GET", "/v1/events?from=2026-07-03&to=2026-07-02", { key })
        expectCode(inverted, 400, "invalid_date")
        expect(inverted.body.error.details).toMatchObject({ field: "from", reason: "after_to" })
        expectCode(yield* call("GET", "/v1/events?type=teleport", { key }), 400, "invalid_request")
        expectCode(yield* call("GET", "/v1/basis?token=NOPE", { key }), 404, "not_found")
        expectCode(yield* call("GET", "/v1/positions?wallet=0x1234", { key }), 400, "invalid_address")
        expectCode(yield* call("GET", `/v1/positions?wallet=${"0x" + "ab".repeat(20)}`, { key }), 404, "not_found")
        const july = yield* call("GET", "/v1/events?from=2026-07-02&to=2026-07-02", { key })
        expect(july.body.events.length).toBeGreaterThan(0)
        expect(july.body.events.every((e: any) => e.date === "2026-07-02")).toBe(true)
        // Pagination walks every event once, in chain order.
        const all: Array<any> = []
        let cursor: string | null = null
        do {
          const page: Reply = yield* call("GET", `/v1/events?limit=3${cursor === null ? "" : `&cursor=${cursor}`}`, {
            key
          })
          for (const event of page.body.events) all.push(event)
          cursor = page.body.nextCursor
        } while (cursor !== null)
        expect(new Set(all.map((e) => e.id)).size).toBe(all.length)
        const blocks = all.map((e) => e.block)
        expect([...blocks].sort((a, b) => a - b)).toEqual(blocks)

        // Another account sees none of it.
        const other = yield* newKey("ledger-stranger")
        expect((yield* call("GET", "/v1/positions", { key: other.key })).body.positions).toEqual([])
        expect((yield* call("GET", "/v1/events", { key: other.key })).body.events).toEqual([])
        // Nothing built for it: its totals are a known zero, formatted as such.
        const empty = (yield* call("GET", "/v1/portfolio", { key: other.key })).body
        expect(empty.totals.value).toMatchObject({ amount: "0", formatted: "$0.00", usd: "0" })
      }).pipe(Effect.provide(Service), Effect.scoped),
    180_000
  )
})

describe("deleting a wallet, on the local chain", () => {
  it.live(
    "deleting one of two own addresses deletes what was derived from it: the transfer between them is an outflow again",
    () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("ledger-two-own")
        for (const [address, label] of [[ALICE, "alice"], [ALICE_2, "alice-2"]] as const) {
          expect((yield* call("POST", "/v1/wallets", { key, body: { address, label } })).status).toBe(201)
        }
        yield* settledAfterBackfill(key, ALICE, "ledger-two-own")
        yield* settledAfterBackfill(key, ALICE_2, "ledger-two-own")
        // Both addresses own from the start: the transfer between them is classified a self-transfer by rule.
        yield* until(
          "the self-transfer",
          call("GET", "/v1/events?type=transfer.self", { key }),
          (r) => r.status === 200 && r.body.events.some((e: any) => e.token === "AAPL")
        )
        const before = yield* call("GET", "/v1/positions", { key })
        expect(before.body.positions.some((p: any) => p.wallet === ALICE_2)).toBe(true)
        // The cursor after each event, one event a page.
        const listed: Array<{ readonly id: string; readonly cursor: string | null }> = []
        let next: string | null = null
        do {
          const page: Reply = yield* call("GET", `/v1/events?limit=1${next === null ? "" : `&cursor=${next}`}`, { key })
          next = page.body.nextCursor
          listed.push({ id: page.body.events[0].id, cursor: next })
        } while (next !== null)

        expect((yield* call("DELETE", `/v1/wallets/${ALICE_2}`, { key })).status).toBe(204)
        // Nothing is held at the deleted address any more, and what went there left the account: an outflow to an
        // address of unknown relationship, needing review (SPEC: an own address not registered looks like a disposal).
        yield* until(
          "the positions without the deleted address",
          call("GET", "/v1/positions", { key }),
          (r) => r.status === 200 && !r.body.positions.some((p: any) => p.wallet === ALICE_2)
        )
        yield* until(
          "the outflow",
          call("GET", "/v1/events?type=transfer.out&needsReview=true", { key }),
          (r) => r.status === 200 && r.body.events.some((e: any) => e.token === "AAPL" && e.counterparty === ALICE_2)
        )
        const self = yield* call("GET", "/v1/events?type=transfer.self", { key })
        expect(self.body.events).toEqual([])

        // The replay renumbered the events: a cursor issued after a row still in its place goes on from there; one
        // issued after a row the replay moved is refused rather than repeating or skipping events.
        const now = (yield* call("GET", "/v1/events?limit=500", { key })).body.events.map((e: any) => e.id)
        const moved = listed.findIndex((row, i) => now[i] !== row.id)
        expect(moved).toBeGreaterThan(0)
        const kept = yield* call("GET", `/v1/events?limit=1&cursor=${listed[moved - 1]!.cursor}`, { key })
        expect(kept.body.events.map((e: any) => e.id)).toEqual([now[moved]])
        const stale = yield* call("GET", `/v1/events?limit=1&cursor=${listed[moved]!.cursor}`, { key })
        expectCode(stale, 400, "invalid_request")
        expect(stale.body.error.details).toMatchObject({ field: "cursor", reason: "stale" })
      }).pipe(Effect.provide(Service), Effect.scoped),
    120_000
  )
})

const expectCode = (reply: Reply, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(reply.body.error.code).toBe(code)
}

const CAROL = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
const big = (value: string) => new BigNumber(value)
/** The ledger's rounding: 18 decimals, half to even. */
const wad = (value: BigNumber) => value.decimalPlaces(18, BigNumber.ROUND_HALF_EVEN).toFixed()

/** ECB days (units per EUR) for the seeded history's dates, so each date has a rate of its own. */
const ecbDays = [
  { date: "2026-07-01", perEur: { USD: "1.1700", SGD: "1.5000" } },
  { date: "2026-07-24", perEur: { USD: "1.1600", SGD: "1.5100" } },
  { date: "2026-07-31", perEur: { USD: "1.1500", SGD: "1.5200" } },
  { date: "2026-08-14", perEur: { USD: "1.1400", SGD: "1.5300" } },
  { date: "2026-09-02", perEur: { USD: "1.1300", SGD: "1.5400" } }
]
const sgdPerUsd = (date: string) => {
  const day = [...ecbDays].reverse().find((d) => d.date <= date)!
  return big(day.perEur.SGD).div(day.perEur.USD)
}

describe("figures, with prices from the feeds", () => {
  it.live(
    "basis from feed prices, income from a dividend step added to basis, unknown kept null, and SGD at each figure's own date",
    () =>
      Effect.gen(function*() {
        const { key } = yield* newKey("ledger-carol")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: CAROL, label: "carol" } })).status).toBe(201)
        const settled = yield* settledAfterBackfill(key, CAROL, "ledger-carol")
        const byToken = Object.fromEntries(settled.body.positions.map((p: any) => [p.token, p]))

        // CRWD: 1.25 received from the exchange on 2026-07-03 at the 481.50 round: 601.875, after the 4:1 split.
        expect(byToken.CRWD).toMatchObject({
          balance: "1.25",
          sharesEquivalent: "5",
          multiplier: { at: "4", from: "4" },
          costBasis: "$601.88",
          costBasisAmount: "601.875",
          unknownBecause: []
        })
        // TSLA: 4 minted before any price round (unknown basis) and 0.5 bought at 301.75: the position's basis is
        // unknown, never the 150.875 it knows about, and it says why.
        expect(byToken.TSLA.costBasis).toBeNull()
        expect(byToken.TSLA.unknownBecause).toEqual([expect.objectContaining({ reason: "missing_price" })])
        const tslaBasis = yield* call("GET", "/v1/basis?token=TSLA", { key })
        expect(tslaBasis.body.lots.map((l: any) => [l.qty, l.basis])).toEqual([["4", null], ["0.5", "150.875"]])

        // MU: 1 received on 2026-07-24 at 15:05:30 (round 118.42); the dividend step of 15:10:24 (1 → 1.000074823219171086)
        // is income of 1 × 0.000074823219171086 × 118.42 / 1 (the round in force then), added to the lot's basis.
        const muIncome = wad(big("1").times("0.000074823219171086").times("118.42"))
        const income = yield* call("GET", "/v1/events?type=income.multiplier_increase", { key })
        const mu = income.body.events.find((e: any) => e.token === "MU")
        expect(mu).toMatchObject({
          walletTransaction: null,
          from: "1",
          to: "1.000074823219171086",
          income: { usd: muIncome, rate: "1" },
          taxable: true
        })
        const muBasis = yield* call("GET", "/v1/basis?token=MU", { key })
        expect(muBasis.body.lots).toEqual([expect.objectContaining({
          qty: "1",
          basisUsd: big("118.42").plus(muIncome).toFixed(),
          incomeAddedUsd: muIncome
        })])
        expect(muBasis.body.accruedIncomeAddedToBasisUsd).toBe(muIncome)

        // AAPL: the 2.5 sent to the exchange on 2026-08-14 came, FIFO, out of the 7.5 minted before any price:
        // proceeds known (2.5 × the 229.41 round, multiplier-adjusted price), basis and gain unknown.
        const aapl = yield* call("GET", "/v1/basis?token=AAPL", { key })
        const sale = aapl.body.disposals.find((d: any) => d.date === "2026-08-14")
        expect(sale).toMatchObject({ qty: "2.5", basis: null, gain: null, needsReview: true, holdingPeriod: "short" })
        expect(sale.proceedsUsd).toBe(wad(big("2.5").times("229.41")))
        expect(aapl.body.realisedGains.total).toBeNull()

        // The same record in SGD: every figure at the rate of its own date, with provenance.
        // And a publication of today's, for the current value (positions are valued at the build's date).
        const today = new Date().toISOString().slice(0, 10)
        const todays = { date: today, perEur: { USD: "1.1000", SGD: "1.4300" } }
        yield* Effect.flatMap(FxRates, (fx) => fx.upsert("ecb-via-eurofxref", [...ecbDays, todays]))
        expect((yield* call("PUT", "/v1/settings", { key, body: { reportingCurrency: "SGD" } })).status).toBe(200)
        const inSgd = yield* until("the SGD replay", call("GET", "/v1/positions", { key }), (r) =>
          r.status === 200 && r.body.currency === "SGD")
        const crwd = inSgd.body.positions.find((p: any) =>
          p.token === "CRWD"
        )
        const crwdSgd = big("601.875").times(sgdPerUsd("2026-07-03"))
        expect(big(crwd.costBasisAmount).minus(crwdSgd).abs().lt("0.000001")).toBe(true)
        expect(crwd.costBasis).toBe(`S$${crwdSgd.toFormat(2, BigNumber.ROUND_HALF_UP)}`)
        const muSgd = (yield* call("GET", "/v1/events?type=income.multiplier_increase", { key })).body.events
          .find((e: any) => e.token === "MU")
        expect(muSgd.income).toMatchObject({
          usd: muIncome,
          rateDate: "2026-07-24",
          source: "ecb-via-eurofxref",
          carriedForward: false
        })
        expect(big(muSgd.income.rate).minus(sgdPerUsd("2026-07-24")).abs().lt("1e-15")).toBe(true)
        expect(big(muSgd.income.sgd).minus(big(muIncome).times(sgdPerUsd("2026-07-24"))).abs().lt("1e-12")).toBe(true)
        // A lot bought on a Saturday (2026-08-01) carries Friday's rate forward, and says so.
        const tsla = (yield* call("GET", "/v1/basis?token=TSLA", { key })).body.lots[1]
        expect(tsla).toMatchObject({
          acquired: "2026-08-01",
          rateDate: "2026-07-31",
          source: "ecb-via-eurofxref",
          carriedForward: true
        })
        expect(big(tsla.rate).minus(sgdPerUsd("2026-07-31")).abs().lt("1e-15")).toBe(true)
        expect(big(tsla.basis).minus(big("150.875").times(sgdPerUsd("2026-07-31"))).abs().lt("1e-9")).toBe(true)
        const portfolio = yield* call("GET", "/v1/portfolio", { key })
        expect(portfolio.body.summary.fxCurrency).toBe("SGD")
        expect(portfolio.body.totals.costBasis.amount).toBeNull()
        expect(portfolio.body.totals.costBasis.unknownCount).toBeGreaterThan(0)
        // The value is converted at the rate of the build's date, which each position and the totals state.
        expect(crwd.rate).toMatchObject({
          currency: "SGD",
          source: "ecb-via-eurofxref",
          rateDate: today,
          carriedForward: portfolio.body.asOf.slice(0, 10) !== today
        })
        expect(big(crwd.rate.rate).minus(big("1.43").div("1.1")).abs().lt("1e-15")).toBe(true)
        expect(big(crwd.valueAmount).minus(big(crwd.valueUsd).times(crwd.rate.rate)).abs().lt("1e-12")).toBe(true)
        expect(portfolio.body.totals.rate).toEqual(crwd.rate)
      }).pipe(Effect.provide(Service), Effect.scoped),
    180_000
  )
})
