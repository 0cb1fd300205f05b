import { Context, Deferred, Effect, Layer, Redacted, Schedule } from "effect"
import Pg from "pg"

/**
 * The channel the triggers of migration 0018 notify on commit of a change to what the cached reads show: `a:<id>`
 * for one account's rows, `*` for rows every account's reads may use (prices, pauses, rates, EDGAR documents).
 */
export const READS_CHANNEL = "scaledger_reads"

/** What this process knows of the changes to the data behind the cached reads. */
export interface ReadChangesShape {
  /**
   * Waits until every change committed before the call is known here (true), or answers false when changes cannot
   * be followed now (the listener connection is down): then nothing may be served from a cache.
   */
  readonly sync: Effect.Effect<boolean>
  /**
   * Names the state of the data an account's reads depend on, as known here: any change to it (or a lost and
   * regained listener) gives another token. Take it after `sync`, before reading the database.
   */
  readonly token: (accountId: string) => string
}

export class ReadChanges extends Context.Tag("@scaledger/db/ReadChanges")<ReadChanges, ReadChangesShape>() {}

/** Counters bumped by the notifications: one for everything, one per account. */
export class ChangeVersions {
  private all = 0
  private readonly accounts = new Map<string, number>()

  apply(payload: string): void {
    if (payload.startsWith("a:")) {
      const account = payload.slice(2)
      this.accounts.set(account, (this.accounts.get(account) ?? 0) + 1)
    } else this.all++
  }

  /** The day is part of it: figures that depend on "this year" or "now" at day granularity never outlive it. */
  token(accountId: string): string {
    return `${this.all}.${this.accounts.get(accountId) ?? 0}.${Math.floor(Date.now() / 86_400_000)}`
  }
}

/**
 * In one process with an embedded database every write goes through this process's session: a notification is
 * handed to the listener while the writing statement completes, so no wait is needed.
 */
export const inProcess = (
  listen: (channel: string, onPayload: (payload: string) => void) => Promise<unknown>
): Effect.Effect<ReadChangesShape> =>
  Effect.gen(function*() {
    const versions = new ChangeVersions()
    yield* Effect.promise(() => listen(READS_CHANNEL, (payload) => versions.apply(payload)))
    return { sync: Effect.succeed(true), token: (accountId) => versions.token(accountId) }
  })

/**
 * PostgreSQL: one connection of its own `LISTEN`s. `sync` is a round trip on that connection (an empty query) (shared by every
 * request that arrived before it started): PostgreSQL delivers pending notifications before the answer to a query,
 * so once it returns, every change committed before the request arrived has been applied. While the connection is
 * down `sync` answers false; it reconnects every second, and a reconnection counts as a change to everything.
 */
export const postgres = (url: Redacted.Redacted): Layer.Layer<ReadChanges> =>
  Layer.scoped(
    ReadChanges,
    Effect.gen(function*() {
      const versions = new ChangeVersions()
      let client: Pg.Client | undefined
      let closing = false

      const connection = Effect.gen(function*() {
        const lost = yield* Deferred.make<void>()
        const next = new Pg.Client({ connectionString: Redacted.value(url), application_name: "scaledger-listen" })
        const drop = () => {
          if (client === next) client = undefined
          Deferred.unsafeDone(lost, Effect.void)
        }
        next.on("notification", (message) => {
          if (message.channel === READS_CHANNEL) versions.apply(message.payload ?? "*")
        })
        next.on("error", drop)
        next.on("end", drop)
        yield* Effect.tryPromise(async () => {
          await next.connect()
          await next.query(`LISTEN ${READS_CHANNEL}`)
        }).pipe(Effect.tapError(() => Effect.promise(() => next.end().catch(() => undefined))))
        // Whatever changed while nobody listened is unknown: every token moves on.
        versions.apply("*")
        client = next
        yield* Deferred.await(lost)
        yield* Effect.promise(() => next.end().catch(() => undefined))
        if (!closing) yield* Effect.logWarning("read cache: the change listener lost its connection; reconnecting")
      }).pipe(Effect.onInterrupt(() => Effect.sync(() => client?.end().catch(() => undefined))))

      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          closing = true
          client = undefined
        })
      )
      yield* connection.pipe(
        Effect.ignore,
        Effect.repeat(Schedule.spaced("1 second")),
        Effect.forkScoped
      )

      const barrier = (): Promise<boolean> => {
        const current = client
        if (current === undefined) return Promise.resolve(false)
        // An empty query: the server parses and plans nothing, and still sends pending notifications first.
        return current.query("").then(() => client === current, () => false)
      }
      // One round trip in flight at a time; a request that arrives during it waits for the next one (which starts
      // after the request did), shared with every other request arriving meanwhile.
      let running: Promise<boolean> | undefined
      let waiting: Promise<boolean> | undefined
      const launch = () => {
        const started = barrier()
        running = started
        void started.finally(() => {
          if (running === started) running = undefined
        })
        return started
      }
      const next = (): Promise<boolean> => {
        if (running === undefined) return launch()
        if (waiting === undefined) {
          waiting = running.then(() => {
            waiting = undefined
            return launch()
          })
        }
        return waiting
      }

      return {
        sync: Effect.promise(next),
        token: (accountId: string) => versions.token(accountId)
      } satisfies ReadChangesShape
    })
  )
