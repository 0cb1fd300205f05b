import { RoleLocks } from "@scaledger/db/RoleLocks"
import { Duration, Effect, Option } from "effect"

/** How often a process standing by for a role tries to take it. */
export const STANDBY_RETRY = Duration.seconds(5)

/**
 * Runs `work` only while this process holds `role` (`RoleLocks`): with several worker processes on one database,
 * one of them plays it and the others stand by, taking over once its holder stops or loses its connection (the
 * work is interrupted then, and taken up again when the role is regained). While standing by, `meanwhile` runs for
 * at most the retry interval (by default the process just waits). Never ends; interrupt it to stop.
 */
export const asSingleton = <R2 = never>(
  role: string,
  meanwhile: (wait: Duration.Duration) => Effect.Effect<void, never, R2> = Effect.sleep
) =>
<A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<never, never, R | R2 | RoleLocks> =>
  Effect.gen(function*() {
    const locks = yield* RoleLocks
    let standingBy = false
    let failing = false
    const turn = Effect.scoped(Effect.gen(function*() {
      const held = yield* locks.tryHold(role)
      if (Option.isNone(held)) return false
      if (standingBy) yield* Effect.logInfo(`${role}: taken over by this process`)
      standingBy = false
      failing = false
      yield* Effect.raceFirst(work, held.value)
      return true
    })).pipe(
      Effect.catchAllCause((cause) => {
        const warn = failing ? Effect.void : Effect.logWarning(`${role}: stopped in this process; trying again`, cause)
        failing = true
        return Effect.as(warn, false)
      })
    )
    return yield* Effect.forever(Effect.gen(function*() {
      if (yield* turn) return
      if (!standingBy) yield* Effect.logInfo(`${role}: another worker process plays this role; standing by`)
      standingBy = true
      yield* meanwhile(STANDBY_RETRY)
    }))
  })
