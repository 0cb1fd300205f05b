import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Classification from "@scaledger/domain/classification/index"
import { type ConfigError, Effect, Layer, Option } from "effect"
import { type ClassifierSettings, ClassifierSettingsFromEnv } from "./ClassifierConfig.js"
import { EmbeddedClassifierLayer } from "./EmbeddedClassifier.js"

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
      // `@effect/ai-openai`'s generated client is about 30 MB of heap: it is loaded only when this provider is chosen.
      return Layer.unwrapEffect(
        Effect.map(
          Effect.promise(() => import("./OpenAiClassifier.js")),
          (module) => module.OpenAiClassifierLayer(settings)
        )
      )
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
