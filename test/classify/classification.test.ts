import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { CounterpartyReads } from "@scaledger/db/reads/CounterpartyReads"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Classifier, type MovementFeatures } from "@scaledger/domain/classification/ClassifierPort"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { PageCursorSeal, SealedCursorsLive } from "@scaledger/server/http/PageCursorSeal"
import { ClassificationWorkerLive } from "@scaledger/workers/classify/ClassificationWorker"
import { ContractListLive } from "@scaledger/workers/classify/ContractListLive"
import { BackfillRunnerLive } from "@scaledger/workers/ingest/BackfillRunner"
import { PriceRecorderLive } from "@scaledger/workers/ingest/PriceRecorder"
import { RecorderLive } from "@scaledger/workers/ingest/Recorder"
import { LedgerBuilderLive, LedgerPricesLive } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { encodeFunctionData, type Hex } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import type { TestNode } from "../chain/node.js"
import { ingestServices, issuerCall, type SeededChain, seededChain } from "../support/ChainHarness.js"
import { call, newKey, type Reply, restServer } from "../support/RestHarness.js"

interface Built {
  readonly abi: any
  readonly bytecode: Hex
}
const artifact = (name: string): Built =>
  JSON.parse(Fs.readFileSync(new URL(`./artifacts/${name}.json`, import.meta.url), "utf8")) as Built

const stockAbi = loadArtifact("Stock").abi as any
const MAX = 2n ** 256n - 1n
const units = (n: number) => BigInt(n) * 10n ** 18n

const send = async (node: TestNode, from: string, to: string, abi: any, functionName: string, args: Array<unknown>) => {
  const data = encodeFunctionData({ abi, functionName, args })
  const hash = await node.request<Hex>("eth_sendTransaction", [{ from, to, data }])
  const receipt = await node.request<{ status: Hex }>("eth_getTransactionReceipt", [hash])
  if (receipt.status !== "0x1") throw new Error(`${functionName} reverted`)
  return hash
}

const deploy = async (node: TestNode, from: string, name: string) => {
  const hash = await node.request<Hex>("eth_sendTransaction", [{ from, data: artifact(name).bytecode }])
  const receipt = await node.request<{ contractAddress: string }>("eth_getTransactionReceipt", [hash])
  return receipt.contractAddress
}

/** What the test did on chain: the contracts and the transaction of each step. */
interface Story {
  readonly wallet: string
  readonly plain: string
  readonly router: string
  readonly vault: string
  readonly gateway: string
  readonly unlisted: string
  readonly tx: Record<string, string>
  readonly contractList: string
}

class TestChain extends Context.Tag("TestChain")<TestChain, SeededChain & { readonly story: Story }>() {}

/** Every movement the model was asked about, and what it was taught. */
const asked: Array<MovementFeatures> = []
const taught: Array<{ readonly features: MovementFeatures; readonly type: string; readonly relationship: string }> = []

const TestClassifier = Layer.succeed(Classifier, {
  name: "test-model",
  classify: (features) => {
    asked.push(features)
    return Effect.succeed(Option.some({
      type: features.direction === "out" ? "transfer.out" as const : "transfer.in" as const,
      relationship: "contract" as const,
      confidence: 0.62,
      model: "test-model/1",
      rationale: "A staking-like call to a contract that holds the tokens."
    }))
  },
  learn: (examples) =>
    Effect.sync(() => {
      for (const example of examples) taught.push(example)
    })
})

/** The story on the seeded chain: a wallet that swaps, posts collateral, bridges, and stakes in an unlisted contract. */
const tellStory = async (chain: SeededChain): Promise<Story> => {
  const { node } = chain
  const token = (symbol: string) => chain.tokenList.tokens.find((t) => t.symbol === symbol)!.address
  const AAPL = token("AAPL")
  const TSLA = token("TSLA")
  const deployer = node.accounts[6]!.address
  const wallet = node.accounts[7]!.address
  const plain = node.accounts[8]!.address
  const router = await deploy(node, deployer, "MiniRouter")
  const vault = await deploy(node, deployer, "LendingVault")
  const gateway = await deploy(node, deployer, "BridgeGateway")
  const unlisted = await deploy(node, deployer, "Unlisted")
  const tx: Record<string, string> = {}
  tx.mint = (await issuerCall(node, AAPL, "mint", [wallet, units(100)])).hash
  await issuerCall(node, TSLA, "mint", [router, units(50)])
  await issuerCall(node, AAPL, "mint", [plain, units(10)])
  await issuerCall(node, AAPL, "mint", [gateway, units(20)])
  tx.fromPlain = await send(node, plain, AAPL, stockAbi, "transfer", [wallet, units(5)])
  for (const spender of [router, vault, gateway, unlisted]) {
    await send(node, wallet, AAPL, stockAbi, "approve", [spender, MAX])
  }
  tx.swap = await send(node, wallet, router, artifact("MiniRouter").abi, "swapExactTokensForTokens", [
    AAPL,
    units(10),
    TSLA,
    units(3)
  ])
  tx.supply = await send(node, wallet, vault, artifact("LendingVault").abi, "supply", [AAPL, units(20)])
  tx.withdraw = await send(node, wallet, vault, artifact("LendingVault").abi, "withdraw", [AAPL, units(5)])
  tx.bridgeOut = await send(node, wallet, gateway, artifact("BridgeGateway").abi, "outboundTransfer", [AAPL, units(10)])
  tx.bridgeIn = await send(node, deployer, gateway, artifact("BridgeGateway").abi, "finalizeInboundTransfer", [
    AAPL,
    wallet,
    units(4)
  ])
  tx.stake1 = await send(node, wallet, unlisted, artifact("Unlisted").abi, "stake", [AAPL, units(3)])
  tx.stake2 = await send(node, wallet, unlisted, artifact("Unlisted").abi, "stake", [AAPL, units(4)])
  tx.burn = (await issuerCall(node, AAPL, "burn", [wallet, units(1)])).hash
  // A dividend step while the wallet holds AAPL: an income event, which has no counterparty to review.
  const [current] = await node.request<Hex>("eth_call", [{
    to: AAPL,
    data: encodeFunctionData({ abi: stockAbi, functionName: "uiMultiplier", args: [] })
  }, "latest"]).then((hex) => [BigInt(hex)])
  await issuerCall(node, AAPL, "updateMultiplier", [current! * 1001n / 1000n])
  for (let i = 0; i < 12; i++) await node.request("evm_mine", [])
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-contract-list-"))
  const contractList = Path.join(dir, "contracts.json")
  Fs.writeFileSync(
    contractList,
    JSON.stringify([
      { chainId: node.chainId, address: router, kind: "dex", name: "Test router" },
      { chainId: node.chainId, address: vault, kind: "lending", name: "Test vault" },
      { chainId: node.chainId, address: gateway, kind: "bridge", name: "Test gateway" }
    ])
  )
  return { wallet, plain, router, vault, gateway, unlisted, tx, contractList }
}

const Service = Layer.unwrapScoped(Effect.gen(function*() {
  const chain = yield* seededChain
  const story = yield* Effect.promise(() => tellStory(chain))
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => Fs.rmSync(Path.dirname(story.contractList), { recursive: true, force: true }))
  )
  const Db = TestDatabase.postgres
  const config = Layer.setConfigProvider(ConfigProvider.fromJson({
    CHAIN_ID: chain.node.chainId,
    LEDGER_POLL_MS: 100,
    LEDGER_MIN_INTERVAL_MS: 100,
    CLASSIFY_POLL_MS: 100,
    CONTRACT_LIST: story.contractList
  }))
  const services = ingestServices({
    rpcUrl: chain.node.httpUrl,
    chainId: chain.node.chainId,
    tokenListPath: chain.tokenListPath,
    ingest: { pricePollMs: 200, priceHistoryFrom: Date.UTC(2026, 5, 1) / 1000 }
  })
  const classification = ClassificationWorkerLive.pipe(Layer.provide(Layer.mergeAll(ContractListLive, TestClassifier)))
  const workers = Layer.mergeAll(RecorderLive, BackfillRunnerLive, PriceRecorderLive, LedgerBuilderLive, classification)
    .pipe(
      Layer.provide(LedgerPricesLive),
      Layer.provideMerge(services),
      Layer.provide(Db)
    )
  return Layer.mergeAll(
    restServer(Db),
    workers,
    Layer.mergeAll(
      LedgerStore.Default,
      // Sealing cursors with the REST harness's secret, as the MCP server sharing it does.
      CounterpartyReads.Default.pipe(
        Layer.provide(SealedCursorsLive),
        Layer.provide(PageCursorSeal.Default),
        Layer.provide(Layer.succeed(KeyHashSecret, Redacted.make("test-key-hash-secret")))
      )
    ).pipe(Layer.provideMerge(Db)),
    Layer.succeed(TestChain, { ...chain, story })
  ).pipe(Layer.provide(config))
}))

const retrying = Schedule.spaced(Duration.millis(150)).pipe(Schedule.upTo(Duration.seconds(60)))

const until = <R>(what: string, read: Effect.Effect<Reply, never, R>, ready: (reply: Reply) => boolean) =>
  read.pipe(
    Effect.filterOrFail(ready, (reply) => `${what}: ${reply.status} ${reply.text.slice(0, 400)}`),
    Effect.retry(retrying),
    Effect.orDie
  )

/** Every transfer of the wallet classified, and the account's ledger built from the last classification. */
const settled = (accountId: string, wallet: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = wallet.toLowerCase()
    yield* sql<{ transfers: string; done: string; pending: string }>`
      SELECT
        (SELECT count(*) FROM token_transfers WHERE from_key = ${key} OR to_key = ${key}) AS transfers,
        (SELECT count(*) FROM transfer_classifications WHERE account_id = ${accountId} AND status = 'done') AS done,
        (SELECT count(*) FROM transfer_classifications WHERE status = 'pending') AS pending`.pipe(
      Effect.filterOrFail(([row]) =>
        Number(row!.transfers) > 0 && Number(row!.pending) === 0 && Number(row!.done) === Number(row!.transfers)
      ),
      Effect.retry(retrying),
      Effect.orDie
    )
    const store = yield* LedgerStore
    yield* store.state(accountId).pipe(
      Effect.orDie,
      Effect.filterOrFail((state) =>
        Option.isSome(state) && state.value.builtVersion >= state.value.requestedVersion &&
        state.value.status === "ready"
      ),
      Effect.retry(retrying),
      Effect.orDie
    )
  })

const eventsOf = (key: string) =>
  Effect.map(
    until("events", call("GET", "/v1/events?limit=500", { key }), (r) => r.status === 200),
    (reply) => reply.body.events as Array<any>
  )

describe("classification and review on the local chain", () => {
  it.live(
    "rules, the model for the unlisted contract, collateral encumbered, one PATCH settles both stakes",
    () =>
      Effect.gen(function*() {
        const { story } = yield* TestChain
        const { key } = yield* newKey("classify-w")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: story.wallet, label: "w" } })).status)
          .toBe(201)
        yield* until(
          "backfill",
          call("GET", `/v1/wallets/${story.wallet}`, { key }),
          (r) => r.status === 200 && r.body.backfill.status === "complete"
        )
        const { id: accountId } = Option.getOrThrow(yield* Effect.orDie((yield* AccountsRepo).findByName("classify-w")))
        yield* settled(accountId, story.wallet)

        const events = yield* eventsOf(key)
        const byTx = (name: string) =>
          events.filter((e) => e.walletTransaction?.txHash?.toLowerCase() === story.tx[name]!.toLowerCase())
        const one = (name: string) => {
          const found = byTx(name)
          expect(found, name).toHaveLength(1)
          return found[0]
        }
        expect(one("mint")).toMatchObject({
          type: "mint",
          classifiedBy: "rule",
          needsReview: false,
          classification: { by: "rule", rule: "zero_address" }
        })
        expect(one("burn")).toMatchObject({ type: "burn", classification: { rule: "zero_address" } })
        // An arrival from a plain address: an acquisition at market value, needing review.
        expect(one("fromPlain")).toMatchObject({
          type: "transfer.in",
          relationship: null,
          needsReview: true,
          basisSource: "market_value_at_arrival",
          classification: { by: "rule", rule: "plain_address" }
        })
        const swap = byTx("swap")
        expect(swap.map((e) => [e.type, e.token, e.relationship, e.classification.rule]).sort()).toEqual([
          ["swap", "AAPL", "contract", "contract_list"],
          ["swap", "TSLA", "contract", "contract_list"]
        ])
        expect(one("supply")).toMatchObject({ type: "collateral_post", relationship: "contract", needsReview: false })
        expect(one("withdraw")).toMatchObject({ type: "collateral_withdraw", relationship: "contract" })
        expect(one("bridgeOut")).toMatchObject({ type: "bridge.out", relationship: "self", needsReview: false })
        expect(one("bridgeIn")).toMatchObject({ type: "bridge.in", relationship: "self" })
        for (const name of ["stake1", "stake2"]) {
          expect(one(name)).toMatchObject({
            type: "transfer.out",
            classifiedBy: "ai_labeled",
            needsReview: true,
            counterparty: expect.stringMatching(new RegExp(story.unlisted.slice(2), "i")),
            classification: {
              by: "ai_labeled",
              model: "test-model/1",
              confidence: 0.62,
              rationale: "A staking-like call to a contract that holds the tokens."
            }
          })
        }
        // Only the unlisted contract's movements reached the model, with the transaction's facts.
        expect(asked.map((f) => f.txHash.toLowerCase()).sort()).toEqual(
          [story.tx.stake1!, story.tx.stake2!].map((h) => h.toLowerCase()).sort()
        )
        expect(asked[0]).toMatchObject({
          direction: "out",
          token: "AAPL",
          counterpartyIsContract: true,
          txFrom: story.wallet.toLowerCase(),
          txTo: story.unlisted.toLowerCase(),
          methodSelector: encodeFunctionData({
            abi: artifact("Unlisted").abi,
            functionName: "stake",
            args: [story.wallet, 1n]
          })
            .slice(0, 10)
        })

        // The review list shows exactly what awaits confirmation.
        const review = yield* call("GET", "/v1/events?needsReview=true&limit=500", { key })
        expect(review.body.events.map((e: any) => e.walletTransaction.txHash.toLowerCase()).sort()).toEqual(
          [story.tx.fromPlain!, story.tx.stake1!, story.tx.stake2!].map((h) => h.toLowerCase()).sort()
        )

        // Collateral stays the holder's: encumbered on the position.
        const positions = yield* call("GET", "/v1/positions", { key })
        const aapl = positions.body.positions.find((p: any) => p.token === "AAPL" && p.wallet !== null)
        expect(aapl).toMatchObject({ encumbered: "15" })

        // The stakes' disposals have no gain while the model's label is unconfirmed.
        const basis = yield* call("GET", "/v1/basis?token=AAPL", { key })
        const stakeIds = [story.tx.stake1!, story.tx.stake2!].map((h) => h.toLowerCase())
        const stakeDisposals = basis.body.disposals.filter((d: any) =>
          stakeIds.some((h) => String(d.eventId ?? d.id).toLowerCase().startsWith(h))
        )
        expect(stakeDisposals.length).toBeGreaterThanOrEqual(2)
        for (const d of stakeDisposals) {
          expect(d.gain).toBeNull()
          expect(d.unknownBecause.map((r: any) => r.reason)).toContain("unconfirmed_label")
        }

        const unlabeled = yield* call("GET", "/v1/counterparties/unlabeled", { key })
        expect(unlabeled.status).toBe(200)
        expect(unlabeled.body.counterparties.map((c: any) => [c.address.toLowerCase(), c.movements])).toEqual([
          [story.unlisted.toLowerCase(), 2],
          [story.plain.toLowerCase(), 1]
        ])
        expect(unlabeled.body.counterparties[0].suggestion).toMatchObject({ model: "test-model/1", confidence: 0.62 })
        // The MCP tool's service answers the same.
        const twin = yield* Effect.orDie((yield* CounterpartyReads).unlabeled(accountId))
        expect(twin).toEqual(unlabeled.body)
        expect(unlabeled.body.nextCursor).toBeNull()
        // Pages of the list, most movements first.
        const firstPage = yield* call("GET", "/v1/counterparties/unlabeled?limit=1", { key })
        expect(firstPage.body.counterparties.map((c: any) => c.address.toLowerCase())).toEqual([
          story.unlisted.toLowerCase()
        ])
        const secondPage = yield* call(
          "GET",
          `/v1/counterparties/unlabeled?limit=1&cursor=${firstPage.body.nextCursor}`,
          { key }
        )
        expect(secondPage.body).toMatchObject({ nextCursor: null })
        expect(secondPage.body.counterparties.map((c: any) => c.address.toLowerCase())).toEqual([
          story.plain.toLowerCase()
        ])
        // The MCP tool's service takes the REST cursor and answers the same page.
        const afterUnlisted: string = firstPage.body.nextCursor
        expect(
          yield* Effect.orDie((yield* CounterpartyReads).unlabeled(accountId, { limit: 1, cursor: afterUnlisted }))
        ).toEqual(secondPage.body)
        // The cursor is sealed to the account and the list: it names neither the address nor a position.
        expect(Buffer.from(afterUnlisted, "base64url").toString("latin1")).not.toMatch(/counterparties|0x/i)
        const { key: stranger } = yield* newKey("classify-stranger")
        const eventsCursor = (yield* call("GET", "/v1/events?limit=1", { key })).body.nextCursor
        for (
          const [query, as] of [
            ["limit=0", key],
            ["limit=501", key],
            ["cursor=zzz", key],
            [`cursor=${eventsCursor}`, key],
            // The offset cursors this list issued before.
            [`cursor=${Buffer.from("counterparties:1").toString("base64url")}`, key],
            [`cursor=${afterUnlisted.slice(0, -2)}${afterUnlisted.endsWith("AA") ? "AB" : "AA"}`, key],
            [`cursor=${afterUnlisted}`, stranger]
          ] as const
        ) {
          const refused = yield* call("GET", `/v1/counterparties/unlabeled?${query}`, { key: as })
          expect([refused.status, refused.body.error.code], query).toEqual([400, "invalid_request"])
        }
        // A mint's counterparty is the zero address: nothing to label.
        const mint = yield* call("PATCH", `/v1/events/${one("mint").id}`, { key, body: { relationship: "self" } })
        expect([mint.status, mint.body.error.code]).toEqual([400, "not_reviewable"])

        // Bad inputs.
        const stake1 = one("stake1")
        const missing = yield* call("PATCH", "/v1/events/0xdead:1", { key, body: { relationship: "self" } })
        expect([missing.status, missing.body.error.code]).toEqual([404, "not_found"])
        // Control characters are refused at the edge (no event id holds one; PostgreSQL takes no NUL).
        const control = yield* call("PATCH", "/v1/events/0xdead%00%1f:1", { key, body: { relationship: "self" } })
        expect([control.status, control.body.error.code]).toEqual([400, "invalid_request"])
        const badRelationship = yield* call("PATCH", `/v1/events/${stake1.id}`, {
          key,
          body: { relationship: "friend" }
        })
        expect([badRelationship.status, badRelationship.body.error.code]).toEqual([400, "invalid_request"])
        const extra = yield* call("PATCH", `/v1/events/${stake1.id}`, {
          key,
          body: { relationship: "self", colour: "red" }
        })
        expect([extra.status, extra.body.error.code]).toEqual([400, "invalid_request"])
        for (const body of [{ label: "a\u0001b" }, { note: "x\u001by" }, { label: "x\u009fy" }]) {
          const control = yield* call("PATCH", `/v1/events/${stake1.id}`, {
            key,
            body: { relationship: "self", ...body }
          })
          expect([control.status, control.body.error.code]).toEqual([400, "invalid_request"])
        }
        const income = events.find((e) => e.type === "income.multiplier_increase")
        expect(income).toBeDefined()
        const notReviewable = yield* call("PATCH", `/v1/events/${income.id}`, {
          key,
          body: { relationship: "self" }
        })
        expect([notReviewable.status, notReviewable.body.error.code]).toEqual([400, "not_reviewable"])
        // Another account cannot see (or settle) this one's events.
        const { key: other } = yield* newKey("classify-other")
        const foreign = yield* call("PATCH", `/v1/events/${stake1.id}`, { key: other, body: { relationship: "self" } })
        expect(foreign.status).toBe(404)

        // One PATCH settles both stakes: the staking contract holds the wallet's own tokens.
        const resolved = yield* call("PATCH", `/v1/events/${stake1.id}`, {
          key,
          body: { relationship: "self", label: "my staking", note: "still mine" }
        })
        expect(resolved.status).toBe(200)
        expect(resolved.body).toEqual({
          id: stake1.id,
          counterparty: stake1.counterparty,
          relationship: "self",
          taxable: false,
          needsReview: false,
          alsoSettled: 1,
          stillNeedingReview: 1
        })
        // A replay follows: reads answer 409 until it settles, then the stakes are movements, not taxable.
        yield* settled(accountId, story.wallet)
        const after = yield* eventsOf(key)
        const stakes = after.filter((e) => stakeIds.includes(e.walletTransaction?.txHash?.toLowerCase()))
        expect(stakes.map((e) => [e.type, e.relationship, e.taxable, e.needsReview, e.classifiedBy])).toEqual([
          ["transfer.self", "self", false, false, "user"],
          ["transfer.self", "self", false, false, "user"]
        ])
        const basisAfter = yield* call("GET", "/v1/basis?token=AAPL", { key })
        expect(
          basisAfter.body.disposals.filter((d: any) =>
            stakeIds.some((h) => String(d.eventId ?? d.id).toLowerCase().startsWith(h))
          )
        ).toEqual([])
        // The model is taught the confirmed labels: both stakes, as movements to an own address.
        yield* Effect.sync(() => taught.length).pipe(
          Effect.filterOrFail((n) => n >= 2),
          Effect.retry(retrying),
          Effect.orDie
        )
        expect(taught.map((t) => [t.features.txHash.toLowerCase(), t.type, t.relationship]).sort()).toEqual(
          stakeIds.map((h) => [h, "transfer.self", "self"]).sort()
        )
        expect(taught[0]!.features).toMatchObject({ counterpartyIsContract: true, direction: "out" })
        const left = yield* call("GET", "/v1/counterparties/unlabeled", { key })
        expect(left.body.counterparties.map((c: any) => c.address.toLowerCase())).toEqual([story.plain.toLowerCase()])
        // Labelling what page 1 showed does not shift page 2: the cursor names the last entry, not a count of rows.
        const nextAfterLabel = yield* call("GET", `/v1/counterparties/unlabeled?limit=1&cursor=${afterUnlisted}`, {
          key
        })
        expect(nextAfterLabel.status).toBe(200)
        expect(nextAfterLabel.body.counterparties.map((c: any) => c.address.toLowerCase())).toEqual([
          story.plain.toLowerCase()
        ])
        expect(nextAfterLabel.body.nextCursor).toBeNull()

        // The arrival from the plain address was an acquisition at market value; confirmed as an own (unwatched)
        // address, its lot arrives with unknown basis: nothing was recorded there to carry.
        const plainLot = (body: any) =>
          body.lots.find((lot: any) => lot.id.toLowerCase().includes(story.tx.fromPlain!.toLowerCase()))
        const atMarket = plainLot(basisAfter.body)
        expect(atMarket).toBeDefined()
        expect(atMarket.basisUsd).not.toBeNull()
        const fromPlain = after.find((e) =>
          e.walletTransaction?.txHash?.toLowerCase() === story.tx.fromPlain!.toLowerCase()
        )
        const own = yield* call("PATCH", `/v1/events/${fromPlain.id}`, {
          key,
          body: { relationship: "self", label: "cold wallet", note: "my hardware wallet, not watched" }
        })
        expect(own.body).toMatchObject({ alsoSettled: 0, stillNeedingReview: 0, taxable: false })
        yield* settled(accountId, story.wallet)
        // What the account wrote of the counterparty is on its events.
        const labelled = (yield* call("GET", "/v1/events?limit=500", { key })).body.events.find((e: any) =>
          e.id === fromPlain.id
        )
        expect(labelled).toMatchObject({
          counterpartyLabel: "cold wallet",
          counterpartyNote: "my hardware wallet, not watched"
        })
        const ownBasis = yield* until("basis", call("GET", "/v1/basis?token=AAPL", { key }), (r) => r.status === 200)
        const carried = plainLot(ownBasis.body)
        expect(carried).toMatchObject({ basisUsd: null, basis: null })
        expect(carried.unknownBecause.map((r: any) => r.reason)).toContain("self_transfer_unmatched")
        const reviewLeft = yield* call("GET", "/v1/events?needsReview=true", { key })
        expect(reviewLeft.body.events).toEqual([])

        // A label left out is kept, `null` clears it.
        const cleared = yield* call("PATCH", `/v1/events/${fromPlain.id}`, {
          key,
          body: { relationship: "self", label: null }
        })
        expect(cleared.status).toBe(200)
        yield* settled(accountId, story.wallet)
        const relabelled = (yield* call("GET", "/v1/events?limit=500", { key })).body.events.find((e: any) =>
          e.id === fromPlain.id
        )
        expect(relabelled).toMatchObject({
          counterpartyLabel: null,
          counterpartyNote: "my hardware wallet, not watched"
        })
        // Once the address is watched and marked not own, it is the wallet's flag that says so, not a label.
        const watched = yield* call("POST", "/v1/wallets", { key, body: { address: story.plain, self: false } })
        expect(watched.status).toBe(201)
        const notOwn = yield* call("PATCH", `/v1/events/${fromPlain.id}`, { key, body: { relationship: "self" } })
        expect([notOwn.status, notOwn.body.error.code]).toEqual([400, "not_reviewable"])
        expect(notOwn.body.error.details.notOwnWallet.toLowerCase()).toBe(story.plain.toLowerCase())
      }).pipe(Effect.provide(Service)),
    { timeout: 180_000 }
  )

  it.live(
    "an address labelled self in review, then watched and marked not own: the wallet's flag decides, not the label",
    () =>
      Effect.gen(function*() {
        const { story } = yield* TestChain
        const { key } = yield* newKey("classify-self-then-not-own")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: story.wallet, label: "w" } })).status)
          .toBe(201)
        const { id: accountId } = Option.getOrThrow(
          yield* Effect.orDie((yield* AccountsRepo).findByName("classify-self-then-not-own"))
        )
        yield* settled(accountId, story.wallet)
        const fromPlain = story.tx.fromPlain!.toLowerCase()
        /** The movement from the plain address once the account's build shows it with the given type. */
        const movementAs = (type: string) =>
          Effect.map(
            until(
              `the transfer from the plain address as ${type}`,
              call("GET", `/v1/events?type=${type}&limit=500`, { key }),
              (r) =>
                r.status === 200 &&
                r.body.events.some((e: any) => e.walletTransaction?.txHash?.toLowerCase() === fromPlain)
            ),
            (reply) => reply.body.events.find((e: any) => e.walletTransaction?.txHash?.toLowerCase() === fromPlain)
          )
        const inflow = yield* movementAs("transfer.in")
        const labelled = yield* call("PATCH", `/v1/events/${inflow.id}`, {
          key,
          body: { relationship: "self", label: "cold wallet" }
        })
        expect(labelled.status).toBe(200)
        expect(yield* movementAs("transfer.self")).toMatchObject({ relationship: "self", needsReview: false })

        // Watched and marked not own: no longer a movement between own addresses, but an arrival to review.
        const watched = yield* call("POST", "/v1/wallets", { key, body: { address: story.plain, self: false } })
        expect(watched.body).toMatchObject({ self: false })
        expect(yield* movementAs("transfer.in")).toMatchObject({
          relationship: null,
          needsReview: true,
          taxable: false,
          counterpartyLabel: null
        })

        // The same through PATCH of the wallet: labelled self while not watched, watched as own (a self-transfer
        // by rule), then marked not own.
        expect((yield* call("DELETE", `/v1/wallets/${story.plain}`, { key })).status).toBe(204)
        yield* movementAs("transfer.in")
        const again = yield* call("PATCH", `/v1/events/${inflow.id}`, { key, body: { relationship: "self" } })
        expect(again.status).toBe(200)
        yield* movementAs("transfer.self")
        expect((yield* call("POST", "/v1/wallets", { key, body: { address: story.plain } })).body)
          .toMatchObject({ self: true })
        const patched = yield* call("PATCH", `/v1/wallets/${story.plain}`, { key, body: { self: false } })
        expect(patched.body).toMatchObject({ self: false })
        expect(yield* movementAs("transfer.in")).toMatchObject({ relationship: null, needsReview: true })
        // What review may still say of it: anything but self.
        const exchange = yield* call("PATCH", `/v1/events/${inflow.id}`, { key, body: { relationship: "exchange" } })
        expect(exchange.body).toMatchObject({ relationship: "exchange", needsReview: false })
      }).pipe(Effect.provide(Service)),
    { timeout: 120_000 }
  )

  it.live(
    "an own address deleted: the transfer between it and the other own address is classified again, an inflow to review",
    () =>
      Effect.gen(function*() {
        const { story } = yield* TestChain
        const { key } = yield* newKey("classify-two-own")
        for (const [address, label] of [[story.wallet, "w"], [story.plain, "p"]] as const) {
          expect((yield* call("POST", "/v1/wallets", { key, body: { address, label } })).status).toBe(201)
        }
        const { id: accountId } = Option.getOrThrow(
          yield* Effect.orDie((yield* AccountsRepo).findByName("classify-two-own"))
        )
        const sql = yield* SqlClient.SqlClient
        const fromPlain = story.tx.fromPlain!.toLowerCase()
        /** The account's stored decision on the transfer from the plain address, once made and built on. */
        const decided = (rule: string) =>
          sql<{ rule: string | null; status: string }>`
            SELECT rule, status FROM transfer_classifications
            WHERE account_id = ${accountId} AND lower(tx_hash) = ${fromPlain}`.pipe(
            Effect.orDie,
            Effect.filterOrFail(([row]) => row?.status === "done" && row.rule === rule),
            Effect.retry(retrying),
            Effect.orDie
          )
        const eventOf = (type: string) =>
          until(
            `the transfer from the plain address as ${type}`,
            call("GET", `/v1/events?type=${type}&limit=500`, { key }),
            (r) =>
              r.status === 200 &&
              r.body.events.some((e: any) => e.walletTransaction?.txHash?.toLowerCase() === fromPlain)
          )
        // Both addresses own before anything was classified: a self-transfer by rule.
        yield* decided("both_own")
        yield* eventOf("transfer.self")

        expect((yield* call("DELETE", `/v1/wallets/${story.plain}`, { key })).status).toBe(204)
        // Not own any more: classified again by the rules as they stand, an arrival from a plain address to review.
        yield* decided("plain_address")
        const inflow = yield* eventOf("transfer.in")
        expect(
          inflow.body.events.find((e: any) => e.walletTransaction?.txHash?.toLowerCase() === fromPlain)
        ).toMatchObject({ needsReview: true, counterparty: story.plain })
        const positions = yield* until("positions", call("GET", "/v1/positions", { key }), (r) => r.status === 200)
        expect(positions.body.positions.some((p: any) => p.wallet?.toLowerCase() === story.plain.toLowerCase()))
          .toBe(false)
      }).pipe(Effect.provide(Service)),
    { timeout: 120_000 }
  )
})
