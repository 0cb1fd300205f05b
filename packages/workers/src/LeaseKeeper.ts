import { Data, Duration, Effect, Option, Schedule } from "effect"

/** Another worker holds the lease now (it lapsed, or the job is gone): the work under it is not ours to finish. */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly what: string }> {}

/**
 * Runs `work` while extending its lease every third of `lease` (`renew` says whether it still held). When a renewal
 * finds the lease lost, `work` is interrupted and the result is `LeaseLost`; a renewal that fails (the database
 * unreachable) is logged and tried again at the next turn. The renewals stop with `work`.
 */
export const keepingLease = <E2, R2>(
  what: string,
  lease: Duration.DurationInput,
  renew: Effect.Effect<boolean, E2, R2>
) =>
<A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E | LeaseLost, R | R2> => {
  const every = Option.getOrElse(Duration.divide(lease, 3), () => Duration.seconds(1))
  const keeper = renew.pipe(
    Effect.catchAllCause((cause) =>
      Effect.as(Effect.logWarning(`${what}: lease renewal failed; trying again`, cause), true)
    ),
    Effect.flatMap((held) => held ? Effect.void : Effect.fail(new LeaseLost({ what }))),
    Effect.delay(every),
    Effect.repeat(Schedule.forever),
    Effect.zipRight(Effect.never)
  )
  return Effect.raceFirst(work, keeper)
}
