import { describe, expect, it } from "@effect/vitest"
import * as Classification from "@scaledger/domain/classification/index"
import { makeEmbeddedClassifier, shippedWeights } from "@scaledger/workers/classify/EmbeddedClassifier"
import { Effect, Option } from "effect"
import { classKey, evaluate, loadExamples, loadWeights } from "../../scripts/classifierData.js"
import { trainClassifier } from "../../scripts/classifierTraining.js"

const weights = loadWeights()
const model = Classification.loadModel(weights)
const { examples, sha256 } = loadExamples()
const heldOut = examples.filter((e) => e.split === "heldout")
const seen = new Set(examples.filter((e) => e.split === "train").map((e) => e.source))

const base: Classification.MovementFeatures = {
  account: "acct_test",
  chainId: 4663,
  txHash: "0x" + "ab".repeat(32),
  direction: "out",
  token: "AAPL",
  amount: "10",
  wallet: "0x1111111111111111111111111111111111111111",
  counterparty: "0x2222222222222222222222222222222222222222",
  counterpartyIsContract: true,
  txFrom: "0x1111111111111111111111111111111111111111",
  txTo: "0x3333333333333333333333333333333333333333",
  methodSelector: "0xdeadbeef",
  tokenFlows: [{ token: "AAPL", direction: "out", amount: "10" }],
  priorIn: 0,
  priorOut: 0,
  confirmedRelationship: null
}

describe("embedded classifier: the shipped model", () => {
  it("reaches the held-out accuracy recorded with its weights, and labels each kind it saw in training", () => {
    const all = evaluate(model, heldOut, 0.5)
    expect(all.accuracy).toBeCloseTo(weights.training.heldOutAccuracy, 6)
    // Protocols seen in training (other transactions of theirs): every kind is labelled well.
    const onSeen = evaluate(model, heldOut.filter((e) => seen.has(e.source)), 0.5)
    expect(onSeen.accuracy).toBeGreaterThan(0.88)
    expect(onSeen.perClass.map((c) => c.label).sort()).toEqual(weights.classes.map(classKey).sort())
    for (const c of onSeen.perClass) expect(c.accuracy, c.label).toBeGreaterThan(0.75)
    // Protocols it never saw: better than chance among seven kinds, by a margin.
    const onUnseen = evaluate(model, heldOut.filter((e) => !seen.has(e.source)), 0.5)
    expect(onUnseen.accuracy).toBeGreaterThan(0.4)
  })

  it("is calibrated on protocols it saw: confidence tracks accuracy", () => {
    const onSeen = evaluate(model, heldOut.filter((e) => seen.has(e.source)), 0.5)
    expect(onSeen.ece).toBeLessThan(0.08)
    expect(onSeen.answeredAccuracy).toBeGreaterThanOrEqual(onSeen.accuracy)
  })

  it("the shipped weights are what the training script makes of the shipped examples (deterministic)", () => {
    expect(weights.training.dataSha256).toBe(sha256)
    const { weights: retrained } = trainClassifier(examples, sha256)
    expect(JSON.parse(JSON.stringify(retrained))).toEqual(weights)
  }, 60_000)

  it("labels a Uniswap V2 swap and an Arbitrum gateway arrival, with model version and rationale", () => {
    const swap = Classification.classifyWith(model, new Map(), {
      ...base,
      methodSelector: "0x38ed1739",
      tokenFlows: [{ token: "AAPL", direction: "out", amount: "10" }, { token: "TSLA", direction: "in", amount: "3" }]
    }, 0.5)
    expect(Option.getOrThrow(swap)).toMatchObject({
      type: "swap",
      relationship: "contract",
      model: "scaledger-embedded/1.0.0"
    })
    expect(Option.getOrThrow(swap).rationale).toContain("0x38ed1739 (swapExactTokensForTokens)")
    const arrival = Option.getOrThrow(Classification.classifyWith(model, new Map(), {
      ...base,
      direction: "in",
      txFrom: "0x4444444444444444444444444444444444444444",
      txTo: base.counterparty,
      methodSelector: "0x2e567b36",
      tokenFlows: [{ token: "AAPL", direction: "in", amount: "10" }]
    }, 0.5))
    expect(arrival).toMatchObject({ type: "bridge.in", relationship: "self" })
    expect(arrival.confidence).toBeGreaterThan(0.5)
    expect(arrival.confidence).toBeLessThanOrEqual(1)
  })

  it("answers None below its floor, and the same answer every time", () => {
    const ambiguous = { ...base, methodSelector: null, txFrom: null, txTo: null }
    const [top] = Classification.score(model, new Map(), ambiguous)
    expect(Option.isNone(Classification.classifyWith(model, new Map(), ambiguous, Math.min(1, top.p + 0.01)))).toBe(
      true
    )
    const once = Classification.classifyWith(model, new Map(), ambiguous, 0)
    expect(Option.getOrThrow(once).confidence).toBeCloseTo(top.p, 12)
    expect(Classification.classifyWith(model, new Map(), ambiguous, 0)).toEqual(once)
  })

  it("takes malformed selectors and empty flows as unknown facts, not errors", () => {
    expect(Classification.normaliseSelector("0x12")).toBeNull()
    expect(Classification.normaliseSelector("0x38ED1739")).toBe("0x38ed1739")
    const odd = { ...base, methodSelector: "not-hex", tokenFlows: [], priorIn: -3 }
    const [top] = Classification.score(model, new Map(), odd)
    expect(top.p).toBeGreaterThan(0)
    expect(Classification.activeFeatures(odd, model.knownSelectors)).toContain("sel:none")
  })

  it("reads the transaction's shape from the features, whatever the address case", () => {
    const names = Classification.activeFeatures({
      ...base,
      wallet: base.wallet.toUpperCase().replace("0X", "0x"),
      txTo: base.counterparty,
      tokenFlows: [{ token: "AAPL", direction: "out", amount: "1" }, { token: "TSLA", direction: "in", amount: "2" }],
      priorIn: 1,
      priorOut: 7
    }, new Set())
    expect(names).toEqual(expect.arrayContaining([
      "sender:wallet",
      "target:counterparty",
      "sel:unseen",
      "flows:exchange",
      "history:both",
      "priorOut:6+"
    ]))
    const roundTrip = Classification.activeFeatures({
      ...base,
      txFrom: null,
      tokenFlows: [{ token: "AAPL", direction: "out", amount: "1" }, { token: "AAPL", direction: "in", amount: "1" }]
    }, new Set(["0xdeadbeef"]))
    expect(roundTrip).toEqual(expect.arrayContaining(["sender:unknown", "flows:both-same", "sel:0xdeadbeef"]))
  })

  it("refuses weights whose shape does not match their classes and features", () => {
    expect(() => Classification.loadModel({ ...weights, weights: weights.weights.slice(1) })).toThrow(/rows/)
    expect(() => Classification.loadModel({ ...weights, features: weights.features.slice(1) })).toThrow(/features/)
  })
})

describe("embedded classifier: learning from the account's confirmed labels", () => {
  it.effect("a counterparty confirmed as collateral is then labelled collateral, both ways, for that wallet only", () =>
    Effect.gen(function*() {
      const classifier = yield* Effect.flatMap(shippedWeights, (w) => makeEmbeddedClassifier(w, 0.5))
      // An unknown protocol paid to by a plain transfer call: the weights alone call it something else.
      const deposit = { ...base, methodSelector: "0xa9059cbb" }
      const before = yield* classifier.classify(deposit)
      expect(Option.map(before, (l) => l.type)).not.toEqual(Option.some("collateral_post"))

      yield* classifier.learn([{ features: deposit, type: "collateral_post", relationship: "contract" }])
      const after = Option.getOrThrow(yield* classifier.classify({ ...deposit, txHash: "0x" + "cd".repeat(32) }))
      expect(after).toMatchObject({ type: "collateral_post", relationship: "contract" })
      expect(after.confidence).toBeGreaterThanOrEqual(1 / (1 + Classification.MEMORY_PRIOR))
      expect(after.rationale).toContain("the account confirmed 1 earlier movement")

      // The withdrawal from the same counterparty is the other half of the same kind.
      const back = Option.getOrThrow(
        yield* classifier.classify({
          ...deposit,
          direction: "in",
          tokenFlows: [{ token: "AAPL", direction: "in", amount: "10" }]
        })
      )
      expect(back).toMatchObject({ type: "collateral_withdraw", relationship: "contract" })

      // Another wallet with the same counterparty is not told what this one confirmed.
      const other = "0x5555555555555555555555555555555555555555"
      const elsewhere = yield* classifier.classify({ ...deposit, wallet: other, txFrom: other })
      expect(elsewhere).toEqual(before)
    }))

  it("a relationship the caller says was confirmed narrows the labels to it", () => {
    const swapLike = {
      ...base,
      methodSelector: "0x38ed1739",
      tokenFlows: [{ token: "AAPL", direction: "out" as const, amount: "10" }, {
        token: "TSLA",
        direction: "in" as const,
        amount: "3"
      }]
    }
    const asContract = Option.getOrThrow(
      Classification.classifyWith(model, new Map(), { ...swapLike, confirmedRelationship: "contract" }, 0.5)
    )
    expect(asContract).toMatchObject({ type: "swap", relationship: "contract" })
    expect(asContract.rationale).toContain("the account confirmed the counterparty as contract")
    const asPerson = Option.getOrThrow(
      Classification.classifyWith(model, new Map(), { ...swapLike, confirmedRelationship: "counterparty" }, 0.5)
    )
    expect(asPerson).toMatchObject({ type: "transfer.out", relationship: "counterparty", confidence: 1 })
    const asExchange = Option.getOrThrow(
      Classification.classifyWith(
        model,
        new Map(),
        { ...base, direction: "in", confirmedRelationship: "exchange" },
        0.5
      )
    )
    expect(asExchange).toMatchObject({
      type: "transfer.in",
      relationship: "exchange",
      confidence: Classification.CONFIRMED_RELATIONSHIP_CONFIDENCE
    })
  })

  it("more confirmations weigh more; an unknown type teaches nothing", () => {
    const one = Classification.remember(new Map(), [{ features: base, type: "bridge.out", relationship: "self" }])
    const three = Classification.remember(one, [
      { features: base, type: "bridge.out", relationship: "self" },
      { features: base, type: "bridge.in", relationship: "self" },
      { features: base, type: "unknown", relationship: "self" }
    ])
    expect(three.get(Classification.memoryKey(base))).toEqual([{ family: "bridge", relationship: "self", count: 3 }])
    const p1 = Classification.score(model, one, base)[0]
    const p3 = Classification.score(model, three, base)[0]
    expect(p1.type).toBe("bridge.out")
    expect(p3.p).toBeGreaterThan(p1.p)
  })

  it("one account's confirmations count for that account only", () => {
    const memory = Classification.remember(new Map(), [
      { features: base, type: "bridge.out", relationship: "self" },
      { features: base, type: "bridge.out", relationship: "self" }
    ])
    const other = { ...base, account: "acct_other" }
    // The same wallet and counterparty watched by another account: scored as if nothing were confirmed.
    expect(Classification.score(model, memory, other)).toEqual(Classification.score(model, new Map(), other))
    expect(Classification.score(model, memory, base)).not.toEqual(Classification.score(model, new Map(), base))
  })
})
