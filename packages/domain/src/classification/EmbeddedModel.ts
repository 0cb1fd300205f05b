import { Option, Schema } from "effect"
import { MovementType, Relationship } from "../ledger/LedgerInput.js"
import type { ModelLabel, MovementFeatures } from "./ClassifierPort.js"
import { activeFeatures } from "./ModelFeatures.js"

/**
 * The embedded classifier: a multinomial logistic regression over `activeFeatures`, temperature-scaled so that its
 * confidence is calibrated, plus what the account confirmed about a counterparty. Pure: weights and memory are
 * values; the workers' layer holds them.
 */

export const ModelClass = Schema.Struct({ type: MovementType, relationship: Relationship })
export type ModelClass = typeof ModelClass.Type

/** The shipped weights file (packages/workers/src/classify/embedded-model.json), written by the training script. */
export const EmbeddedWeights = Schema.Struct({
  model: Schema.String,
  version: Schema.String,
  classes: Schema.NonEmptyArray(ModelClass),
  /** Method selectors seen in training, with the function each stands for. */
  selectors: Schema.Record({ key: Schema.String, value: Schema.String }),
  features: Schema.Array(Schema.String),
  /** One row per class, one column per feature. */
  weights: Schema.Array(Schema.Array(Schema.Number)),
  /** Divides the logits before the softmax; fitted on a validation split. */
  temperature: Schema.Number.pipe(Schema.positive()),
  training: Schema.Struct({
    examples: Schema.Number,
    dataSha256: Schema.String,
    validationAccuracy: Schema.Number,
    heldOutAccuracy: Schema.Number
  })
})
export type EmbeddedWeights = typeof EmbeddedWeights.Type

/** A decoded model ready for inference. */
export interface LoadedModel {
  readonly weights: EmbeddedWeights
  readonly featureIndex: ReadonlyMap<string, number>
  readonly knownSelectors: ReadonlySet<string>
}

export const loadModel = (weights: EmbeddedWeights): LoadedModel => {
  if (weights.weights.length !== weights.classes.length) {
    throw new Error(`weights: ${weights.weights.length} rows for ${weights.classes.length} classes`)
  }
  for (const row of weights.weights) {
    if (row.length !== weights.features.length) {
      throw new Error(`weights: a row of ${row.length} for ${weights.features.length} features`)
    }
  }
  return {
    weights,
    featureIndex: new Map(weights.features.map((name, i) => [name, i])),
    knownSelectors: new Set(Object.keys(weights.selectors))
  }
}

export const softmax = (logits: ReadonlyArray<number>): Array<number> => {
  const max = Math.max(...logits)
  const exps = logits.map((z) => Math.exp(z - max))
  const sum = exps.reduce((a, b) => a + b, 0)
  return exps.map((e) => e / sum)
}

/** The feature indices that fire for a movement (names the model does not know are dropped). */
export const featureIndices = (model: LoadedModel, f: MovementFeatures): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (const name of activeFeatures(f, model.knownSelectors)) {
    const i = model.featureIndex.get(name)
    if (i !== undefined) out.push(i)
  }
  return out
}

/** Logits before temperature scaling (what training optimises). */
export const logitsOf = (
  weights: ReadonlyArray<ReadonlyArray<number>>,
  indices: ReadonlyArray<number>
): Array<number> =>
  weights.map((row) => {
    let sum = 0
    for (const i of indices) sum += row[i]
    return sum
  })

/** Calibrated class probabilities from the weights alone. */
export const predictProba = (model: LoadedModel, f: MovementFeatures): Array<number> =>
  softmax(logitsOf(model.weights.weights, featureIndices(model, f)).map((z) => z / model.weights.temperature))

// ---------------------------------------------------------------------------------------------------------------
// What the account confirmed: counts per counterparty, by direction-free kind so that a lending pool confirmed
// for a deposit also explains the withdrawal.

export type Family = "swap" | "collateral" | "bridge" | "transfer" | "self" | "mint" | "unknown"

export const familyOf = (type: MovementType): Family => {
  switch (type) {
    case "swap":
      return "swap"
    case "collateral_post":
    case "collateral_withdraw":
      return "collateral"
    case "bridge.out":
    case "bridge.in":
      return "bridge"
    case "transfer.in":
    case "transfer.out":
      return "transfer"
    case "transfer.self":
      return "self"
    case "mint":
    case "burn":
      return "mint"
    case "unknown":
      return "unknown"
  }
}

export const typeFor = (family: Family, direction: "in" | "out"): MovementType => {
  switch (family) {
    case "swap":
      return "swap"
    case "collateral":
      return direction === "out" ? "collateral_post" : "collateral_withdraw"
    case "bridge":
      return direction === "out" ? "bridge.out" : "bridge.in"
    case "transfer":
      return direction === "out" ? "transfer.out" : "transfer.in"
    case "self":
      return "transfer.self"
    case "mint":
      return direction === "out" ? "burn" : "mint"
    case "unknown":
      return "unknown"
  }
}

export interface Confirmed {
  readonly family: Family
  readonly relationship: Relationship
  readonly count: number
}

/** Confirmed labels by `account:chainId:wallet:counterparty`: an account's confirmations count for it alone. */
export type CounterpartyMemory = ReadonlyMap<string, ReadonlyArray<Confirmed>>

export const memoryKey = (f: Pick<MovementFeatures, "account" | "chainId" | "wallet" | "counterparty">): string =>
  `${JSON.stringify(f.account ?? null)}:${f.chainId}:${f.wallet.toLowerCase()}:${f.counterparty.toLowerCase()}`

export const remember = (
  memory: CounterpartyMemory,
  examples: ReadonlyArray<
    { readonly features: MovementFeatures; readonly type: MovementType; readonly relationship: Relationship }
  >
): CounterpartyMemory => {
  const next = new Map(memory)
  for (const example of examples) {
    const family = familyOf(example.type)
    if (family === "unknown") continue
    const key = memoryKey(example.features)
    const entries = [...(next.get(key) ?? [])]
    const i = entries.findIndex((e) => e.family === family && e.relationship === example.relationship)
    if (i >= 0) entries[i] = { ...entries[i], count: entries[i].count + 1 }
    else entries.push({ family, relationship: example.relationship, count: 1 })
    next.set(key, entries)
  }
  return next
}

/**
 * How strongly the weights count against confirmed labels: the answer is (n_k + prior·p_k) / (n + prior), so one
 * confirmation of a label gives it at least 1 / (1 + prior) of the mass.
 */
export const MEMORY_PRIOR = 0.5

const describe = (model: LoadedModel, name: string): string | undefined => {
  const head = name.includes("&") ? name.split("&")[1] : name
  const [key, value] = head.split(":") as [string, string | undefined]
  switch (key) {
    case "sel":
      return value === "none"
        ? undefined
        : value === "unseen"
        ? "a method the model has not seen"
        : `method ${value} (${model.weights.selectors[value!] ?? "?"})`
    case "flows":
      return {
        exchange: "one token out and another in within the transaction",
        "both-same": "the same token both in and out within the transaction",
        "in-only": "tokens only come in within the transaction",
        "out-only": "tokens only go out within the transaction",
        none: undefined
      }[value!]
    case "sender":
      return value === "wallet"
        ? "sent by the wallet itself"
        : value === "other"
        ? "sent by another address"
        : undefined
    case "target":
      return value === "counterparty" ? "the wallet called the counterparty directly" : undefined
    case "history":
      return value === "both"
        ? "the counterparty both received from and returned to the wallet before"
        : value === "new"
        ? undefined
        : `earlier movements ${value} with this counterparty`
    default:
      return undefined
  }
}

const rationaleFor = (model: LoadedModel, indices: ReadonlyArray<number>, classIndex: number): string => {
  const row = model.weights.weights[classIndex]
  const reasons = [...indices]
    .sort((a, b) => row[b] - row[a])
    .filter((i) => row[i] > 0)
    .map((i) => describe(model, model.weights.features[i]))
    .filter((text): text is string => text !== undefined)
  return [...new Set(reasons)].slice(0, 3).join("; ")
}

export interface Scored {
  readonly type: MovementType
  readonly relationship: Relationship
  readonly p: number
}

/** Every candidate label with its probability, highest first (weights blended with confirmed labels). */
export const score = (model: LoadedModel, memory: CounterpartyMemory, f: MovementFeatures): ReadonlyArray<Scored> => {
  const proba = predictProba(model, f)
  const confirmed = memory.get(memoryKey(f)) ?? []
  const n = confirmed.reduce((sum, c) => sum + c.count, 0)
  const blended = new Map<string, Scored>()
  model.weights.classes.forEach((c, i) => {
    blended.set(`${c.type}|${c.relationship}`, { ...c, p: (MEMORY_PRIOR * proba[i]) / (n + MEMORY_PRIOR) })
  })
  for (const c of confirmed) {
    const type = typeFor(c.family, f.direction)
    const key = `${type}|${c.relationship}`
    const before = blended.get(key)?.p ?? 0
    blended.set(key, { type, relationship: c.relationship, p: before + c.count / (n + MEMORY_PRIOR) })
  }
  // A type of the other direction (a `bridge.in` for a movement out) is no candidate; its small mass goes.
  const consistent = [...blended.values()].filter((c) => typeFor(familyOf(c.type), f.direction) === c.type)
  const total = consistent.reduce((sum, c) => sum + c.p, 0)
  const candidates = total > 0 ? consistent.map((c) => ({ ...c, p: c.p / total })) : consistent
  return (f.confirmedRelationship === null ? candidates : givenRelationship(candidates, f)).sort((a, b) => b.p - a.p)
}

/** How sure a label is whose relationship the account confirmed and whose type follows from it and the direction. */
export const CONFIRMED_RELATIONSHIP_CONFIDENCE = 0.95

/** The account confirmed the counterparty's relationship: only labels with it remain, their mass renormalised. */
const givenRelationship = (candidates: ReadonlyArray<Scored>, f: MovementFeatures): Array<Scored> => {
  const relationship = f.confirmedRelationship!
  const kept = candidates.filter((c) => c.relationship === relationship)
  const mass = kept.reduce((sum, c) => sum + c.p, 0)
  if (kept.length > 0 && mass > 0) return kept.map((c) => ({ ...c, p: c.p / mass }))
  // No class of the weights has it (an exchange): a transfer, as DECISIONS.md has it for exchanges.
  return [{ type: typeFor("transfer", f.direction), relationship, p: CONFIRMED_RELATIONSHIP_CONFIDENCE }]
}

/** The model's label, or None when its confidence is below `minConfidence`. */
export const classifyWith = (
  model: LoadedModel,
  memory: CounterpartyMemory,
  f: MovementFeatures,
  minConfidence: number
): Option.Option<ModelLabel> => {
  const [best] = score(model, memory, f)
  if (best === undefined || best.p < minConfidence) return Option.none()
  const confirmed = (memory.get(memoryKey(f)) ?? []).find((c) =>
    typeFor(c.family, f.direction) === best.type && c.relationship === best.relationship
  )
  const classIndex = model.weights.classes.findIndex((c) =>
    c.type === best.type && c.relationship === best.relationship
  )
  const reasons = [
    ...(f.confirmedRelationship === null
      ? []
      : [`the account confirmed the counterparty as ${f.confirmedRelationship}`]),
    ...(confirmed === undefined
      ? []
      : [
        `the account confirmed ${confirmed.count} earlier movement(s) with this counterparty as ${best.relationship}`
      ]),
    ...(classIndex >= 0 ? [rationaleFor(model, featureIndices(model, f), classIndex)] : [])
  ].filter((s) => s.length > 0)
  return Option.some({
    type: best.type,
    relationship: best.relationship,
    confidence: Math.min(1, Math.max(0, best.p)),
    model: `${model.weights.model}/${model.weights.version}`,
    rationale: reasons.length > 0 ? reasons.join("; ") : "learned weights"
  })
}
