import * as Classification from "@scaledger/domain/classification/index"
import { Effect, Layer, Ref, Schema } from "effect"
import weightsJson from "./embedded-model.json" with { type: "json" }

/** The shipped weights (written by `npm run train:classifier`), decoded once. */
export const shippedWeights: Effect.Effect<Classification.EmbeddedWeights> = Schema.decodeUnknown(
  Classification.EmbeddedWeights
)(weightsJson).pipe(Effect.orDieWith((error) => new Error(`embedded-model.json does not decode: ${error.message}`)))

/**
 * The embedded model (`MODEL_PROVIDER=embedded`): offline, in process. What the account confirms (`learn`) is kept
 * per wallet and counterparty in memory; the caller hands the confirmed labels again after a restart.
 */
export const makeEmbeddedClassifier = (
  weights: Classification.EmbeddedWeights,
  minConfidence: number
): Effect.Effect<Classification.Classifier["Type"]> =>
  Effect.gen(function*() {
    const model = Classification.loadModel(weights)
    const memory = yield* Ref.make<Classification.CounterpartyMemory>(new Map())
    return {
      name: `${weights.model}/${weights.version}`,
      classify: (features) =>
        Ref.get(memory).pipe(
          Effect.map((learned) => Classification.classifyWith(model, learned, features, minConfidence))
        ),
      learn: (examples) => Ref.update(memory, (learned) => Classification.remember(learned, examples))
    }
  })

export const EmbeddedClassifierLayer = (minConfidence: number): Layer.Layer<Classification.Classifier> =>
  Layer.effect(
    Classification.Classifier,
    Effect.flatMap(shippedWeights, (weights) => makeEmbeddedClassifier(weights, minConfidence))
  )
