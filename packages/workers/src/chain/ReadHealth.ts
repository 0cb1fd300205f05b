/**
 * Whether the workers' chain reads work, per reader (`recorder`, `prices`, `pauses`): a read that failed past the
 * transport's retry budget (every endpoint unreachable or rate limiting, an `eth_getLogs` range no split helps, a
 * node error) turns the reader `degraded` with its cause; its next success turns it `ok`. Each change of state is
 * one log line and one row of `chain_read_health` (what the alert monitor raises `degraded-read` from); failures
 * while already degraded for the same cause are silent, so an outage is not a stack trace per retry.
 */
import { type ReadFailureCause, type ReadHealthRow, ReadHealthStore } from "@scaledger/db/chain/ReadHealth"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { Clock, Effect, Option, Ref } from "effect"

export type ChainReader = "recorder" | "prices" | "pauses"

/** The cause of a failed read when it is a chain read past the retry budget; None for anything else. */
export const readFailureCause = (error: unknown): Option.Option<ReadFailureCause> => {
  if (typeof error !== "object" || error === null || !("_tag" in error)) return Option.none()
  const failure = error as { readonly _tag: string; readonly lastError?: { readonly _tag: string } }
  switch (failure._tag) {
    case "AllEndpointsFailed":
      return Option.some(failure.lastError?._tag === "RpcRateLimited" ? "rate_limited" : "unreachable")
    case "RpcRateLimited":
      return Option.some("rate_limited")
    case "RpcTimeout":
    case "RpcTransportError":
      return Option.some("unreachable")
    case "RpcRangeTooLarge":
      return Option.some("range")
    case "RpcError":
      return Option.some("rpc_error")
    default:
      return Option.none()
  }
}

/**
 * How long after a recovery a failed read is taken for one that began before it (a read past the retry budget
 * ends seconds after it began), and not reported.
 */
export const RECOVERY_GRACE_MS = 10_000

const messageOf = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

export class ReadHealth extends Effect.Service<ReadHealth>()("@scaledger/workers/chain/ReadHealth", {
  effect: Effect.gen(function*() {
    const chainId = (yield* ChainClient).chainId
    const store = yield* ReadHealthStore
    const initial = yield* store.all(chainId).pipe(Effect.orElseSucceed(() => []))
    const states = yield* Ref.make(new Map<string, ReadHealthRow>(initial.map((row) => [row.reader, row])))

    const save = (row: ReadHealthRow) =>
      store.set(row).pipe(
        Effect.catchAll((error) => Effect.logWarning(`chain reads: could not store the ${row.reader} state`, error))
      )

    /**
     * Notes a failed read: true (and the reader degraded, logged once per cause) when it was a chain read past the
     * retry budget; false for any other failure, which the caller handles as before.
     */
    const failed = (reader: ChainReader, error: unknown) =>
      Effect.gen(function*() {
        const cause = readFailureCause(error)
        if (Option.isNone(cause)) return false
        const current = (yield* Ref.get(states)).get(reader)
        if (current?.status === "degraded" && current.cause === cause.value) return true
        const now = yield* Clock.currentTimeMillis
        // A read that began before the recovery (another fiber's retries) ends after it: quiet, not a new outage.
        // An outage that goes on fails the next read too, and that one is reported.
        if (current?.status === "ok" && now - current.since.getTime() < RECOVERY_GRACE_MS) return true
        const row: ReadHealthRow = {
          chainId,
          reader,
          status: "degraded",
          cause: cause.value,
          error: messageOf(error),
          since: new Date(now)
        }
        yield* Ref.update(states, (map) => new Map(map).set(reader, row))
        yield* Effect.logWarning(
          `chain reads degraded (${reader}, ${cause.value}): ${row.error}; retrying quietly until they work again`
        )
        yield* save(row)
        return true
      })

    /** Notes a successful read: a degraded reader is `ok` again (one log line). */
    const succeeded = (reader: ChainReader) =>
      Effect.gen(function*() {
        const current = (yield* Ref.get(states)).get(reader)
        if (current === undefined || current.status === "ok") return
        const now = yield* Clock.currentTimeMillis
        const row: ReadHealthRow = { chainId, reader, status: "ok", cause: null, error: null, since: new Date(now) }
        yield* Ref.update(states, (map) => new Map(map).set(reader, row))
        yield* Effect.logInfo(
          `chain reads recovered (${reader}) after ${Math.round((now - current.since.getTime()) / 1000)} s degraded`
        )
        yield* save(row)
      })

    const state = (reader: ChainReader) => Effect.map(Ref.get(states), (map) => Option.fromNullable(map.get(reader)))

    return { failed, succeeded, state } as const
  })
}) {}
