import { FetchHttpClient, type HttpClient } from "@effect/platform"
import * as Classification from "@scaledger/domain/classification/index"
import { type ConfigError, Effect, Layer, Option } from "effect"
import { type ClassifierSettings, ClassifierSettingsFromEnv } from "./ClassifierConfig.js"
import { EmbeddedClassifierLayer } from "./EmbeddedClassifier.js"
import { OpenAiClassifierLayer } from "./OpenAiClassifier.js"

/** `MODEL_PROVIDER=none`: the rules' leftovers stay `unknown`, needing review. */
export const NoClassifier: Layer.Layer<Classification.Classifier> = Layer.succeed(Classification.Classifier, {
  name: "none",
  classify: () => Effect.succeed(Option.none()),
  learn: () => Effect.void
})

export const classifierFor = (
  settings: ClassifierSettings
): Layer.Layer<Classification.Classifier, never, HttpClient.HttpClient> => {
  switch (settings.provider) {
    case "none":
      return NoClassifier
    case "embedded":
      return EmbeddedClassifierLayer(settings.minConfidence)
    case "openai":
      return OpenAiClassifierLayer(settings)
  }
}

/** The classifier `MODEL_PROVIDER` names (docs/CLASSIFICATION.md); a bad setting fails at start with its name. */
export const ClassifierFromConfig: Layer.Layer<
  Classification.Classifier,
  ConfigError.ConfigError,
  HttpClient.HttpClient
> = Layer.unwrapEffect(
  ClassifierSettingsFromEnv.pipe(
    Effect.tap((settings) =>
      Effect.logInfo(
        `classifier: ${settings.provider}${
          settings.provider === "openai" ? ` (${settings.model} at ${settings.url})` : ""
        }`
      )
    ),
    Effect.map(classifierFor)
  )
)

/** `ClassifierFromConfig` with the fetch-based HTTP client (used by the openai provider only). */
export const ClassifierFromConfigLive: Layer.Layer<Classification.Classifier, ConfigError.ConfigError> =
  ClassifierFromConfig.pipe(Layer.provide(FetchHttpClient.layer))
