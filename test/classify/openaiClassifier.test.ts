import { FetchHttpClient } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Classification from "@scaledger/domain/classification/index"
import { ClassifierFromConfig } from "@scaledger/workers/classify/ClassifierProviders"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { type Reply, startChatServer } from "./ChatCompletionsServer.js"

const features: Classification.MovementFeatures = {
  account: "acct_test",
  chainId: 4663,
  txHash: "0x" + "ab".repeat(32),
  direction: "out",
  token: "AAPL",
  amount: "10.5",
  wallet: "0x1111111111111111111111111111111111111111",
  counterparty: "0x2222222222222222222222222222222222222222",
  counterpartyIsContract: true,
  txFrom: "0x1111111111111111111111111111111111111111",
  txTo: "0x3333333333333333333333333333333333333333",
  methodSelector: "0x38ed1739",
  tokenFlows: [{ token: "AAPL", direction: "out", amount: "10.5" }, { token: "TSLA", direction: "in", amount: "2" }],
  priorIn: 0,
  priorOut: 1,
  confirmedRelationship: null
}

const good = JSON.stringify({
  type: "swap",
  relationship: "contract",
  confidence: 0.86,
  rationale: "swapExactTokensForTokens with one token out and another in"
})

let next: (n: number) => Reply = () => ({ content: good })
let server: Awaited<ReturnType<typeof startChatServer>>
beforeAll(async () => {
  server = await startChatServer((_, n) => next(n))
})
afterAll(() => server.close())

const KEY = "sk-test-0123456789abcdef"
const layerWith = (env: Record<string, string>) =>
  ClassifierFromConfig.pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
      new Map(Object.entries({
        MODEL_PROVIDER: "openai",
        MODEL_URL: server.url,
        MODEL_NAME: "gpt-4o-mini",
        MODEL_API_KEY: KEY,
        MODEL_TIMEOUT: "2s",
        MODEL_RETRIES: "2",
        ...env
      }))
    )))
  )
const classify = (env: Record<string, string> = {}) =>
  Effect.flatMap(Classification.Classifier, (c) => c.classify(features)).pipe(Effect.provide(layerWith(env)))

const expectUnavailable = <A>(exit: Exit.Exit<A, unknown>, reason: RegExp) => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isFailure(exit)) {
    const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    expect(error, String(exit.cause)).toBeInstanceOf(Classification.ClassifierUnavailable)
    expect((error as Classification.ClassifierUnavailable).reason).toMatch(reason)
  }
}

describe("openai provider against a local Chat Completions server", () => {
  it.live("a good answer becomes the label; the request carries the key, the model and a strict JSON schema", () =>
    Effect.gen(function*() {
      next = () => ({ content: good })
      const before = server.received.length
      const label = Option.getOrThrow(yield* classify())
      expect(label).toEqual({
        type: "swap",
        relationship: "contract",
        confidence: 0.86,
        model: "gpt-4o-mini-2024-07-18",
        rationale: "swapExactTokensForTokens with one token out and another in"
      })
      const request = server.received[before]
      expect(request.path).toBe("/v1/chat/completions")
      expect(request.authorization).toBe(`Bearer ${KEY}`)
      expect(request.body.model).toBe("gpt-4o-mini")
      expect(request.body.response_format?.type).toBe("json_schema")
      expect(request.body.response_format?.json_schema?.strict).toBe(true)
      expect(JSON.stringify(request.body.response_format?.json_schema?.schema)).toContain("collateral_post")
      // Everything but the account's id, which is the service's own business.
      const { account: _account, ...sent } = features
      expect(JSON.parse(request.body.messages[1].content)).toEqual(sent)
    }))

  it.live("no key configured: no Authorization header (local endpoints)", () =>
    Effect.gen(function*() {
      next = () => ({ content: good })
      const before = server.received.length
      const exit = yield* Effect.exit(
        Effect.flatMap(Classification.Classifier, (c) => c.classify(features)).pipe(
          Effect.provide(
            ClassifierFromConfig.pipe(
              Layer.provide(FetchHttpClient.layer),
              Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
                new Map([["MODEL_PROVIDER", "openai"], ["MODEL_URL", server.url], ["MODEL_NAME", "llama3.1"]])
              )))
            )
          )
        )
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(server.received[before].authorization).toBeUndefined()
    }))

  it.live("a compatible server that omits logprobs and refusal (Ollama, llama.cpp) is understood", () =>
    Effect.gen(function*() {
      next = () => ({ content: good, compat: true, model: "llama3.1:8b" })
      const label = Option.getOrThrow(yield* classify())
      expect(label).toMatchObject({ type: "swap", model: "llama3.1:8b" })
    }))

  it.live("malformed answers are ClassifierUnavailable, never a defect, and are not retried", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<[Reply, RegExp]> = [
        [{ content: "Sure! This looks like a swap." }, /label schema/],
        [
          { content: JSON.stringify({ type: "trade", relationship: "contract", confidence: 0.9, rationale: "x" }) },
          /label schema/
        ],
        [
          { content: JSON.stringify({ type: "swap", relationship: "contract", confidence: 7, rationale: "x" }) },
          /label schema/
        ],
        [{ content: JSON.stringify({ type: "swap", relationship: "contract" }) }, /label schema/],
        [{ content: null, refusal: "I can't help with that." }, /refused/],
        [{ status: 200, raw: "<html>gateway</html>" }, /not a Chat Completions response/],
        [{ status: 200, raw: JSON.stringify({ choices: "nope" }) }, /not a Chat Completions response/],
        [{ status: 400, raw: JSON.stringify({ error: { message: "bad schema" } }) }, /HTTP 400/],
        [{ status: 401, raw: JSON.stringify({ error: { message: "invalid api key" } }) }, /HTTP 401/]
      ]
      for (const [reply, reason] of cases) {
        next = () => reply
        const before = server.received.length
        expectUnavailable(yield* Effect.exit(classify()), reason)
        expect(server.received.length - before).toBe(1)
      }
    }))

  it.live("below the confidence floor, or `unknown`: None", () =>
    Effect.gen(function*() {
      next = () => ({
        content: JSON.stringify({ type: "swap", relationship: "contract", confidence: 0.3, rationale: "?" })
      })
      expect(Option.isNone(yield* classify())).toBe(true)
      next = () => ({
        content: JSON.stringify({ type: "unknown", relationship: null, confidence: 0.9, rationale: "?" })
      })
      expect(Option.isNone(yield* classify())).toBe(true)
    }))

  it.live("a type of the other direction (tokens leaving called `bridge.in`, `mint`, …): None, as from the embedded model", () =>
    Effect.gen(function*() {
      for (const type of ["transfer.in", "collateral_withdraw", "bridge.in", "mint"]) {
        next = () => ({ content: JSON.stringify({ type, relationship: "contract", confidence: 0.9, rationale: "?" }) })
        expect(Option.isNone(yield* classify()), type).toBe(true)
      }
      next = () => ({
        content: JSON.stringify({ type: "collateral_post", relationship: "contract", confidence: 0.9, rationale: "!" })
      })
      expect(Option.getOrThrow(yield* classify())).toMatchObject({ type: "collateral_post" })
    }))

  it.live("a time-out is ClassifierUnavailable within MODEL_TIMEOUT", () =>
    Effect.gen(function*() {
      next = () => ({ hang: true })
      const start = Date.now()
      const exit = yield* Effect.exit(classify({ MODEL_TIMEOUT: "400ms" }))
      const took = Date.now() - start
      expectUnavailable(exit, /no answer within/)
      expect(took).toBeGreaterThanOrEqual(350)
      expect(took).toBeLessThan(1_500)
    }))

  it.live("transient failures (5xx, 429) are retried, a bounded number of times", () =>
    Effect.gen(function*() {
      let calls = 0
      next = () => {
        calls++
        return calls === 1 ? { status: 503, raw: "{}" } : calls === 2 ? { status: 429, raw: "{}" } : { content: good }
      }
      let before = server.received.length
      const label = yield* classify()
      expect(Option.isSome(label)).toBe(true)
      expect(server.received.length - before).toBe(3)

      next = () => ({ status: 500, raw: JSON.stringify({ error: { message: "overloaded" } }) })
      before = server.received.length
      expectUnavailable(yield* Effect.exit(classify({ MODEL_RETRIES: "1" })), /HTTP 500/)
      expect(server.received.length - before).toBe(2)
    }))

  it.live("at most MODEL_CONCURRENCY requests in flight; waiting for a turn does not eat the time budget", () =>
    Effect.gen(function*() {
      next = () => ({ content: good, delayMs: 150 })
      server.flight.max = 0
      const labels = yield* Effect.flatMap(
        Classification.Classifier,
        (c) => Effect.all(Array.from({ length: 6 }, () => c.classify(features)), { concurrency: "unbounded" })
      ).pipe(Effect.provide(layerWith({ MODEL_CONCURRENCY: "2", MODEL_TIMEOUT: "400ms" })))
      expect(labels.every(Option.isSome)).toBe(true)
      expect(server.flight.max).toBe(2)
    }))

  it.live("an unreachable endpoint is ClassifierUnavailable", () =>
    Effect.gen(function*() {
      expectUnavailable(
        yield* Effect.exit(classify({ MODEL_URL: "http://127.0.0.1:9/v1", MODEL_RETRIES: "0" })),
        /unreachable/
      )
    }))
})
