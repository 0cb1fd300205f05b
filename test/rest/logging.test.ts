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
  it.effect("json writes one JSON object per line; the level filters", () =>
    Effect.gen(function*() {
      const spy = vi.spyOn(console, "log").mockImplementation(() => {})
      try {
        yield* Effect.gen(function*() {
          yield* Effect.logInfo("dropped below warning")
          yield* Effect.logWarning("kept").pipe(Effect.annotateLogs({ requestId: "req_x" }))
        }).pipe(
          Effect.provide(LoggingLive),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["LOG_FORMAT", "json"], ["LOG_LEVEL", "Warning"]])))
        )
        const written = spy.mock.calls.map((args) => String(args[0]))
        expect(written).toHaveLength(1)
        const parsed = JSON.parse(written[0]!)
        expect(parsed.message).toBe("kept")
        expect(parsed.logLevel).toBe("WARN")
        expect(parsed.annotations.requestId).toBe("req_x")
      } finally {
        spy.mockRestore()
      }
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
