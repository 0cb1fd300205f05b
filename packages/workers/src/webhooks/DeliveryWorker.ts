import type { AttemptResult, ClaimedDelivery } from "@scaledger/db/alerts/Webhooks"
import { PER_ENDPOINT_IN_FLIGHT, WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import { newId } from "@scaledger/db/Ids"
import { retryOnConflict } from "@scaledger/db/SqlErrors"
import { Clock, Data, Duration, Effect, Fiber, FiberSet, Layer, Queue, Random } from "effect"
import { checkTarget, TargetRefused } from "./EgressGuard.js"
import { signatureHeader, WebhookSecretBox } from "./SecretBox.js"
import { type SendOutcome, WebhookSender } from "./Sender.js"
import { WebhookConfig, type WebhookConfigShape } from "./WebhookConfig.js"

/** 2xx only: a 3xx is a failure and is never followed. */
export const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300

/** Worth another attempt: no answer (connection error, time-out), 408, 429 and 5xx. Other 4xx and 3xx are final. */
export const isRetryable = (outcome: { readonly status: number | null; readonly refused?: boolean }) =>
  outcome.refused !== true &&
  (outcome.status === null || outcome.status === 408 || outcome.status === 429 || outcome.status >= 500)

/**
 * The retry policy: what attempt `attempt` (1-based) leads to. A retry waits the configured delay with ±20 %
 * jitter (`random` in [0, 1)); after a 429 at least its `Retry-After`, capped.
 */
export const decide = (
  outcome: SendOutcome & { readonly refused?: boolean },
  attempt: number,
  now: number,
  config: Pick<WebhookConfigShape, "maxAttempts" | "retryDelaysMs" | "retryAfterCapMs">,
  random: number
): AttemptResult => {
  if (isSuccess(outcome.status)) return { _tag: "Delivered" }
  if (!isRetryable(outcome) || attempt >= config.maxAttempts) return { _tag: "Failed" }
  const base = config.retryDelaysMs[Math.min(attempt - 1, config.retryDelaysMs.length - 1)] ?? 0
  let wait = base * (0.8 + 0.4 * random)
  if (outcome.retryAfterMs !== null) wait = Math.max(wait, Math.min(outcome.retryAfterMs, config.retryAfterCapMs))
  return { _tag: "Retry", at: new Date(now + Math.round(wait)) }
}

const USER_AGENT = "Scaledger-Webhooks/1"

/**
 * An attempt the egress guard stopped before sending. A name that does not resolve now (or a resolver that failed)
 * is a connection error, retried like one; a forbidden address or a URL the guard refuses is final.
 */
export const guardOutcome = (refusal: TargetRefused): SendOutcome & { readonly refused: boolean } =>
  refusal.reason === "unresolvable"
    ? {
      status: null,
      error: `DNS: ${refusal.message}`,
      response: null,
      retryAfterMs: null,
      durationMs: 0,
      refused: false
    }
    : {
      status: null,
      error: `refused by the egress guard: ${refusal.message}`,
      response: null,
      retryAfterMs: null,
      durationMs: 0,
      refused: true
    }

/** Guards, signs afresh and sends one attempt: what the receiver (or the guard) answered. */
const send = (delivery: ClaimedDelivery, startedAt: number) =>
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const box = yield* WebhookSecretBox
    const sender = yield* WebhookSender
    // The guard runs again at every delivery: DNS may have changed since the endpoint was created.
    // Resolving the name counts against the connect time-out's length too: the attempt stays within its lease.
    const guarded = yield* checkTarget(delivery.url, {
      allowPrivate: config.allowPrivateTargets,
      requireResolution: true,
      resolveTimeoutMs: config.connectTimeoutMs
    }).pipe(Effect.either)
    if (guarded._tag === "Left") return guardOutcome(guarded.left)
    // Not given at delivery (`requireResolution`): said for the type's sake, as the guard would say it.
    if (guarded.right === undefined) {
      return guardOutcome(new TargetRefused({ reason: "unresolvable", message: "The host does not resolve." }))
    }
    const secret = yield* Effect.try({
      try: () => box.open(delivery.secretEnc),
      catch: () => new SecretUnreadable({ endpointId: delivery.endpointId })
    })
    const t = Math.floor(startedAt / 1000)
    const outcome: SendOutcome & { refused?: boolean } = yield* sender.send({
      target: guarded.right,
      body: delivery.body,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "scaledger-event-id": delivery.eventId,
        "scaledger-signature": signatureHeader(secret, delivery.body, t)
      },
      connectTimeoutMs: config.connectTimeoutMs,
      totalTimeoutMs: config.totalTimeoutMs
    })
    return outcome
  })

/**
 * One attempt of one claimed delivery: guard, sign afresh, send, record. Interrupted while it waits for the
 * receiver (a shutdown), it gives back its lease, so the delivery is due again at once, not after the lease; once
 * answered, it is recorded whatever happens.
 */
export const attemptDelivery = (owner: string, delivery: ClaimedDelivery) =>
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const repo = yield* WebhooksRepo
    const attempt = delivery.attempts + 1
    const startedAt = yield* Clock.currentTimeMillis
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const outcome = yield* restore(send(delivery, startedAt)).pipe(
          Effect.onInterrupt(() => Effect.ignore(repo.releaseLease(owner, delivery.id)))
        )
        const now = yield* Clock.currentTimeMillis
        const result = decide(outcome, attempt, now, config, yield* Random.next)
        const recorded = yield* retryOnConflict(repo.recordAttempt(owner, {
          delivery,
          attempt,
          outcome: isSuccess(outcome.status) ? "success" : "failure",
          status: outcome.status,
          error: outcome.error === null ? null : outcome.error.slice(0, 2048),
          response: outcome.response,
          durationMs: outcome.durationMs,
          at: new Date(now),
          result
        }))
        if (recorded.disabled) {
          yield* Effect.logWarning(
            `webhooks: endpoint ${delivery.endpointId} disabled after ${10} consecutive failed deliveries`
          )
        }
        return { result, outcome }
      })
    )
  })

/**
 * The endpoint's signing secret does not open under this process's `WEBHOOK_SECRET_KEY`: it was sealed by a process
 * with another key. Nothing is sent or recorded (the receiver is not at fault, so it must not count towards
 * disabling); the delivery stays due, for a process with the right key, once its lease runs out.
 */
export class SecretUnreadable extends Data.TaggedError("SecretUnreadable")<{ readonly endpointId: string }> {}

/**
 * The delivery worker: claims due deliveries (`FOR UPDATE SKIP LOCKED`, leased so a dead worker's attempt is due
 * again after the lease) and attempts them, `WEBHOOK_CONCURRENCY` at once. A slot is refilled as soon as its attempt
 * ends, and a claim takes at most `PER_ENDPOINT_IN_FLIGHT` attempts per endpoint and a quarter of the slots per
 * account, so slow receivers never hold up the others. State lives in the outbox table only: a restart resumes with
 * whatever is due.
 */
export const runDeliveryWorker = (attempts: FiberSet.FiberSet) =>
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const repo = yield* WebhooksRepo
    const owner = newId("whw")
    const concurrency = Math.max(1, config.concurrency)
    const slots = yield* Queue.bounded<true>(concurrency)
    yield* Queue.offerAll(slots, Array.from({ length: concurrency }, () => true as const))
    /** Set when an attempt ends: a claim that found nothing it may take waits for it (or `pollMs`). */
    const ended = yield* Queue.sliding<true>(1)
    // No account holds more than a quarter of the slots: its endpoints hanging to the time-out leave the rest free.
    const perAccount = Math.max(PER_ENDPOINT_IN_FLIGHT, Math.ceil(concurrency / 4))
    let warnedUnreadable = false
    yield* Effect.logInfo(
      config.allowPrivateTargets
        ? "webhooks: WEBHOOK_ALLOW_PRIVATE_TARGETS=true: deliveries may reach loopback and private addresses (tests and local development only)"
        : "webhooks: delivery worker started"
    )
    if (config.allowPrivateTargets) {
      yield* Effect.logWarning("webhooks: the egress guard's address check is off (WEBHOOK_ALLOW_PRIVATE_TARGETS=true)")
    }
    for (;;) {
      // Wait for a free slot, then take every other free one (up to a batch) and claim that many due rows.
      yield* Queue.take(slots)
      const free = 1 + (yield* Queue.takeUpTo(slots, Math.max(0, config.batchSize - 1))).length
      const claimed = yield* repo.claimDue(owner, free, config.leaseSeconds, perAccount).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("webhooks: claim failed", cause), []))
      )
      yield* Queue.offerAll(slots, Array.from({ length: free - claimed.length }, () => true as const))
      for (const delivery of claimed) {
        yield* FiberSet.run(
          attempts,
          attemptDelivery(owner, delivery).pipe(
            Effect.catchTag("SecretUnreadable", (error) =>
              // Said once per process: every delivery would say the same.
              warnedUnreadable ? Effect.void : Effect.zipRight(
                Effect.sync(() => {
                  warnedUnreadable = true
                }),
                Effect.logError(
                  `webhooks: the signing secret of endpoint ${error.endpointId} does not open with this process's ` +
                    "WEBHOOK_SECRET_KEY (it was sealed under another key): deliveries wait for a process with that " +
                    "key. Every process sharing this database needs the same WEBHOOK_SECRET_KEY."
                )
              )),
            Effect.catchAllCause((cause) => Effect.logError(`webhooks: attempt of ${delivery.eventId} failed`, cause)),
            Effect.ensuring(Effect.zipRight(Queue.offer(slots, true), Queue.offer(ended, true)))
          )
        )
      }
      if (claimed.length === 0) yield* Effect.raceFirst(Effect.sleep(Duration.millis(config.pollMs)), Queue.take(ended))
    }
  })

/**
 * The delivery worker for the layer's lifetime. At shutdown it claims nothing more and gives the attempts in flight
 * `WEBHOOK_SHUTDOWN_GRACE_MS` to end and be recorded; the rest are cut off, each giving back its lease.
 */
export const DeliveryWorkerLive = Layer.scopedDiscard(Effect.gen(function*() {
  const { shutdownGraceMs } = yield* WebhookConfig
  // Made first, so released last: it interrupts what the grace left.
  const attempts = yield* FiberSet.make()
  const claims = yield* Effect.forkScoped(runDeliveryWorker(attempts))
  yield* Effect.addFinalizer(() =>
    Fiber.interrupt(claims).pipe(
      // A finalizer runs uninterruptibly: the time-out could not cut the wait short otherwise.
      Effect.zipRight(
        Effect.interruptible(Effect.timeoutOption(FiberSet.awaitEmpty(attempts), Duration.millis(shutdownGraceMs)))
      )
    )
  )
}))
