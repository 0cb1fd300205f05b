import { describe, expect, it, layer } from "@effect/vitest"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { LoggingLive } from "@scaledger/server/Logging"
import { ConfigProvider, Effect, Layer, List, Logger } from "effect"
import { vi } from "vitest"
import { edgeServer } from "../support/EdgeHarness.js"
import { call, newKey } from "../support/RestHarness.js"

const lines: Array<{ message: string; level: string; annotations: Record<string, unknown> }> = []
const CapturingLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, logLevel, message }) => {
    lines.push({
      message: List.isList(message) ? "" : String(Array.isArray(message) ? message.join(" ") : message),
      level: logLevel.label,
      annotations: Object.fromEntries(annotations)
    })
  })
)

layer(Layer.provide(edgeServer(TestDatabase.pglite), CapturingLogger), { timeout: 60_000 })("request log", (it) => {
  it.effect("one line per request at info, carrying the Request-Id, the path without its query, the status", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("logged")
      lines.length = 0
      const reply = yield* call("GET", "/v1/events?from=2025-01-01&type=secret-query-value", { key })
      const ok = yield* call("GET", "/v1/settings", { key })
      const mine = lines.filter((line) => line.message === "http request")
      expect(mine).toHaveLength(2)
      expect(mine[0]!.level).toBe("INFO")
      expect(mine[0]!.annotations).toMatchObject({
        requestId: reply.headers["request-id"],
        method: "GET",
        path: "/v1/events",
        status: reply.status
      })
      expect(mine[1]!.annotations["requestId"]).toBe(ok.headers["request-id"])
      expect(JSON.stringify(lines)).not.toContain("secret-query-value")
    }))
})

describe("LOG_FORMAT and LOG_LEVEL", () => {
  /** What the logger writes to standard output while `effect` runs and as its layer ends, and in how many writes. */
  const stdoutOf = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const spy = vi.spyOn(process.stdout, "write").mockImplementation(() => true)
      try {
        const writes = yield* effect.pipe(Effect.zipRight(Effect.sync(() => spy.mock.calls.length)))
        return { writes, text: spy.mock.calls.map((args) => String(args[0])).join("") }
      } finally {
        spy.mockRestore()
      }
    })

  it.effect("json writes one JSON object per line; the level filters", () =>
    Effect.gen(function*() {
      const { text } = yield* stdoutOf(
        Effect.gen(function*() {
          yield* Effect.logInfo("dropped below warning")
          yield* Effect.logWarning("kept").pipe(Effect.annotateLogs({ requestId: "req_x" }))
        }).pipe(
          Effect.provide(LoggingLive),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["LOG_FORMAT", "json"], ["LOG_LEVEL", "Warning"]])))
        )
      )
      const written = text.split("\n").filter((line) => line !== "")
      expect(written).toHaveLength(1)
      const parsed = JSON.parse(written[0]!)
      expect(parsed.message).toBe("kept")
      expect(parsed.logLevel).toBe("WARN")
      expect(parsed.annotations.requestId).toBe("req_x")
    }))

  it.effect("lines logged in one turn are written together after it, in order, each on its line; none is lost", () =>
    Effect.gen(function*() {
      const { text, writes } = yield* stdoutOf(
        Effect.gen(function*() {
          for (let i = 0; i < 600; i++) yield* Effect.logInfo(`line ${i}`)
          // Nothing waits past the turn it was logged in.
          yield* Effect.logInfo("last")
          yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
          return 0
        }).pipe(
          Effect.provide(LoggingLive),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["LOG_FORMAT", "logfmt"]])))
        )
      )
      const written = text.split("\n").filter((line) => line !== "")
      expect(written).toHaveLength(601)
      expect(written.map((line) => /message="?([^"]*)"?/.exec(line)?.[1])).toEqual([
        ...Array.from({ length: 600 }, (_, i) => `line ${i}`),
        "last"
      ])
      // Written in a few batches (of at most 256 lines), not a write per line.
      expect(writes).toBe(3)
    }))

  it.effect("an unknown LOG_FORMAT is a configuration error", () =>
    Effect.gen(function*() {
      const result = yield* Effect.void.pipe(
        Effect.provide(LoggingLive),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["LOG_FORMAT", "xml"]]))),
        Effect.flip
      )
      expect(String(result)).toContain("LOG_FORMAT")
    }))
})
