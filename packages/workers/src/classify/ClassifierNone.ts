import { Classifier } from "@scaledger/domain/classification/ClassifierPort"
import { Effect, Layer } from "effect"

/** `MODEL_PROVIDER=none`: no model; what the rules cannot place stays `unknown`, needing review. */
export const ClassifierNone = Layer.succeed(Classifier, {
  name: "none",
  classify: () => Effect.succeedNone,
  learn: () => Effect.void
})
