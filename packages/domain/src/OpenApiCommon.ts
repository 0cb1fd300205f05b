import type * as OpenApi from "@effect/platform/OpenApi"
import { ErrorCatalog, type ErrorCode } from "./Errors.js"

/**
 * Makes the OpenAPI document describe the API as it behaves, for every operation of every group (present and
 * future: it runs over the finished document, so a group added to `ScaledgerApi` needs nothing of its own):
 *
 * - `security`: the framework writes `security: []` on each operation (meaning "no auth"), overriding the document's
 *   bearer requirement. Every `/v1` operation gets `[{ bearer: [] }]` instead.
 * - The responses every operation can give, whatever its group declares: `400 invalid_request`, `401 unauthorized`,
 *   `408 request_timeout`, `413 payload_too_large` (a declared `Content-Length` over 1 MiB, on any method),
 *   `429 rate_limited` (with `Retry-After`), `431 headers_too_large`, `500 internal_error`, `503 service_unavailable`
 *   (with `Retry-After`);
 *   with a request body, or on a DELETE (which takes none), also `415 unsupported_media_type`; where a path
 *   parameter's value can name a literal route that lacks the method (`PATCH /v1/webhooks/deliveries`), also
 *   `405 method_not_allowed` (with `Allow`). They point at shared
 *   `components.responses`.
 * - A `summary` on every operation (from its description's first sentence when the group gave none) and a
 *   description on every tag.
 * - No `$id` from Effect's built-in schemas: `Schema.Unknown` is written `{ "$id": "/schemas/unknown" }` (likewise
 *   `/schemas/any`, `/schemas/object`, ...), once per error schema's `details`; a JSON Schema 2020-12 validator
 *   refuses a document where one `$id` names several schemas. Without the `$id` such a schema still accepts anything.
 */
export const documentCommonResponses = (document: Record<string, any>): Record<string, any> => {
  const spec = document as OpenApi.OpenAPISpec
  const schemes = Object.keys(spec.components.securitySchemes)
  const components = spec.components as OpenApi.OpenAPIComponents & {
    responses?: Record<string, unknown>
  }
  components.schemas["ErrorEnvelope"] = ErrorEnvelopeSchema as unknown as (typeof components.schemas)[string]
  components.responses = { ...(components.responses ?? {}), ...commonResponseComponents() }

  const literalPaths = Object.keys(spec.paths).filter((path) => !path.includes("{"))
  for (const [path, item] of Object.entries(spec.paths)) {
    // The literal routes a parameter's value can name (`/v1/webhooks/deliveries` for `/v1/webhooks/{id}`): the router
    // takes them, so a method they lack is 405 there, not the parameter route's answer.
    const segments = new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`)
    const siblings = path.includes("{") ? literalPaths.filter((literal) => segments.test(literal)) : []
    for (const method of ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const) {
      const op = item[method]
      if (op === undefined) continue
      const secured = path.startsWith("/v1/") && schemes.length > 0
      if (secured) op.security = schemes.map((name) => ({ [name]: [] }))
      else if (op.security.length === 0) delete (op as { security?: unknown }).security
      const responses = op.responses as Record<string, unknown>
      const add = (status: number, name: string) => {
        if (responses[String(status)] === undefined) {
          responses[String(status)] = { $ref: `#/components/responses/${name}` }
        }
      }
      add(400, "InvalidRequest")
      if (secured) add(401, "Unauthorized")
      add(408, "RequestTimeout")
      add(413, "PayloadTooLarge")
      if (siblings.some((sibling) => spec.paths[sibling]![method] === undefined)) add(405, "MethodNotAllowed")
      if (op.requestBody !== undefined || method === "delete") add(415, "UnsupportedMediaType")
      // Declared API-wide (so a derived client reads it), but only a body or a DELETE can be refused for its type.
      else delete responses["415"]
      if (secured) add(429, "RateLimited")
      add(431, "HeadersTooLarge")
      add(500, "InternalError")
      add(503, "ServiceUnavailable")
      if (op.summary === undefined) op.summary = summaryOf(op)
      for (const [status, response] of Object.entries(responses)) {
        const inline = response as { $ref?: string; headers?: Record<string, unknown> }
        if (inline.$ref !== undefined) continue
        inline.headers = { ...requestIdHeader, ...(statusHeaders[status] ?? {}), ...(inline.headers ?? {}) }
      }
    }
  }
  // Only the shared responses some operation uses (Redocly: no unused components).
  const used = JSON.stringify(spec.paths)
  for (const name of Object.keys(components.responses)) {
    if (!used.includes(`"#/components/responses/${name}"`)) delete components.responses[name]
  }
  if (!JSON.stringify(components.responses).includes(`"#/components/schemas/ErrorEnvelope"`)) {
    delete components.schemas["ErrorEnvelope"]
  }
  if (spec.servers === undefined || spec.servers.length === 0) {
    spec.servers = [{ url: "/", description: "This service (its paths start with /v1)." }]
  }
  for (const tag of spec.tags) {
    if (tag.description === undefined) tag.description = `Operations on ${tag.name.toLowerCase()}.`
  }
  dropBuiltInIds(spec)
  return spec
}

/** Removes every `"$id": "/schemas/…"` (Effect's markers for its built-in schemas) from the document, in place. */
const dropBuiltInIds = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const item of node) dropBuiltInIds(item)
  } else if (typeof node === "object" && node !== null) {
    const record = node as Record<string, unknown>
    if (typeof record["$id"] === "string" && record["$id"].startsWith("/schemas/")) delete record["$id"]
    for (const value of Object.values(record)) dropBuiltInIds(value)
  }
}

const summaryOf = (op: OpenApi.OpenAPISpecOperation): string => {
  const sentence = op.description?.split(/(?<=\.)\s|:\s/)[0]?.replace(/\.$/, "").trim()
  if (sentence !== undefined && sentence.length > 0 && sentence.length <= 100) return sentence
  return op.operationId.replace(/\./g, " ")
}

const ErrorEnvelopeSchema = {
  type: "object",
  description: "The one error body of every failure. `requestId` equals the `Request-Id` header.",
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "docUrl", "requestId"],
      additionalProperties: false,
      properties: {
        code: { type: "string", enum: Object.keys(ErrorCatalog) },
        message: { type: "string" },
        docUrl: { type: "string", description: "Link to the code's section of /docs/errors." },
        requestId: { type: "string" },
        details: {}
      }
    }
  }
} as const

const requestIdHeader = {
  "Request-Id": {
    description: "Identifies the request in the service's logs; equals `error.requestId`.",
    schema: { type: "string" }
  }
}

const wwwAuthenticate = {
  "WWW-Authenticate": { description: "`Bearer realm=\"scaledger\"`", schema: { type: "string" } }
}
const retryAfter = {
  "Retry-After": { description: "Seconds to wait before asking again.", schema: { type: "integer" } }
}
const allow = {
  Allow: { description: "The methods the path accepts, e.g. `GET, HEAD`.", schema: { type: "string" } }
}
const statusHeaders: Record<string, Record<string, unknown>> = {
  "401": wwwAuthenticate,
  "409": retryAfter,
  "429": retryAfter,
  "503": retryAfter
}

const envelopeResponse = (code: ErrorCode, extraHeaders: Record<string, unknown> = {}) => ({
  description: `${ErrorCatalog[code].title} (\`${code}\`). ${ErrorCatalog[code].description}`,
  headers: { ...requestIdHeader, ...extraHeaders },
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } }
})

const commonResponseComponents = () => ({
  InvalidRequest: envelopeResponse("invalid_request"),
  Unauthorized: envelopeResponse("unauthorized", wwwAuthenticate),
  MethodNotAllowed: envelopeResponse("method_not_allowed", allow),
  RequestTimeout: envelopeResponse("request_timeout"),
  PayloadTooLarge: envelopeResponse("payload_too_large"),
  HeadersTooLarge: envelopeResponse("headers_too_large"),
  UnsupportedMediaType: envelopeResponse("unsupported_media_type"),
  RateLimited: envelopeResponse("rate_limited", retryAfter),
  InternalError: envelopeResponse("internal_error"),
  ServiceUnavailable: envelopeResponse("service_unavailable", retryAfter)
})
