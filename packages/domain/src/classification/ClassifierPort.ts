import { Context, Data, type Effect, type Option, Schema } from "effect"
import { MovementType, Relationship } from "../ledger/LedgerInput.js"

/**
 * What the model sees of one movement the rules could not place (a transfer between an own address and a contract
 * that is not on the contract list). Everything here is a chain fact or the account's own history; nothing is
 * a secret and nothing identifies the person.
 */
export const TokenFlow = Schema.Struct({
  /** The token's symbol (e.g. "AAPL"). */
  token: Schema.String,
  /** Seen from the own address of the movement. */
  direction: Schema.Literal("in", "out"),
  /** Share units as a decimal string. */
  amount: Schema.String
})
export type TokenFlow = typeof TokenFlow.Type

export const MovementFeatures = Schema.Struct({
  /**
   * The account the movement belongs to (its opaque id): a model that learns from confirmed labels applies one
   * account's only to that account (movements without one share theirs). Not sent to a remote model.
   */
  account: Schema.optional(Schema.String),
  chainId: Schema.Number,
  txHash: Schema.String,
  /** The movement seen from the own address. */
  direction: Schema.Literal("in", "out"),
  token: Schema.String,
  amount: Schema.String,
  /** The own address of the movement (lowercase). */
  wallet: Schema.String,
  /** The other end (lowercase). */
  counterparty: Schema.String,
  /** Whether the counterparty has code on chain. */
  counterpartyIsContract: Schema.Boolean,
  /** The transaction's sender (lowercase), when known. */
  txFrom: Schema.NullOr(Schema.String),
  /** The transaction's target (lowercase), when known. */
  txTo: Schema.NullOr(Schema.String),
  /** The first four bytes of the transaction's input as 0x-hex, when known. */
  methodSelector: Schema.NullOr(Schema.String),
  /** Every Stock-token flow of the own addresses in the same transaction, this movement included. */
  tokenFlows: Schema.Array(TokenFlow),
  /** How many earlier movements of the account had this counterparty, in and out. */
  priorIn: Schema.Number,
  priorOut: Schema.Number,
  /** The relationship the account confirmed for this counterparty before, if any. */
  confirmedRelationship: Schema.NullOr(Relationship)
})
export type MovementFeatures = typeof MovementFeatures.Type

/** The model's answer (DECISIONS.md "Classification and review"). */
export const ModelLabel = Schema.Struct({
  type: MovementType,
  relationship: Schema.NullOr(Relationship),
  /** 0..1 */
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  /** Model name and version, e.g. "scaledger-embedded/1.0.0" or the remote model's id. */
  model: Schema.String,
  rationale: Schema.String
})
export type ModelLabel = typeof ModelLabel.Type

/** The model could not answer (unreachable, timed out, malformed answer): the event stays `unknown`, needing review. */
export class ClassifierUnavailable extends Data.TaggedError("ClassifierUnavailable")<{
  readonly model: string
  readonly reason: string
}> {}

/**
 * The classifier model. `classify` answers `None` when the provider is `none` or the model declines (confidence
 * below its own floor); it fails only with `ClassifierUnavailable`, never with a defect, so ingestion goes on.
 * `learn` hands it the account's confirmed labels (a no-op for providers that cannot learn).
 */
export class Classifier extends Context.Tag("@scaledger/Classifier")<Classifier, {
  readonly name: string
  /**
   * How many movements it answers at once (a remote model's `MODEL_CONCURRENCY`): the caller hands it no more at a
   * time, so that no movement spends its wait for an answer queued behind the others. Absent: the caller's own.
   */
  readonly concurrency?: number
  readonly classify: (
    features: MovementFeatures
  ) => Effect.Effect<Option.Option<ModelLabel>, ClassifierUnavailable>
  readonly learn: (
    examples: ReadonlyArray<
      { readonly features: MovementFeatures; readonly type: MovementType; readonly relationship: Relationship }
    >
  ) => Effect.Effect<void>
}>() {}
