import { describe, expect, it } from "@effect/vitest"
import { TelemetryConfig, tracesUrl } from "@scaledger/server/Telemetry"
import { ConfigProvider, Effect, Either, Option } from "effect"

const load = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(TelemetryConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

describe("Telemetry settings", () => {
  it("is off without an endpoint, with the OTLP defaults otherwise", () => {
    const off = Either.getOrThrow(load({}))
    expect(Option.isNone(off.endpoint)).toBe(true)
    expect(off.protocol).toBe("http/protobuf")
    expect(off.serviceName).toBe("scaledger")
    const on = Either.getOrThrow(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }))
    expect(Option.map(on.endpoint, tracesUrl)).toEqual(Option.some("http://collector:4318/v1/traces"))
  })

  it("appends /v1/traces to the endpoint's own path, as the OTLP specification says", () => {
    expect(tracesUrl(new URL("http://collector:4318/"))).toBe("http://collector:4318/v1/traces")
    expect(tracesUrl(new URL("https://otel.example.com/otlp"))).toBe("https://otel.example.com/otlp/v1/traces")
    expect(tracesUrl(new URL("https://otel.example.com/otlp/"))).toBe("https://otel.example.com/otlp/v1/traces")
  })

  it("refuses an unknown protocol, a malformed endpoint and an empty service name", () => {
    expect(Either.isLeft(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })))
      .toBe(true)
    expect(String(Either.flip(load({ OTEL_EXPORTER_OTLP_ENDPOINT: "::nope" })).pipe(Either.getOrThrow))).toContain(
      "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    expect(String(Either.flip(load({ OTEL_SERVICE_NAME: " " })).pipe(Either.getOrThrow))).toContain(
      "OTEL_SERVICE_NAME must not be empty"
    )
  })
})
