import { mergeContractLists, parseContractList } from "@scaledger/domain/classification/ContractList"
import { classifyByRules, type RuleContext, type TxLeg, ZERO_ADDRESS } from "@scaledger/domain/classification/Rules"
import { resolveMovement } from "@scaledger/domain/ledger/Classify"
import { Either } from "effect"
import { describe, expect, it } from "vitest"

const W = "0x00000000000000000000000000000000000000aa"
const W2 = "0x00000000000000000000000000000000000000ab"
const ROUTER = "0x00000000000000000000000000000000000000d1"
const VAULT = "0x00000000000000000000000000000000000000d2"
const GATEWAY = "0x00000000000000000000000000000000000000d3"
const CEX = "0x00000000000000000000000000000000000000d4"
const UNLISTED = "0x00000000000000000000000000000000000000d5"
const PLAIN = "0x00000000000000000000000000000000000000e1"

const contracts = mergeContractLists(1, [
  { chainId: 1, address: ROUTER, kind: "dex", name: "Router" },
  { chainId: 1, address: VAULT.toUpperCase().replace("0X", "0x"), kind: "lending", name: "Vault" },
  { chainId: 1, address: GATEWAY, kind: "bridge", name: "Gateway" },
  { chainId: 1, address: CEX, kind: "exchange", name: "Exchange" },
  { chainId: 2, address: UNLISTED, kind: "dex", name: "another chain's" }
])

const ctx: RuleContext = {
  own: new Set([W, W2]),
  contracts,
  hasCode: (address) => [ROUTER, VAULT, GATEWAY, CEX, UNLISTED].includes(address)
}

const leg = (from: string, to: string, token = "AAPL", logIndex = 0): TxLeg => ({ token, from, to, logIndex })
const classify = (transfer: TxLeg, legs: ReadonlyArray<TxLeg> = [transfer]) => classifyByRules(ctx, transfer, legs)

describe("classification rules, in the order of DECISIONS.md", () => {
  it("both ends own: transfer.self, even with a listed contract in the transaction", () => {
    expect(classify(leg(W, W2))).toMatchObject({ rule: "both_own", type: "transfer.self", relationship: "self" })
  })

  it("the zero address: mint in, burn out", () => {
    expect(classify(leg(ZERO_ADDRESS, W))).toMatchObject({ rule: "zero_address", type: "mint", confirmed: true })
    expect(classify(leg(W, ZERO_ADDRESS))).toMatchObject({ rule: "zero_address", type: "burn", confirmed: true })
  })

  it("a listed counterparty by its kind, matched case-insensitively", () => {
    expect(classify(leg(W, ROUTER))).toMatchObject({ rule: "contract_list", type: "swap", relationship: "contract" })
    expect(classify(leg(W, VAULT))).toMatchObject({ type: "collateral_post", relationship: "contract" })
    expect(classify(leg(VAULT, W))).toMatchObject({ type: "collateral_withdraw", relationship: "contract" })
    expect(classify(leg(W, GATEWAY))).toMatchObject({ type: "bridge.out", relationship: "self" })
    expect(classify(leg(GATEWAY, W))).toMatchObject({ type: "bridge.in", relationship: "self" })
    expect(classify(leg(W, CEX))).toMatchObject({ type: "transfer.out", relationship: "exchange", confirmed: true })
    expect(classify(leg(CEX, W))).toMatchObject({ type: "transfer.in", relationship: "exchange" })
  })

  it("one token out and another in within the transaction is a swap, even through an unlisted contract", () => {
    const out = leg(W, UNLISTED, "AAPL", 1)
    const back = leg(UNLISTED, W, "TSLA", 2)
    expect(classify(out, [out, back])).toMatchObject({ rule: "swap", type: "swap", relationship: "contract" })
    expect(classify(back, [out, back])).toMatchObject({ rule: "swap", type: "swap" })
    // The same token back is no swap: the unlisted contract's movements go to the model.
    const same = leg(UNLISTED, W, "AAPL", 2)
    expect(classify(out, [out, same])._tag).toBe("Leftover")
  })

  it("a plain address: a transfer by rule with relationship unknown, needing review (confirmed false)", () => {
    expect(classify(leg(W, PLAIN))).toMatchObject({
      rule: "plain_address",
      type: "transfer.out",
      relationship: null,
      confirmed: false
    })
    expect(classify(leg(PLAIN, W))).toMatchObject({ rule: "plain_address", type: "transfer.in", confirmed: false })
  })

  it("an unlisted contract is left to the model; a list of another chain does not apply", () => {
    expect(classify(leg(W, UNLISTED))).toEqual({
      _tag: "Leftover",
      direction: "out",
      wallet: W,
      counterparty: UNLISTED
    })
    expect(classify(leg(UNLISTED, W))).toMatchObject({ _tag: "Leftover", direction: "in" })
  })

  it("neither end own: not the account's movement", () => {
    expect(classify(leg(PLAIN, ROUTER))._tag).toBe("NotOwn")
  })
})

describe("the contract list file", () => {
  it("later lists add to and override the bundled one by address", () => {
    const merged = mergeContractLists(
      1,
      [{ chainId: 1, address: ROUTER, kind: "dex", name: "Router" }],
      [{ chainId: 1, address: ROUTER.toUpperCase().replace("0X", "0x"), kind: "exchange", name: "Now a CEX" }, {
        chainId: 1,
        address: VAULT,
        kind: "lending",
        name: "Vault"
      }]
    )
    expect(merged.size).toBe(2)
    expect(merged.get(ROUTER)).toMatchObject({ kind: "exchange", name: "Now a CEX" })
  })

  it("a good file decodes", () => {
    const parsed = parseContractList(
      "test",
      JSON.stringify([{ chainId: 4663, address: ROUTER, kind: "bridge", name: "Gateway" }])
    )
    expect(Either.isRight(parsed)).toBe(true)
  })

  it.each([
    ["not JSON", "{", /not JSON/],
    ["not an array", JSON.stringify({ chainId: 1 }), /not a contract list/],
    ["an unknown kind", JSON.stringify([{ chainId: 1, address: ROUTER, kind: "casino", name: "x" }]), /kind/],
    ["a bad address", JSON.stringify([{ chainId: 1, address: "0x12", kind: "dex", name: "x" }]), /address/],
    ["a missing name", JSON.stringify([{ chainId: 1, address: ROUTER, kind: "dex" }]), /name/],
    ["an unknown field", JSON.stringify([{ chainId: 1, address: ROUTER, kind: "dex", name: "x", typo: 1 }]), /typo/]
  ])("refuses %s with a message saying what is wrong", (_, text, pattern) => {
    const parsed = parseContractList("CONTRACT_LIST /tmp/list.json", text)
    expect(Either.isLeft(parsed)).toBe(true)
    if (Either.isLeft(parsed)) {
      expect(parsed.left._tag).toBe("ContractListInvalid")
      expect(parsed.left.message).toMatch(pattern)
      expect(parsed.left.message).toContain("CONTRACT_LIST /tmp/list.json")
    }
  })
})

describe("what the ledger makes of the worker's decisions", () => {
  const own = new Map([[W, W]])
  const event = (classification: any) => ({
    id: "0x1:0",
    kind: "transfer" as const,
    token: "AAPL",
    tokenAddress: "0x00000000000000000000000000000000000000f1",
    from: W,
    to: UNLISTED,
    raw: "1",
    block: 1,
    logIndex: 0,
    txHash: `0x${"1".repeat(64)}`,
    timestamp: 1,
    classification
  })

  it("an unknown movement (no model label) needs review and is no tax figure; a plain transfer keeps its figures", () => {
    const unknown = resolveMovement(
      { own, labels: new Map() },
      event({ type: "unknown", relationship: null, classifiedBy: "rule", confirmed: false })
    )!
    expect([unknown.needsReview, unknown.unconfirmed, unknown.treatment]).toEqual([true, true, "disposal"])
    const plain = resolveMovement(
      { own, labels: new Map() },
      event({ type: "transfer.out", relationship: null, classifiedBy: "rule", confirmed: false })
    )!
    expect([plain.needsReview, plain.unconfirmed, plain.treatment]).toEqual([true, false, "disposal"])
  })

  it("a confirmed `self` label makes the model's movement a self-transfer", () => {
    const resolved = resolveMovement(
      { own, labels: new Map([[UNLISTED, { relationship: "self", classifiedBy: "user", confirmed: true }]]) },
      event({ type: "transfer.out", relationship: "contract", classifiedBy: "ai_labeled", confirmed: false })
    )!
    expect(resolved).toMatchObject({
      needsReview: false,
      unconfirmed: false,
      treatment: "self_transfer",
      classification: { type: "transfer.self", relationship: "self", classifiedBy: "user" }
    })
  })
})
