import { Config, ConfigError, Duration, Effect, Either, Option, type Redacted } from "effect"

/** The classifier model's settings (docs/CLASSIFICATION.md "Choosing a provider"). */
export type ClassifierSettings =
  | { readonly provider: "none" }
  | { readonly provider: "embedded"; readonly minConfidence: number }
  | {
    readonly provider: "openai"
    readonly minConfidence: number
    /** Base URL of the OpenAI-compatible API, up to and including `/v1`. */
    readonly url: string
    readonly model: string
    readonly apiKey: Option.Option<Redacted.Redacted>
    /** The whole budget of one classification, retries included. */
    readonly timeout: Duration.Duration
    /** Further attempts after a transient failure (transport error, 408, 429, 5xx, attempt time-out). */
    readonly retries: number
    /** Requests in flight to the endpoint at once; others wait their turn (the wait is not part of the budget). */
    readonly concurrency: number
  }

const invalid = (name: string, message: string) => Either.left(ConfigError.InvalidData([name], message))

const MinConfidence = Config.number("MODEL_MIN_CONFIDENCE").pipe(
  Config.withDefault(0.5),
  Config.mapOrFail((x) =>
    x >= 0 && x <= 1 ? Either.right(x) : invalid("MODEL_MIN_CONFIDENCE", `expected a number from 0 to 1, got ${x}`)
  )
)

const Url = Config.string("MODEL_URL").pipe(
  Config.withDefault("https://api.openai.com/v1"),
  Config.mapOrFail((text) => {
    try {
      const url = new URL(text)
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme")
      return Either.right(text.replace(/\/+$/, ""))
    } catch {
      return invalid("MODEL_URL", `expected an http(s) URL such as https://api.openai.com/v1, got "${text}"`)
    }
  })
)

const Timeout = Config.string("MODEL_TIMEOUT").pipe(
  Config.withDefault("20 seconds"),
  Config.mapOrFail((text) => {
    const short = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text.trim())
    const duration = short !== null
      ? Option.some(Duration.millis(Number(short[1]) * { ms: 1, s: 1_000, m: 60_000 }[short[2] as "ms" | "s" | "m"]))
      : Duration.decodeUnknown(text)
    return Option.isSome(duration) && Duration.toMillis(duration.value) > 0
      ? Either.right(duration.value)
      : invalid("MODEL_TIMEOUT", `expected a positive duration such as "20s", "1500ms" or "20 seconds", got "${text}"`)
  })
)

const Retries = Config.integer("MODEL_RETRIES").pipe(
  Config.withDefault(2),
  Config.mapOrFail((n) => n >= 0 && n <= 5 ? Either.right(n) : invalid("MODEL_RETRIES", `expected 0 to 5, got ${n}`))
)

const Concurrency = Config.integer("MODEL_CONCURRENCY").pipe(
  Config.withDefault(4),
  Config.mapOrFail((n) =>
    n >= 1 && n <= 64 ? Either.right(n) : invalid("MODEL_CONCURRENCY", `expected 1 to 64, got ${n}`)
  )
)

const Model = Config.string("MODEL_NAME").pipe(
  Config.mapOrFail((name) =>
    name.trim().length > 0 ? Either.right(name.trim()) : invalid("MODEL_NAME", "must not be empty")
  )
)

const Provider = Config.literal("embedded", "openai", "none")("MODEL_PROVIDER").pipe(
  Config.withDefault("embedded" as const)
)

/** `MODEL_PROVIDER` (`embedded` by default, `openai`, `none`) and the settings that provider reads. */
export const ClassifierSettingsFromEnv: Effect.Effect<ClassifierSettings, ConfigError.ConfigError> = Effect.gen(
  function*() {
    const provider = yield* Provider
    switch (provider) {
      case "none":
        return { provider }
      case "embedded":
        return { provider, minConfidence: yield* MinConfidence }
      case "openai":
        return {
          provider,
          ...(yield* Config.all({
            minConfidence: MinConfidence,
            url: Url,
            model: Model,
            apiKey: Config.option(Config.redacted("MODEL_API_KEY")),
            timeout: Timeout,
            retries: Retries,
            concurrency: Concurrency
          }))
        }
    }
  }
)
