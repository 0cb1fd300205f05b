import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Classification from "@scaledger/domain/classification/index"
import { ClassifierSettingsFromEnv } from "@scaledger/workers/classify/ClassifierConfig"
import { ClassifierFromConfig } from "@scaledger/workers/classify/ClassifierProviders"
import { ConfigProvider, Duration, Effect, Exit, Layer, Option, Redacted } from "effect"

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const features: Classification.MovementFeatures = {
  account: "acct_test",
  chainId: 4663,
  txHash: "0x" + "ab".repeat(32),
  direction: "in",
  token: "AAPL",
  amount: "1",
  wallet: "0x1111111111111111111111111111111111111111",
  counterparty: "0x2222222222222222222222222222222222222222",
  counterpartyIsContract: true,
  txFrom: "0x4444444444444444444444444444444444444444",
  txTo: "0x2222222222222222222222222222222222222222",
  methodSelector: "0x2e567b36",
  tokenFlows: [{ token: "AAPL", direction: "in", amount: "1" }],
  priorIn: 0,
  priorOut: 1,
  confirmedRelationship: null
}

const classifyWith = (env: Record<string, string>) =>
  Effect.flatMap(
    Classification.Classifier,
    (c) => Effect.map(c.classify(features), (label) => ({ name: c.name, label }))
  )
    .pipe(
      Effect.provide(ClassifierFromConfig.pipe(Layer.provide(FetchHttpClient.layer))),
      withEnv(env)
    )

const failureOf = (env: Record<string, string>) =>
  Effect.map(Effect.exit(withEnv(env)(ClassifierSettingsFromEnv)), (exit) => {
    expect(Exit.isFailure(exit)).toBe(true)
    return Exit.isFailure(exit) ? String(exit.cause) : ""
  })

describe("MODEL_PROVIDER and its settings", () => {
  it.effect("embedded by default: a real label from the shipped model", () =>
    Effect.gen(function*() {
      const { label, name } = yield* classifyWith({})
      expect(name).toBe("scaledger-embedded/1.0.0")
      expect(Option.getOrThrow(label)).toMatchObject({ type: "bridge.in", relationship: "self" })
    }))

  it.effect("none: always None", () =>
    Effect.gen(function*() {
      const { label, name } = yield* classifyWith({ MODEL_PROVIDER: "none" })
      expect(name).toBe("none")
      expect(Option.isNone(label)).toBe(true)
    }))

  it.effect("the embedded floor is MODEL_MIN_CONFIDENCE", () =>
    Effect.gen(function*() {
      const { label } = yield* classifyWith({ MODEL_MIN_CONFIDENCE: "1" })
      expect(Option.isNone(label)).toBe(true)
    }))

  it.effect("openai settings: defaults, short and long durations, the key redacted", () =>
    Effect.gen(function*() {
      const settings = yield* withEnv({ MODEL_PROVIDER: "openai", MODEL_NAME: "gpt-4o-mini", MODEL_API_KEY: "sk-x" })(
        ClassifierSettingsFromEnv
      )
      expect(settings.provider).toBe("openai")
      if (settings.provider !== "openai") return
      expect(settings.url).toBe("https://api.openai.com/v1")
      expect(Duration.toMillis(settings.timeout)).toBe(20_000)
      expect(settings.retries).toBe(2)
      expect(settings.concurrency).toBe(4)
      expect(settings.minConfidence).toBe(0.5)
      expect(Redacted.value(Option.getOrThrow(settings.apiKey))).toBe("sk-x")
      expect(String(Option.getOrThrow(settings.apiKey))).not.toContain("sk-x")
      const other = yield* withEnv({
        MODEL_PROVIDER: "openai",
        MODEL_NAME: "m",
        MODEL_URL: "http://localhost:11434/v1/",
        MODEL_TIMEOUT: "1500ms"
      })(ClassifierSettingsFromEnv)
      if (other.provider !== "openai") return
      expect(other.url).toBe("http://localhost:11434/v1")
      expect(Duration.toMillis(other.timeout)).toBe(1_500)
      expect(Option.isNone(other.apiKey)).toBe(true)
      const long = yield* withEnv({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_TIMEOUT: "3 seconds" })(
        ClassifierSettingsFromEnv
      )
      if (long.provider === "openai") expect(Duration.toMillis(long.timeout)).toBe(3_000)
    }))

  it.effect("bad values fail with the setting's name and what is expected", () =>
    Effect.gen(function*() {
      expect(yield* failureOf({ MODEL_PROVIDER: "gpt" })).toMatch(/MODEL_PROVIDER/)
      expect(yield* failureOf({ MODEL_MIN_CONFIDENCE: "1.5" })).toMatch(/MODEL_MIN_CONFIDENCE.*0 to 1/s)
      expect(yield* failureOf({ MODEL_MIN_CONFIDENCE: "high" })).toMatch(/MODEL_MIN_CONFIDENCE/)
      expect(yield* failureOf({ MODEL_PROVIDER: "openai" })).toMatch(/MODEL_NAME/)
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "  " })).toMatch(/MODEL_NAME.*empty/s)
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_URL: "ftp://x" })).toMatch(
        /MODEL_URL.*http\(s\) URL/s
      )
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_URL: "not a url" })).toMatch(
        /MODEL_URL/
      )
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_TIMEOUT: "soon" })).toMatch(
        /MODEL_TIMEOUT.*positive duration/s
      )
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_TIMEOUT: "0s" })).toMatch(
        /MODEL_TIMEOUT/
      )
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_RETRIES: "9" })).toMatch(
        /MODEL_RETRIES.*0 to 5/s
      )
      expect(yield* failureOf({ MODEL_PROVIDER: "openai", MODEL_NAME: "m", MODEL_CONCURRENCY: "0" })).toMatch(
        /MODEL_CONCURRENCY.*1 to 64/s
      )
      // The embedded provider does not read the openai settings.
      const embedded = yield* withEnv({ MODEL_PROVIDER: "embedded", MODEL_TIMEOUT: "soon" })(ClassifierSettingsFromEnv)
      expect(embedded.provider).toBe("embedded")
    }))
})
