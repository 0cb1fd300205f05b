import { describe, expect, it } from "@effect/vitest"
import { decide, guardOutcome } from "@scaledger/workers/webhooks/DeliveryWorker"
import { checkTarget, TargetRefused } from "@scaledger/workers/webhooks/EgressGuard"
import { signatureHeader } from "@scaledger/workers/webhooks/SecretBox"
import { BODY_WAIT_MS, LOGGED_RESPONSE_BYTES, makeSender, parseRetryAfter } from "@scaledger/workers/webhooks/Sender"
import { Delays, parseDelays } from "@scaledger/workers/webhooks/WebhookConfig"
import { ConfigProvider, Effect, Either } from "effect"
import Stripe from "stripe"
import { startReceiver, TEST_CA } from "./Receiver.js"

const config = { maxAttempts: 3, retryDelaysMs: [5_000, 300_000], retryAfterCapMs: 900_000 }
const outcome = (status: number | null, retryAfterMs: number | null = null) => ({
  status,
  error: null,
  response: null,
  retryAfterMs,
  durationMs: 1
})

describe("the retry policy", () => {
  it("2xx delivers; 408, 429, 5xx and no answer retry; 3xx and other 4xx are final", () => {
    for (const status of [200, 201, 202, 204, 299]) {
      expect(decide(outcome(status), 1, 0, config, 0.5)._tag).toBe("Delivered")
    }
    for (const status of [null, 408, 429, 500, 502, 503, 504]) {
      expect(decide(outcome(status), 1, 0, config, 0.5)._tag, String(status)).toBe("Retry")
    }
    for (const status of [301, 302, 307, 400, 401, 403, 404, 410, 422]) {
      expect(decide(outcome(status), 1, 0, config, 0.5)._tag, String(status)).toBe("Failed")
    }
    expect(decide({ ...outcome(null), refused: true }, 1, 0, config, 0.5)._tag).toBe("Failed")
    // The guard at delivery: a name that does not resolve now is a connection error (retried); a forbidden
    // address is final.
    const unresolved = guardOutcome(new TargetRefused({ reason: "unresolvable", message: "gone.example" }))
    expect(unresolved.error).toBe("DNS: gone.example")
    expect(decide(unresolved, 1, 0, config, 0.5)._tag).toBe("Retry")
    expect(decide(unresolved, 3, 0, config, 0.5)._tag).toBe("Failed")
    const forbidden = guardOutcome(new TargetRefused({ reason: "forbidden_address", message: "10.0.0.1" }))
    expect(decide(forbidden, 1, 0, config, 0.5)._tag).toBe("Failed")
    // The third attempt is the last.
    expect(decide(outcome(500), 3, 0, config, 0.5)._tag).toBe("Failed")
  })

  it("waits about 5 s then about 5 min (±20 %), and at least a 429's Retry-After, capped", () => {
    const at = (attempt: number, random: number, retryAfterMs: number | null = null, status = 503) => {
      const result = decide(outcome(status, retryAfterMs), attempt, 1_000_000, config, random)
      return result._tag === "Retry" ? result.at.getTime() - 1_000_000 : -1
    }
    expect(at(1, 0)).toBe(4_000)
    expect(at(1, 0.999999)).toBe(6_000)
    expect(at(2, 0)).toBe(240_000)
    expect(at(2, 0.999999)).toBe(360_000)
    expect(at(1, 0.5, 60_000, 429)).toBe(60_000)
    expect(at(1, 0.5, 1_000, 429)).toBe(5_000)
    expect(at(1, 0.5, 86_400_000, 429)).toBe(900_000)
    expect(parseRetryAfter("120", 0)).toBe(120_000)
    expect(parseRetryAfter(new Date(90_000).toUTCString(), 30_000)).toBe(60_000)
    expect(parseRetryAfter("soon", 0)).toBeNull()
    expect(parseDelays("5s,5m")).toEqual([5_000, 300_000])
    expect(parseDelays("200ms, 1.5s,1h")).toEqual([200, 1_500, 3_600_000])
    // A delivery has 3 attempts: a third wait would never be waited, so the setting is refused, not cut short.
    const delays = (value: string) =>
      Effect.runSync(
        Effect.either(Delays.pipe(Effect.withConfigProvider(ConfigProvider.fromJson({ WEBHOOK_RETRY_DELAYS: value }))))
      )
    expect(delays("5s,5m")).toEqual(Either.right([5_000, 300_000]))
    expect(delays("1s")).toEqual(Either.right([1_000]))
    const third = delays("5s,5m,1h")
    expect(Either.isLeft(third) && String(third.left)).toMatch(/at most 2 durations/)
    expect(parseDelays("5 seconds")).toBeUndefined()
  })

  it("signs <t>.<rawBody> as Stripe's library expects, and nothing else verifies", () => {
    const body = JSON.stringify({ id: "evt_1", type: "alert" })
    const t = Math.floor(Date.now() / 1000)
    const header = signatureHeader("whsec_test", body, t)
    expect(header).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64}$`))
    expect(Stripe.webhooks.signature!.verifyHeader(body, header, "whsec_test", 300)).toBe(true)
    expect(() => Stripe.webhooks.signature!.verifyHeader(`${body} `, header, "whsec_test", 300)).toThrow()
    expect(() =>
      Stripe.webhooks.signature!.verifyHeader(body, signatureHeader("whsec_test", body, t - 301), "whsec_test", 300)
    )
      .toThrow()
  })

  it.live("reads at most 64 KiB of an answer and keeps 2 KiB of it", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startReceiver()),
        (r) => Effect.promise(r.close)
      )
      receiver.answer = { status: 500, body: "x".repeat(1024 * 1024) }
      const sender = makeSender({ ca: TEST_CA })
      const result = yield* sender.send({
        target: { url: new URL(receiver.url("/big")), hostname: "localhost", address: "127.0.0.1", family: 4 },
        body: "{}",
        headers: { "content-type": "application/json" },
        connectTimeoutMs: 5_000,
        totalTimeoutMs: 10_000
      })
      expect(result.status).toBe(500)
      expect(result.response).toHaveLength(LOGGED_RESPONSE_BYTES)
      // The connection goes to the checked address even when the URL names another host.
      receiver.answer = { status: 204 }
      const pinned = yield* sender.send({
        target: {
          url: new URL("https://localhost:1/elsewhere"),
          hostname: "localhost",
          address: "127.0.0.1",
          family: 4
        },
        body: "{}",
        headers: {},
        connectTimeoutMs: 5_000,
        totalTimeoutMs: 10_000
      })
      expect(pinned.status).toBeNull()
      expect(pinned.error).toMatch(/ECONNREFUSED 127\.0\.0\.1:1/)
    }).pipe(Effect.scoped))

  it.live("a name's first address refusing, the next one it was checked with is tried, and no other", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startReceiver()),
        (r) => Effect.promise(r.close)
      )
      // The receiver listens on 127.0.0.1 only; the name resolved to 127.0.0.2 first (as `localhost` may answer
      // ::1 first, or a host its AAAA record while IPv6 does not route): a client tries the next address.
      const checked = yield* checkTarget(receiver.url("/fallback"), {
        allowPrivate: true,
        requireResolution: true,
        resolve: async () => [{ address: "127.0.0.2", family: 4 }, { address: "127.0.0.1", family: 4 }]
      })
      const sender = makeSender({ ca: TEST_CA })
      const result = yield* sender.send({
        target: checked!,
        body: "{}",
        headers: { "content-type": "application/json" },
        connectTimeoutMs: 5_000,
        totalTimeoutMs: 10_000
      })
      expect(result).toMatchObject({ status: 200, error: null })
      expect(receiver.received.map((r) => r.path)).toEqual(["/fallback"])
      // None answering: the error names each address tried.
      const none = yield* sender.send({
        target: {
          ...checked!,
          addresses: [{ address: "127.0.0.2", family: 4 }, { address: "127.0.0.3", family: 4 }]
        },
        body: "{}",
        headers: {},
        connectTimeoutMs: 5_000,
        totalTimeoutMs: 10_000
      })
      expect(none.status).toBeNull()
      expect(none.error).toMatch(/^connect ECONNREFUSED 127\.0\.0\.2:\d+; connect ECONNREFUSED 127\.0\.0\.3:\d+$/)
    }).pipe(Effect.scoped))

  it.live("an answer whose body never ends is decided by its status, without waiting out the time-out", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startReceiver()),
        (r) => Effect.promise(r.close)
      )
      const sender = makeSender({ ca: TEST_CA })
      const send = () =>
        sender.send({
          target: { url: new URL(receiver.url("/hang")), hostname: "localhost", address: "127.0.0.1", family: 4 },
          body: "{}",
          headers: { "content-type": "application/json" },
          connectTimeoutMs: 5_000,
          totalTimeoutMs: 10_000
        })
      receiver.answer = { status: 200, headers: { "content-length": "1000" }, body: "stored", neverEnds: true }
      const hanging = yield* send()
      expect(hanging).toMatchObject({ status: 200, error: null, response: "stored" })
      expect(hanging.durationMs).toBeLessThan(BODY_WAIT_MS + 2_000)
      expect(decide(hanging, 1, 0, config, 0.5)._tag).toBe("Delivered")
      receiver.answer = { status: 503, headers: { "retry-after": "7" }, neverEnds: true }
      const busy = yield* send()
      expect(busy).toMatchObject({ status: 503, error: "HTTP 503", response: null, retryAfterMs: 7_000 })
      expect(busy.durationMs).toBeLessThan(BODY_WAIT_MS + 2_000)
    }).pipe(Effect.scoped))
})
