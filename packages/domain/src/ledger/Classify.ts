import type { Classification, CounterpartyLabel, MovementType, TransferEvent } from "./LedgerInput.js"
import type { Treatment } from "./LedgerReport.js"

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

export interface ClassifyContext {
  /** Own addresses (wallets with self=true), lowercase → the address as the account wrote it. */
  readonly own: ReadonlyMap<string, string>
  readonly labels: ReadonlyMap<string, CounterpartyLabel>
}

export interface ResolvedMovement {
  readonly classification: Classification
  readonly needsReview: boolean
  /** A model label not yet confirmed: nothing computed from this movement may be used as a tax figure. */
  readonly unconfirmed: boolean
  readonly treatment: Treatment
  readonly direction: "in" | "out" | "self"
  /** Lowercase own end (the sender for a self-transfer). */
  readonly walletKey: string
  /** Lowercase other end (the receiver for a self-transfer). */
  readonly counterpartyKey: string
  /** The given type points the other way from the movement (e.g. `transfer.in` for tokens leaving). */
  readonly typeMismatch: boolean
}

const INBOUND_TYPES: ReadonlySet<MovementType> = new Set(["transfer.in", "mint", "collateral_withdraw", "bridge.in"])
const OUTBOUND_TYPES: ReadonlySet<MovementType> = new Set(["transfer.out", "burn", "collateral_post", "bridge.out"])

const BOTH_OWN: Classification = { type: "transfer.self", relationship: "self", classifiedBy: "rule", confirmed: true }

const MINT: Classification = { type: "mint", relationship: null, classifiedBy: "rule", confirmed: true }
const BURN: Classification = { type: "burn", relationship: null, classifiedBy: "rule", confirmed: true }
/** Tokens arriving from an address of unknown relationship: an acquisition at market value, left for review. */
const TRANSFER_IN: Classification = { type: "transfer.in", relationship: null, classifiedBy: "rule", confirmed: false }
/** Tokens leaving to an address of unknown relationship: counted as a disposal, and left for review. */
const TRANSFER_OUT: Classification = {
  type: "transfer.out",
  relationship: null,
  classifiedBy: "rule",
  confirmed: false
}

/** The classification a transfer gets by rule when nobody classified it. */
export const ruleClassification = (direction: "in" | "out", counterpartyKey: string): Classification =>
  counterpartyKey === ZERO_ADDRESS
    ? (direction === "in" ? MINT : BURN)
    : direction === "in"
    ? TRANSFER_IN
    : TRANSFER_OUT

const withLabel = (base: Classification, label: CounterpartyLabel): Classification => {
  let type = base.type
  if (label.relationship === "self" && (type === "transfer.in" || type === "transfer.out" || type === "unknown")) {
    type = "transfer.self"
  }
  return { type, relationship: label.relationship, classifiedBy: label.classifiedBy, confirmed: label.confirmed }
}

const addressKeys = new WeakMap<ClassifyContext, Map<string, string>>()

/**
 * The lowercase key of an address as an event spells it, kept per context so that an address seen again is not
 * lowered again (`toLowerCase` copies the string each time, and every transfer names two addresses).
 */
export const addressKey = (ctx: ClassifyContext, address: string): string => {
  let keys = addressKeys.get(ctx)
  if (keys === undefined) {
    keys = new Map()
    addressKeys.set(ctx, keys)
  }
  let key = keys.get(address)
  if (key === undefined) {
    key = address.toLowerCase()
    if (keys.size < 100_000) keys.set(address, key)
  }
  return key
}

const isConfirmed = (c: { readonly classifiedBy: Classification["classifiedBy"]; readonly confirmed: boolean }) =>
  c.classifiedBy === "user" || c.confirmed

/**
 * Decides how a transfer is classified, in this order:
 * 1. both ends own → `transfer.self` (a chain fact about the account; overrides any stored classification);
 * 2. the event's own classification when a user gave it;
 * 3. a confirmed label of the counterparty;
 * 4. the event's classification (rule or model), else the rule default; when its relationship is unknown an
 *    unconfirmed counterparty label fills it in.
 * Returns null when neither end is own.
 */
export const resolveMovement = (ctx: ClassifyContext, event: TransferEvent): ResolvedMovement | null => {
  const fromKey = addressKey(ctx, event.from)
  const toKey = addressKey(ctx, event.to)
  const fromOwn = ctx.own.has(fromKey)
  const toOwn = ctx.own.has(toKey)
  if (fromOwn && toOwn) {
    return {
      classification: BOTH_OWN,
      needsReview: false,
      unconfirmed: false,
      treatment: "self_transfer",
      direction: "self",
      walletKey: fromKey,
      counterpartyKey: toKey,
      typeMismatch: false
    }
  }
  if (!fromOwn && !toOwn) return null
  const direction = fromOwn ? "out" : "in"
  const counterpartyKey = fromOwn ? toKey : fromKey
  const given = event.classification ?? null
  const label = ctx.labels.get(counterpartyKey)
  let classification: Classification
  if (given !== null && given.classifiedBy === "user") {
    classification = given
  } else if (label !== undefined && isConfirmed(label)) {
    classification = withLabel(given ?? ruleClassification(direction, counterpartyKey), label)
  } else {
    classification = given ?? ruleClassification(direction, counterpartyKey)
    if (classification.relationship === null && label !== undefined) classification = withLabel(classification, label)
  }
  // An unconfirmed model label, or a movement nobody could place (`unknown`), is never a tax figure.
  const unconfirmed = (classification.classifiedBy === "ai_labeled" && !classification.confirmed) ||
    (classification.type === "unknown" && !isConfirmed(classification))
  const needsReview = !isConfirmed(classification) || classification.type === "unknown"
  const { type } = classification
  const typeMismatch = direction === "out" ? INBOUND_TYPES.has(type) : OUTBOUND_TYPES.has(type)
  let treatment: Treatment
  if (unconfirmed || typeMismatch) {
    treatment = direction === "out" ? "disposal" : "acquisition"
  } else if (
    type === "collateral_post" || type === "collateral_withdraw" || type === "bridge.out" || type === "bridge.in"
  ) {
    // Before the relationship: a bridge is the holder's own (the contract list says `self`), yet its tokens are in
    // transit, not held by the bridge's address.
    treatment = type === "collateral_post"
      ? "collateral_post"
      : type === "collateral_withdraw"
      ? "collateral_withdraw"
      : type === "bridge.out"
      ? "bridge_out"
      : "bridge_in"
  } else if (type === "transfer.self" || classification.relationship === "self") {
    treatment = "self_transfer"
  } else {
    treatment = direction === "out" ? "disposal" : "acquisition"
  }
  return {
    classification,
    needsReview: needsReview || typeMismatch,
    unconfirmed,
    treatment,
    direction,
    walletKey: fromOwn ? fromKey : toKey,
    counterpartyKey,
    typeMismatch
  }
}
