import { Context, Data, Deferred, Duration, Effect, Layer, Option, Redacted, Schedule, type Scope } from "effect"
import Pg from "pg"

/** The hold on a role ended without its scope closing (the connection holding it was lost), or could not be asked. */
export class RoleLost extends Data.TaggedError("RoleLost")<{ readonly role: string; readonly reason: string }> {
  override get message() {
    return `the hold on ${this.role} ended: ${this.reason}`
  }
}

export interface RoleLocksShape {
  /**
   * Takes `role` for this process unless another process holds it: `Some(lost)` while held, where `lost` fails once
   * the hold ends before the scope does; `None` when another process holds it. The hold ends with the scope.
   */
  readonly tryHold: (
    role: string
  ) => Effect.Effect<Option.Option<Effect.Effect<never, RoleLost>>, RoleLost, Scope.Scope>
}

/** Roles only one process of a deployment may play at a time (the recorder, the price poll). */
export class RoleLocks extends Context.Tag("@scaledger/db/RoleLocks")<RoleLocks, RoleLocksShape>() {}

/** An embedded database belongs to one process (the data folder lock): every role is that process's. */
export const singleProcess: Layer.Layer<RoleLocks> = Layer.succeed(RoleLocks, {
  tryHold: () => Effect.succeed(Option.some(Effect.never))
})

/** How often a held role's connection is checked, so a half-open connection is noticed. */
const CHECK_EVERY = Duration.seconds(10)

/**
 * PostgreSQL: a session-level advisory lock, taken on a connection of the role's own. A process that dies, even by
 * `kill -9`, frees its roles when the server sees its connections close; a lost connection ends the hold here too.
 */
export const postgres = (url: Redacted.Redacted): Layer.Layer<RoleLocks> =>
  Layer.succeed(RoleLocks, {
    tryHold: (role) =>
      Effect.gen(function*() {
        const lost = yield* Deferred.make<never, RoleLost>()
        const client = yield* Effect.acquireRelease(
          Effect.sync(() =>
            new Pg.Client({
              connectionString: Redacted.value(url),
              application_name: `scaledger-role-${role}`,
              keepAlive: true
            })
          ),
          (client) => Effect.promise(() => client.end().catch(() => undefined))
        )
        const drop = (reason: string) => () => Deferred.unsafeDone(lost, Effect.fail(new RoleLost({ role, reason })))
        client.on("error", drop("its connection failed"))
        client.on("end", drop("its connection closed"))
        const held = yield* Effect.tryPromise({
          try: async () => {
            await client.connect()
            const result = await client.query<{ held: boolean }>(
              "SELECT pg_try_advisory_lock(hashtext($1)) AS held",
              [`scaledger:${role}`]
            )
            return result.rows[0]?.held === true
          },
          catch: (error) => new RoleLost({ role, reason: `could not be asked: ${String(error)}` })
        })
        if (!held) return Option.none()
        yield* Effect.tryPromise(() => client.query("SELECT 1")).pipe(
          Effect.catchAll(() =>
            Deferred.fail(lost, new RoleLost({ role, reason: "its connection stopped answering" }))
          ),
          Effect.repeat(Schedule.spaced(CHECK_EVERY)),
          Effect.delay(CHECK_EVERY),
          Effect.forkScoped
        )
        return Option.some(Deferred.await(lost))
      })
  })
