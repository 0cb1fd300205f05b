import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it, layer } from "@effect/vitest"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { classifySqlError } from "@scaledger/server/http/DatabaseErrors"
import { orUnavailable } from "@scaledger/server/http/Unavailable"
import { Effect, Exit, Layer, Logger, Redacted } from "effect"

const SECRET = "user-data-\u0000-must-not-be-logged"

/** Runs `effect` with a logger that keeps every line, returning the lines and the exit. */
const capturing = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
    const logger = Logger.make(({ annotations, message }) => {
      lines.push({
        message: String(Array.isArray(message) ? message.join(" ") : message),
        annotations: Object.fromEntries(annotations)
      })
    })
    const exit = yield* Effect.exit(effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))))
    return { lines, exit }
  })

const failureTag = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? (exit.cause.error as { _tag: string })._tag : "none"

const engines = [["PostgreSQL 15", TestDatabase.postgres], ["PGlite", TestDatabase.pglite]] as const

for (const [engine, database] of engines) {
  layer(database, { timeout: 60_000 })(`database errors on ${engine}`, (it) => {
    describe("SQLSTATE class 22 is the caller's input: 400, logged once, without the value", () => {
      it.effect("a NUL in text (22021) → InvalidRequest", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { exit, lines } = yield* capturing(orUnavailable(sql`SELECT ${SECRET}::text AS t`))
          expect(failureTag(exit)).toBe("InvalidRequest")
          expect(lines).toHaveLength(1)
          expect(lines[0]!.annotations["sqlstate"]).toMatch(/^22/)
          expect(JSON.stringify(lines)).not.toContain("user-data")
        }))

      it.effect("a date out of range (22008) and a bigint overflow (22003) → InvalidRequest", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          for (
            const statement of [
              sql`SELECT ${"0000-01-01"}::date AS d`,
              sql`SELECT ${"9".repeat(30)}::bigint AS b`
            ]
          ) {
            const { exit, lines } = yield* capturing(orUnavailable(statement))
            expect(failureTag(exit)).toBe("InvalidRequest")
            expect(lines).toHaveLength(1)
            expect(lines[0]!.annotations["sqlstate"]).toMatch(/^22/)
            expect(lines[0]!.message).not.toContain("0000-01-01")
          }
        }))
    })

    describe("other database errors", () => {
      it.effect("a fault of the service (42P01, no such table) dies as a 500, logged once with its SQLSTATE", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { exit, lines } = yield* capturing(orUnavailable(sql`SELECT * FROM no_such_table WHERE x = ${SECRET}`))
          expect(Exit.isFailure(exit) && exit.cause._tag === "Die").toBe(true)
          expect(lines).toHaveLength(1)
          expect(lines[0]!.annotations["sqlstate"]).toBe("42P01")
          expect(JSON.stringify(lines)).not.toContain("user-data")
        }))
    })
  })
}

describe("an unreachable database", () => {
  it.effect("is 503 ServiceUnavailable (no SQLSTATE: nothing answered)", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(
        Layer.build(PgClient.layer({ url: Redacted.make("postgres://nobody@127.0.0.1:1/none") })).pipe(Effect.scoped)
      )
      expect(refused._tag).toBe("SqlError")
      expect(classifySqlError(refused).kind).toBe("unavailable")
      const { exit, lines } = yield* capturing(orUnavailable(Effect.fail(refused)))
      expect(failureTag(exit)).toBe("ServiceUnavailable")
      expect(lines).toHaveLength(1)
      expect(lines[0]!.annotations["sqlstate"]).toBe("none")
    }), 30_000)
})
