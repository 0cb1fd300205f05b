import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { BigNumber } from "bignumber.js"
import { parse } from "csv-parse/sync"
import { Duration, Effect, Layer, Option, Schedule } from "effect"
import { createHash } from "node:crypto"
import { encodeFunctionData, type Hex } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import { serviceOnSeededChain, TestChain } from "../support/ChainHarness.js"
import { call, newKey, type Reply } from "../support/RestHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const ALICE_2 = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
const CAROL = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"
/** A label a spreadsheet would run as a formula, with a comma, quotes and a newline. */
const ALICE_LABEL = "=1+2, \"main\"\nwallet"

/** REST, ingestion and the ledger builder on one PostgreSQL database, against the seeded chain. */
const Service = serviceOnSeededChain(Layer.empty)

const retrying = Schedule.spaced(Duration.millis(150)).pipe(Schedule.upTo(Duration.seconds(45)))

const until = <R>(what: string, read: Effect.Effect<Reply, never, R>, ready: (reply: Reply) => boolean) =>
  read.pipe(
    Effect.filterOrFail(ready, (reply) => `${what}: ${reply.status} ${reply.text.slice(0, 300)}`),
    Effect.retry(retrying),
    Effect.orDie
  )

/** Every wallet backfilled, every price round recorded, and the ledger build caught up with its inputs. */
const settled = (key: string, account: string, addresses: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (const address of addresses) {
      yield* until(`${address}'s backfill`, call("GET", `/v1/wallets/${address}`, { key }), (r) =>
        r.status === 200 && r.body.backfill.status === "complete")
    }
    const chain = yield* TestChain
    const sql = yield* SqlClient.SqlClient
    yield* sql<{ n: string }>`SELECT count(*) AS n FROM price_rounds`.pipe(
      Effect.orDie,
      Effect.filterOrFail(([row]) =>
        Number(row!.n) >= chain.manifest.prices.length
      ),
      Effect.retry(retrying),
      Effect.orDie
    )
    const { id } = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName(account)))
    yield* (yield* LedgerStore).state(id).pipe(
      Effect.orDie,
      Effect.filterOrFail((state) => Option.isSome(state) && state.value.builtVersion >= state.value.requestedVersion),
      Effect.retry(retrying),
      Effect.orDie
    )
  })

type Row = Record<string, string>

const exportOf = (key: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/v1/exports", { key, body })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers["content-type"]).toBe("text/csv; charset=utf-8")
    const rows: Array<Row> = parse(reply.text, { columns: true })
    return {
      reply,
      rows,
      header: reply.text.slice(0, reply.text.indexOf("\r\n")),
      id: reply.headers["scaledger-export-id"]!
    }
  })

const cents = (value: string) => new BigNumber(value).toFixed(2, BigNumber.ROUND_HALF_UP)

describe("exports of a known history on the local chain", () => {
  it.live(
    "five formats: the AAPL step, the CRWD split, a self-transfer, a sale with a gain, unknown basis; kept after deletion",
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
        // Carol sells her 4.5 TSLA to the exchange on 2026-09-03: FIFO takes the 4 minted before any price round
        // (unknown basis) and the 0.5 bought at 301.75, priced at the 315.02 round: a gain of 0.5 × 13.27.
        const tsla = chain.manifest.tokens.find((t) => t.symbol === "TSLA")!.address
        const exchange = chain.manifest.holders.find((h) => h.label === "exchange")!.address
        const sale = yield* Effect.promise(async () => {
          await chain.node.setNextBlockTimestamp(Date.parse("2026-09-03T15:00:00Z") / 1000)
          const data = encodeFunctionData({
            abi: loadArtifact("Stock").abi as any,
            functionName: "transfer",
            args: [exchange, 45n * 10n ** 17n]
          })
          const hash = await chain.node.request<Hex>("eth_sendTransaction", [{ from: CAROL, to: tsla, data }])
          for (let i = 0; i < 12; i++) await chain.node.request("evm_mine", [])
          return hash
        })

        const { key } = yield* newKey("exports-chain")
        for (const [address, label] of [[ALICE, ALICE_LABEL], [ALICE_2, "alice-2"], [CAROL, "carol"]] as const) {
          expect((yield* call("POST", "/v1/wallets", { key, body: { address, label } })).status).toBe(201)
        }
        yield* settled(key, "exports-chain", [ALICE, ALICE_2, CAROL])
        yield* until(
          "Carol's TSLA sale in the ledger",
          call("GET", "/v1/basis?token=TSLA", { key }),
          (r) => r.status === 200 && r.body.disposals.some((d: any) => d.date === "2026-09-03")
        )
        const events: Array<any> = []
        let cursor: string | null = null
        do {
          const page: Reply = yield* call("GET", `/v1/events?limit=500${cursor === null ? "" : `&cursor=${cursor}`}`, {
            key
          })
          for (const event of page.body.events) events.push(event)
          cursor = page.body.nextCursor
        } while (cursor !== null)
        const byId = new Map(events.map((e) => [e.id, e]))

        // positions
        const positions = yield* exportOf(key, { format: "positions" })
        expect(positions.header).toBe(
          "wallet,wallet_label,token,balance,multiplier,multiplier_at_acquisition,shares_equivalent,cost_basis," +
            "unreported_income,encumbered,currency,rate,rate_source,rate_date,carried_forward"
        )
        const aliceCrwd = positions.rows.find((r) => r.wallet === ALICE && r.token === "CRWD")!
        expect(aliceCrwd).toMatchObject({
          wallet_label: `'${ALICE_LABEL}`,
          balance: "9",
          multiplier: "4",
          multiplier_at_acquisition: "1",
          shares_equivalent: "36",
          // Minted before any price round: unknown, an empty cell, never 0.
          cost_basis: "",
          encumbered: "0",
          currency: "USD",
          rate: "1",
          rate_source: "identity"
        })
        expect(positions.rows.find((r) => r.wallet === CAROL && r.token === "CRWD")).toMatchObject({
          wallet_label: "carol",
          balance: "1.25",
          shares_equivalent: "5",
          cost_basis: "601.875"
        })

        // activity
        const activity = yield* exportOf(key, { format: "activity" })
        expect(activity.rows).toHaveLength(events.length)
        expect(activity.rows.map((r) => r.event_id)).toEqual(events.map((e) => e.id))
        const split = activity.rows.find((r) => r.type === "split")!
        expect(split).toMatchObject({
          wallet: ALICE,
          token: "CRWD",
          amount: "9",
          shares: "27",
          multiplier_from: "1",
          multiplier_to: "4",
          taxable: "false",
          income: "",
          tx_hash: ""
        })
        const carolAapl = activity.rows.find((r) =>
          r.type === "income.multiplier_increase" && r.token === "AAPL" && r.wallet === CAROL
        )!
        expect(carolAapl).toMatchObject({
          date: "2026-08-14",
          amount: "10",
          multiplier_from: "1",
          multiplier_to: "1.000566080061092436",
          shares: new BigNumber("10").times("0.000566080061092436").toFixed(),
          income: byId.get(carolAapl.event_id).income.usd,
          currency: "USD",
          rate: "1",
          rate_source: "identity",
          carried_forward: "false"
        })
        expect(carolAapl.income).not.toBe("")
        const self = activity.rows.find((r) => r.type === "transfer.self" && r.token === "AAPL" && r.wallet === ALICE)!
        expect(self).toMatchObject({
          counterparty: ALICE_2,
          amount: "5",
          relationship: "self",
          classified_by: "rule",
          needs_review: "false",
          taxable: "false",
          wallet_label: `'${ALICE_LABEL}`
        })
        const saleRow = activity.rows.find((r) => r.tx_hash === sale)!
        expect(saleRow).toMatchObject({ type: "transfer.out", wallet: CAROL, amount: "4.5", needs_review: "true" })

        // gains: the sale's two lot slices, the unknown one empty, the known one with its gain.
        const gains = yield* exportOf(key, { format: "gains", from: "2026-09-03", to: "2026-09-03" })
        expect(gains.header).toBe(
          "token,wallet,wallet_label,acquired,disposed,shares,proceeds,cost_basis,gain,holding_period,taxable," +
            "disposal_event_id,currency,rate,rate_source,rate_date,carried_forward"
        )
        const tslaMultiplier = new BigNumber(saleRow.shares).div("4.5")
        expect(gains.rows).toEqual([
          expect.objectContaining({
            token: "TSLA",
            wallet: CAROL,
            wallet_label: "carol",
            acquired: "2026-07-01",
            disposed: "2026-09-03",
            shares: tslaMultiplier.times(4).toFixed(),
            proceeds: "1260.08",
            cost_basis: "",
            gain: "",
            holding_period: "short",
            taxable: "true",
            disposal_event_id: saleRow.event_id,
            currency: "USD",
            rate: "1",
            rate_date: "2026-09-03"
          }),
          expect.objectContaining({
            acquired: "2026-08-01",
            shares: tslaMultiplier.times("0.5").toFixed(),
            proceeds: "157.51",
            cost_basis: "150.875",
            gain: "6.635",
            holding_period: "short"
          })
        ])

        // multipliers
        const multipliers = yield* exportOf(key, { format: "multipliers" })
        expect(multipliers.header).toBe("token,block,date,effective_at,announced_at,from,to,kind,source")
        expect(multipliers.rows.filter((r) => r.token === "CRWD")).toEqual([
          expect.objectContaining({ from: "1", to: "4", kind: "split", date: "2026-07-02" })
        ])
        expect(multipliers.rows.find((r) => r.token === "AAPL")).toMatchObject({
          from: "1",
          to: "1.000566080061092436",
          kind: "dividend",
          date: "2026-08-14"
        })

        // taxtool (Koinly universal)
        const koinly = yield* exportOf(key, { format: "taxtool" })
        expect(koinly.header).toBe(
          "Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Label,Fee Amount,Fee Currency," +
            "Net Worth Amount,Net Worth Currency,Description,TxHash"
        )
        const income = koinly.rows.filter((r) => r.Label === "income" && r["Received Currency"] === "AAPL")
        const carolIncome = income.find((r) => r["Received Amount"] === carolAapl.shares)!
        const ledgerIncome = byId.get(carolAapl.event_id).income.usd
        expect(cents(carolIncome["Net Worth Amount"]!)).toBe(cents(ledgerIncome))
        expect(carolIncome["Net Worth Amount"]).toBe(ledgerIncome)
        expect(carolIncome).toMatchObject({ "Net Worth Currency": "USD", "Sent Amount": "", TxHash: "" })
        expect(carolIncome.Date).toMatch(/^2026-08-14 \d\d:\d\d:\d\d$/)
        const koinlySplit = koinly.rows.find((r) => r.Description.startsWith("split"))!
        expect(koinlySplit).toMatchObject({
          "Received Amount": "27",
          "Received Currency": "CRWD",
          "Net Worth Amount": "0",
          Description: "split 4:1",
          Label: ""
        })
        // Self-transfers are left out.
        const selfHashes = events.filter((e) => e.type === "transfer.self").map((e) => e.walletTransaction.txHash)
        expect(selfHashes.length).toBeGreaterThan(0)
        expect(koinly.rows.some((r) => selfHashes.includes(r.TxHash))).toBe(false)
        expect(koinly.rows.find((r) => r.TxHash === sale)).toMatchObject({
          Date: "2026-09-03 15:00:00",
          "Sent Amount": saleRow.shares,
          "Sent Currency": "TSLA",
          "Received Amount": "",
          "Net Worth Amount": new BigNumber(saleRow.shares).times("315.02").toFixed(),
          "Net Worth Currency": "USD",
          Description: "needs review"
        })

        // Byte-identical re-download, and the export outlives the wallet it came from.
        const sha256 = createHash("sha256").update(koinly.reply.text, "utf8").digest("hex")
        expect((yield* call("DELETE", `/v1/wallets/${CAROL}`, { key })).status).toBe(204)
        const again = yield* call("GET", `/v1/exports/${koinly.id}`, { key })
        expect(again.text).toBe(koinly.reply.text)
        expect(again.headers["etag"]).toBe(`"${sha256}"`)
        const listed = yield* call("GET", "/v1/exports", { key })
        expect(listed.body.exports.map((e: any) => e.format)).toEqual([
          "positions",
          "activity",
          "gains",
          "multipliers",
          "taxtool"
        ])
        expect(listed.body.exports.find((e: any) => e.id === koinly.id)).toMatchObject({
          sha256,
          rows: koinly.rows.length
        })
        expect(listed.body.exports[0].asOfBlock).toBeGreaterThan(0)
        const stored = yield* call("GET", `/v1/exports/${gains.id}`, { key })
        expect(stored.text).toBe(gains.reply.text)

        // In SGD every converted figure carries the rate of its own date and where it came from.
        yield* Effect.flatMap(FxRates, (fx) =>
          fx.upsert("ecb-via-eurofxref", [
            { date: "2026-08-13", perEur: { USD: "1.1450", SGD: "1.5250" } },
            { date: "2026-08-14", perEur: { USD: "1.1400", SGD: "1.5300" } }
          ]))
        expect((yield* call("PUT", "/v1/settings", { key, body: { reportingCurrency: "SGD" } })).status).toBe(200)
        yield* until("the SGD replay", call("GET", "/v1/positions", { key }), (r) =>
          r.status === 200 && r.body.currency === "SGD")
        const inSgd = yield* exportOf(key, { format: "activity", wallet: ALICE.toLowerCase(), to: "2026-08-31" })
        const aliceAapl = inSgd.rows.find((r) =>
          r.type === "income.multiplier_increase" && r.token === "AAPL"
        )!
        const sgdPerUsd = new BigNumber("1.5300").div("1.1400")
        expect(aliceAapl).toMatchObject({
          wallet: ALICE,
          currency: "SGD",
          rate_source: "ecb-via-eurofxref",
          rate_date: "2026-08-14",
          carried_forward: "false"
        })
        expect(new BigNumber(aliceAapl.rate!).minus(sgdPerUsd).abs().lt("1e-15")).toBe(true)
        const aliceUsd = byId.get(aliceAapl.event_id).income.usd
        expect(new BigNumber(aliceAapl.income!).minus(new BigNumber(aliceUsd).times(sgdPerUsd)).abs().lt("1e-12")).toBe(
          true
        )
        expect(inSgd.rows.every((r) => r.date <= "2026-08-31")).toBe(true)
        expect(inSgd.rows.some((r) => r.wallet === CAROL)).toBe(false)
      }).pipe(Effect.provide(Service), Effect.scoped),
    240_000
  )
})
