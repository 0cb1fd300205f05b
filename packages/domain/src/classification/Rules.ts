import type { MovementType, Relationship } from "../ledger/LedgerInput.js"
import type { ContractEntry, ContractIndex } from "./ContractList.js"

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

/** Which rule placed a movement (DECISIONS.md "Classification and review", in this order). */
export type RuleName = "both_own" | "zero_address" | "contract_list" | "swap" | "plain_address"

/** One token transfer of a transaction; addresses and token lowercase. */
export interface TxLeg {
  readonly token: string
  readonly from: string
  readonly to: string
  readonly logIndex: number
}

export interface RuleContext {
  /** The account's own addresses (lowercase). */
  readonly own: ReadonlySet<string>
  readonly contracts: ContractIndex
  /** Whether an address has code on chain; asked only for a counterparty that is neither own nor listed. */
  readonly hasCode: (address: string) => boolean
}

export type RuleOutcome =
  | {
    readonly _tag: "Classified"
    readonly rule: RuleName
    readonly type: MovementType
    readonly relationship: Relationship | null
    /** False when the rule keeps the figures but the relationship is unknown: the movement needs review. */
    readonly confirmed: boolean
    readonly rationale: string
  }
  /** A movement to or from a contract that is not on the list: the model's turn. */
  | {
    readonly _tag: "Leftover"
    readonly direction: "in" | "out"
    readonly wallet: string
    readonly counterparty: string
  }
  /** Neither end is own: not a movement of the account. */
  | { readonly _tag: "NotOwn" }

const byKind = (entry: ContractEntry, direction: "in" | "out") => {
  switch (entry.kind) {
    case "dex":
      return { type: "swap" as const, relationship: "contract" as const }
    case "lending":
      return {
        type: direction === "out" ? "collateral_post" as const : "collateral_withdraw" as const,
        relationship: "contract" as const
      }
    case "bridge":
      return { type: direction === "out" ? "bridge.out" as const : "bridge.in" as const, relationship: "self" as const }
    case "exchange":
      return {
        type: direction === "out" ? "transfer.out" as const : "transfer.in" as const,
        relationship: "exchange" as const
      }
  }
}

/** The own address sends one token and receives another within the transaction. */
const isSwap = (wallet: string, legs: ReadonlyArray<TxLeg>): boolean => {
  const sent = new Set<string>()
  const received = new Set<string>()
  for (const leg of legs) {
    if (leg.from === wallet) sent.add(leg.token)
    if (leg.to === wallet) received.add(leg.token)
  }
  for (const token of sent) {
    for (const other of received) if (other !== token) return true
  }
  return false
}

/**
 * Classifies one transfer of an own address by rule, given every transfer of its transaction (`legs`, this one
 * included): both ends own → `transfer.self`; the zero address → `mint`/`burn`; a listed counterparty → by its kind;
 * one token out and another in within the transaction → `swap` (even through an unlisted contract); a plain address
 * (no code) → `transfer.out`/`transfer.in` with relationship unknown, needing review, figures kept. What is left
 * (a contract not on the list) goes to the model.
 */
export const BOTH_OWN_RATIONALE = "Both ends are own addresses of the account."

export const classifyByRules = (ctx: RuleContext, transfer: TxLeg, legs: ReadonlyArray<TxLeg>): RuleOutcome => {
  const from = transfer.from.toLowerCase()
  const to = transfer.to.toLowerCase()
  const fromOwn = ctx.own.has(from)
  const toOwn = ctx.own.has(to)
  if (fromOwn && toOwn) {
    return {
      _tag: "Classified",
      rule: "both_own",
      type: "transfer.self",
      relationship: "self",
      confirmed: true,
      rationale: BOTH_OWN_RATIONALE
    }
  }
  if (!fromOwn && !toOwn) return { _tag: "NotOwn" }
  const direction = fromOwn ? "out" : "in"
  const wallet = fromOwn ? from : to
  const counterparty = fromOwn ? to : from
  if (counterparty === ZERO_ADDRESS) {
    return {
      _tag: "Classified",
      rule: "zero_address",
      type: direction === "in" ? "mint" : "burn",
      relationship: null,
      confirmed: true,
      rationale: direction === "in" ? "Minted: sent from the zero address." : "Burnt: sent to the zero address."
    }
  }
  const listed = ctx.contracts.get(counterparty)
  if (listed !== undefined) {
    return {
      _tag: "Classified",
      rule: "contract_list",
      ...byKind(listed, direction),
      confirmed: true,
      rationale: `The counterparty is on the contract list: ${listed.name} (${listed.kind}).`
    }
  }
  const lowered = legs.map((leg) => ({ ...leg, from: leg.from.toLowerCase(), to: leg.to.toLowerCase() }))
  const hasCode = ctx.hasCode(counterparty)
  if (isSwap(wallet, lowered)) {
    return {
      _tag: "Classified",
      rule: "swap",
      type: "swap",
      relationship: hasCode ? "contract" : "counterparty",
      confirmed: true,
      rationale: "The own address sent one token and received another in the same transaction."
    }
  }
  if (!hasCode) {
    return {
      _tag: "Classified",
      rule: "plain_address",
      type: direction === "in" ? "transfer.in" : "transfer.out",
      relationship: null,
      confirmed: false,
      rationale: direction === "in"
        ? "Received from a plain address of unknown relationship: an acquisition at market value until reviewed."
        : "Sent to a plain address of unknown relationship: a disposal at market value until reviewed."
    }
  }
  return { _tag: "Leftover", direction, wallet, counterparty }
}
