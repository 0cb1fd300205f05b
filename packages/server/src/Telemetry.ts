import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import { Config, Effect, Function, Layer, Option } from "effect"

/**
 * The standard OpenTelemetry variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (the collector's base URL; spans go to
 * `<endpoint>/v1/traces`), `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the OTLP default, or `http/json`) and
 * `OTEL_SERVICE_NAME` (default `scaledger`). Without an endpoint nothing is exported.
 */
export const TelemetryConfig = Config.all({
  endpoint: Config.option(Config.url("OTEL_EXPORTER_OTLP_ENDPOINT")),
  protocol: Config.literal("http/protobuf", "http/json")("OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
    Config.withDefault("http/protobuf" as const)
  ),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(
    Config.withDefault("scaledger"),
    Config.validate({ message: "OTEL_SERVICE_NAME must not be empty", validation: (name) => name.trim() !== "" })
  )
})
export type TelemetryConfig = Config.Config.Success<typeof TelemetryConfig>

/** `<endpoint>/v1/traces`, keeping a path the endpoint already has (`http://collector/otlp` → `/otlp/v1/traces`). */
export const tracesUrl = (endpoint: URL): string => {
  const url = new URL(endpoint.href)
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`
  return url.href
}

/**
 * Spans exported over OTLP/HTTP when an endpoint is configured. Otherwise the default tracer, and no server span per
 * HTTP request (its URL parsing, header copies and attributes would go nowhere).
 */
export const telemetryLayer = (config: TelemetryConfig): Layer.Layer<never> =>
  Option.match(config.endpoint, {
    onNone: () => Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, Function.constTrue),
    onSome: (endpoint) =>
      OtlpTracer.layer({ url: tracesUrl(endpoint), resource: { serviceName: config.serviceName } }).pipe(
        Layer.provide(
          config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
        ),
        Layer.provide(FetchHttpClient.layer)
      )
  })

export const TelemetryLive = Layer.unwrapEffect(Effect.map(TelemetryConfig, telemetryLayer))
