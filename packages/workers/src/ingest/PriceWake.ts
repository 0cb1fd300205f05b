import type { Duration } from "effect"
import { Effect, Option, Queue } from "effect"

/**
 * Wakes the price recorder before its next poll: a backfill that ends has recorded transfers older than any price
 * history walked so far, and its positions stay without a basis price until the history reaches back to them.
 * Signals sent while a pass runs are kept as one, so the pass after it sees every transfer recorded before.
 */
export class PriceWake extends Effect.Service<PriceWake>()("@scaledger/workers/ingest/PriceWake", {
  effect: Effect.gen(function*() {
    const signals = yield* Queue.sliding<void>(1)
    return {
      /** Asks for a price pass now. */
      wake: Effect.asVoid(Queue.offer(signals, undefined)),
      /** Waits for a wake-up or `interval`, whichever comes first. */
      sleep: (interval: Duration.DurationInput) =>
        Queue.take(signals).pipe(
          Effect.timeoutTo({ duration: interval, onSuccess: () => true, onTimeout: () => false })
        )
    } as const
  })
}) {}

/** Wakes the price recorder when one runs in this process (a no-op otherwise). */
export const wakePrices = Effect.flatMap(
  Effect.serviceOption(PriceWake),
  Option.match({ onNone: () => Effect.void, onSome: (wake) => wake.wake })
)
