import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Classification from "@scaledger/domain/classification/index"
import { MovementType, Relationship } from "@scaledger/domain/ledger/LedgerInput"
import { Duration, Effect, JSONSchema, Layer, Option, Schedule, Schema } from "effect"
import type { ClassifierSettings } from "./ClassifierConfig.js"

type OpenAiSettings = Extract<ClassifierSettings, { readonly provider: "openai" }>

/** What the remote model must answer (Chat Completions structured output); the label's `model` is ours to fill. */
export const RemoteAnswer = Schema.Struct({
  type: MovementType,
  relationship: Schema.NullOr(Relationship),
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  rationale: Schema.String.pipe(Schema.maxLength(2_000))
})

const answerJsonSchema = (() => {
  const { $schema: _, ...schema } = JSONSchema.make(RemoteAnswer) as unknown as Record<string, unknown>
  return schema
})()

const SYSTEM_PROMPT = [
  "You classify one movement of a tokenized-stock position between the user's own wallet and a smart contract that",
  "is not on a known contract list. Answer with the movement type, the relationship of the counterparty, your",
  "confidence from 0 to 1 and a one-sentence rationale. Types: swap (the stock token is exchanged for another",
  "asset through a DEX or aggregator), collateral_post / collateral_withdraw (deposited into or taken back from a",
  "lending market or vault, still owned), bridge.out / bridge.in (moved to or from another chain, still owned),",
  "transfer.out / transfer.in (paid to or received from someone else, e.g. another person's smart-contract",
  "wallet), transfer.self (another wallet of the same person), unknown (cannot tell). Relationships: contract (a",
  "protocol), self (the user's own, including bridges), counterparty (another person), exchange (a centralized",
  "exchange), or null. Method selectors are the first four bytes of the transaction input; tokenFlows lists every",
  "stock-token flow of the user's wallets in the same transaction."
].join(" ")

/**
 * Some OpenAI-compatible servers (Ollama, llama.cpp) leave out `choices[].logprobs` and `message.refusal`, which the
 * generated Chat Completions schema requires; they are filled in as `null` before decoding.
 */
const fillCompatibleDefaults = (json: unknown): unknown => {
  if (typeof json !== "object" || json === null || !Array.isArray((json as { choices?: unknown }).choices)) return json
  const body = json as { choices: Array<unknown> }
  return {
    ...body,
    choices: body.choices.map((choice) => {
      if (typeof choice !== "object" || choice === null) return choice
      const c = choice as { logprobs?: unknown; message?: unknown }
      const message = typeof c.message === "object" && c.message !== null
        ? { refusal: null, ...(c.message as object) }
        : c.message
      return { logprobs: null, ...c, message }
    })
  }
}

const compatibleResponses = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(
    client,
    (response) =>
      Effect.flatMap(response, (res) =>
        res.status < 200 || res.status >= 300
          ? Effect.succeed(res)
          : res.text.pipe(
            Effect.map((text) => {
              let body = text
              try {
                body = JSON.stringify(fillCompatibleDefaults(JSON.parse(text)))
              } catch {
                // not JSON: the decoder reports it
              }
              return HttpClientResponse.fromWeb(
                res.request,
                new Response(body, { status: res.status, headers: res.headers as Record<string, string> })
              )
            })
          ))
  )

const isTransient = (error: unknown): boolean =>
  HttpClientError.isHttpClientError(error) &&
  (error._tag === "RequestError" ||
    (error.reason === "StatusCode" &&
      (error.response.status === 408 || error.response.status === 429 || error.response.status >= 500)))

/**
 * Any OpenAI-compatible endpoint through `@effect/ai-openai`'s client (`MODEL_PROVIDER=openai`), speaking Chat
 * Completions with `response_format: json_schema`. The whole call, retries included, is bounded by `MODEL_TIMEOUT`;
 * every failure (unreachable, time-out, HTTP error, an answer that does not decode) is `ClassifierUnavailable`.
 */
export const makeOpenAiClassifier = (settings: OpenAiSettings) =>
  Effect.gen(function*() {
    const openai = yield* OpenAiClient.make({
      apiUrl: settings.url,
      apiKey: Option.getOrUndefined(settings.apiKey),
      transformClient: compatibleResponses
    })
    const unavailable = (reason: string) => new Classification.ClassifierUnavailable({ model: settings.model, reason })
    const budget = Duration.toMillis(settings.timeout)
    const decodeAnswer = Schema.decodeUnknown(Schema.parseJson(RemoteAnswer))
    const permits = yield* Effect.makeSemaphore(settings.concurrency)

    const ask = ({ account: _account, ...features }: Classification.MovementFeatures) =>
      openai.client.createChatCompletion({
        model: settings.model,
        messages: [
          { role: "system", content: SYSTEM_PROMPT },
          { role: "user", content: JSON.stringify(features) }
        ],
        response_format: {
          type: "json_schema",
          json_schema: { name: "movement_label", strict: true, schema: answerJsonSchema }
        }
      }).pipe(
        Effect.retry({
          schedule: Schedule.exponential(Duration.millis(Math.min(250, budget / 8))).pipe(Schedule.jittered),
          times: settings.retries,
          while: isTransient
        })
      )

    const classify = (
      features: Classification.MovementFeatures
    ): Effect.Effect<Option.Option<Classification.ModelLabel>, Classification.ClassifierUnavailable> =>
      ask(features).pipe(
        Effect.mapError((error) =>
          error._tag === "ParseError" || (error._tag === "ResponseError" && error.reason !== "StatusCode")
            ? unavailable("the endpoint's answer is not a Chat Completions response")
            : unavailable(
              error.reason === "StatusCode"
                ? `the endpoint answered HTTP ${error.response.status}`
                : `the endpoint is unreachable (${error.reason})`
            )
        ),
        Effect.flatMap((response) => {
          const choice = response.choices[0]
          const content = choice?.message.content ?? null
          if (content === null) {
            return Effect.fail(
              unavailable(choice?.message.refusal ? "the model refused to answer" : "the answer has no content")
            )
          }
          return decodeAnswer(content).pipe(
            Effect.mapError(() => unavailable("the answer does not match the label schema")),
            // A type of the other direction (a `bridge.in` for tokens leaving) is no answer, as from the embedded model.
            Effect.map((answer): Option.Option<Classification.ModelLabel> =>
              answer.type === "unknown" || answer.confidence < settings.minConfidence ||
                Classification.typeFor(Classification.familyOf(answer.type), features.direction) !== answer.type
                ? Option.none()
                : Option.some({ ...answer, model: response.model.length > 0 ? response.model : settings.model })
            )
          )
        }),
        Effect.timeoutFail({
          duration: settings.timeout,
          onTimeout: () => unavailable(`no answer within ${Duration.format(settings.timeout)}`)
        }),
        Effect.catchAllDefect((defect) => Effect.fail(unavailable(`unexpected failure: ${String(defect)}`))),
        permits.withPermits(1),
        Effect.withSpan("Classifier.openai.classify")
      )

    return {
      name: `openai:${settings.model}`,
      concurrency: settings.concurrency,
      classify,
      learn: () => Effect.void
    } satisfies Classification.Classifier["Type"]
  })

export const OpenAiClassifierLayer = (
  settings: OpenAiSettings
): Layer.Layer<Classification.Classifier, never, HttpClient.HttpClient> =>
  Layer.scoped(Classification.Classifier, makeOpenAiClassifier(settings))
