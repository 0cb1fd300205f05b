import { Effect, ParseResult } from "effect"

/**
 * Rows are decoded against the domain's schemas on the way out of the database. A stored row that breaks them is a
 * defect (a bug or a hand-edited table), not a failure a caller could handle: it dies, and the edge answers 500.
 */
export const orDieOnParse = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, ParseResult.ParseError>, R> =>
  Effect.catchIf(
    effect,
    (error): error is Extract<E, ParseResult.ParseError> => ParseResult.isParseError(error),
    (error) => Effect.die(error)
  ) as Effect.Effect<A, Exclude<E, ParseResult.ParseError>, R>
