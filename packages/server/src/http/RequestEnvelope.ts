import { HttpLayerRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import * as Ids from "@scaledger/db/Ids"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { hasControlCharacter } from "@scaledger/domain/Basic"
import { errorBody, ErrorCatalog, type ErrorCode } from "@scaledger/domain/Errors"
import { CurrentRequest } from "@scaledger/domain/RequestContext"
import { Cause, Chunk, Data, Effect, Option, Stream } from "effect"
import type { IncomingMessage } from "node:http"
import { bearerToken } from "../auth/AuthenticationLive.js"
import { HttpConfig } from "../Config.js"
import { LoggedFailure } from "./DatabaseErrors.js"
import { makeRouteTable, routesOfApi, type RouteSpec, type RouteTable } from "./RouteTable.js"

export const MAX_BODY_BYTES = 1024 * 1024
/** Deepest JSON nesting (arrays and objects) a body may have; checked on the raw text before parsing. */
export const MAX_JSON_DEPTH = 32

export const errorResponse = (
  code: ErrorCode,
  message: string,
  details?: unknown,
  headers?: Record<string, string>
) =>
  Effect.flatMap(
    errorBody(code, message, details),
    (body) =>
      HttpServerResponse.json(body, { status: ErrorCatalog[code].status, ...(headers ? { headers } : {}) }).pipe(
        Effect.orDie
      )
  )

// ---------------------------------------------------------------------------------------------------------------
// docUrl origin
// ---------------------------------------------------------------------------------------------------------------

const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** `http://<address the client connected to>`: the listener's own address, never a header the client chose. */
export const listenerOrigin = (
  socket: { readonly localAddress?: string | undefined; readonly localPort?: number | undefined }
) => {
  let address = socket.localAddress ?? "127.0.0.1"
  if (address.startsWith("::ffff:")) address = address.slice(7)
  const host = address.includes(":") ? `[${address}]` : address
  return `http://${host}${socket.localPort === undefined ? "" : `:${socket.localPort}`}`
}

/**
 * The origin error `docUrl`s point at: `PUBLIC_BASE_URL` when set; else, behind a trusted proxy (`TRUST_PROXY`),
 * `X-Forwarded-Proto` (http or https only) and `X-Forwarded-Host` / `Host` when they are well-formed; else the address
 * of the listener the request came in on. A client's `Host` alone never decides it.
 */
export const docOrigin = (
  config: { readonly publicBaseUrl: Option.Option<URL>; readonly trustProxy: boolean },
  headers: Readonly<Record<string, string | undefined>>,
  socket: { readonly localAddress?: string | undefined; readonly localPort?: number | undefined }
): string => {
  if (Option.isSome(config.publicBaseUrl)) return config.publicBaseUrl.value.origin
  if (config.trustProxy) {
    const proto = headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
    const host = (headers["x-forwarded-host"]?.split(",")[0] ?? headers["host"])?.trim()
    if ((proto === "http" || proto === "https") && host !== undefined && HOST.test(host)) return `${proto}://${host}`
  }
  return listenerOrigin(socket)
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------------------

/** A request body refused at the edge. */
export class BodyRejected extends Data.TaggedError("BodyRejected")<{
  readonly code: ErrorCode
  readonly message: string
  readonly details?: unknown
}> {}

/** True when the JSON text nests arrays/objects deeper than `max` (strings are skipped, escapes honoured). */
export const jsonTooDeep = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** True when a parsed JSON value holds a string (or key) with a NUL character, which no text column can store. */
const holdsNul = (value: unknown): boolean => {
  if (typeof value === "string") return value.includes("\u0000")
  if (Array.isArray(value)) return value.some(holdsNul)
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([key, inner]) => key.includes("\u0000") || holdsNul(inner))
  }
  return false
}

const tooLarge = () =>
  new BodyRejected({ code: "payload_too_large", message: `The request body exceeds ${MAX_BODY_BYTES} bytes.` })

/** How much of an oversized body is read and thrown away, at most, so that the client is done sending when the 413 goes out. */
const DRAIN_MAX_BYTES = 32 * MAX_BODY_BYTES
const DRAIN_MAX_MS = 5_000

/**
 * Reads the body, counting bytes as they arrive. Past `max` it stops keeping them and reads the rest into the void
 * (up to 32 MiB or 5 s) before failing with `payload_too_large`: answering while the client is still sending makes
 * the closing socket reset the connection, and the client then never reads the 413. Bytes that are not UTF-8 are
 * refused.
 */
const readBody = (source: IncomingMessage, max: number) =>
  Effect.async<string, BodyRejected>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let timer: ReturnType<typeof setTimeout> | undefined
    const cleanup = () => {
      if (timer !== undefined) clearTimeout(timer)
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const refuse = () => {
      cleanup()
      source.on("error", () => {})
      source.resume()
      resume(Effect.fail(tooLarge()))
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size <= max) {
        chunks.push(chunk)
        return
      }
      if (timer === undefined) {
        chunks.length = 0
        timer = setTimeout(refuse, DRAIN_MAX_MS)
      }
      if (size > DRAIN_MAX_BYTES) refuse()
    }
    function onEnd() {
      if (size > max) return refuse()
      cleanup()
      try {
        resume(Effect.succeed(new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks))))
      } catch {
        resume(Effect.fail(new BodyRejected({ code: "invalid_request", message: "The request body is not UTF-8." })))
      }
    }
    function onError() {
      cleanup()
      resume(Effect.fail(new BodyRejected({ code: "invalid_request", message: "The request body was cut off." })))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(cleanup)
  })

/**
 * The request with its body already read: `text`, `json`, `arrayBuffer` and `stream` answer from memory, so the
 * routes' own decoding sees exactly the bytes the edge counted and checked. `modify` (the router strips prefixes)
 * keeps the body.
 */
const withReadBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string
): HttpServerRequest.HttpServerRequest => {
  const json = Effect.suspend((): Effect.Effect<unknown, HttpServerError.RequestError | BodyRejected> => {
    let value: unknown
    try {
      value = text === "" ? null : JSON.parse(text)
    } catch (cause) {
      return Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause }))
    }
    return holdsNul(value)
      ? Effect.fail(
        new BodyRejected({
          code: "invalid_request",
          message: "The request body holds a NUL character (\\u0000), which no field accepts."
        })
      )
      : Effect.succeed(value)
  })
  const bytes = () => new TextEncoder().encode(text)
  return new Proxy(request, {
    get(target, property) {
      switch (property) {
        case "text":
          return Effect.succeed(text)
        case "json":
          return json
        case "arrayBuffer":
          return Effect.sync(() => bytes().buffer)
        case "stream":
          return Stream.suspend(() => Stream.make(bytes()))
        case "modify":
          return (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) =>
            withReadBody(target.modify(options), text)
      }
      const value = Reflect.get(target, property, target)
      return typeof value === "function" ? value.bind(target) : value
    }
  })
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

const hasBody = (headers: Readonly<Record<string, string | undefined>>) =>
  headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0

/** `application/json`, optionally with `charset=utf-8`; nothing else (no forms, no multipart, no `text/plain`). */
const isJsonContentType = (value: string | undefined): boolean => {
  if (value === undefined) return false
  const [type, ...params] = value.split(";").map((part) => part.trim().toLowerCase())
  if (type !== "application/json") return false
  return params.every((param) => param === "" || /^charset="?utf-8"?$/.test(param))
}

// ---------------------------------------------------------------------------------------------------------------
// The middleware
// ---------------------------------------------------------------------------------------------------------------

const isRequestError = (error: unknown): error is HttpServerError.RequestError =>
  HttpServerError.isServerError(error) && error._tag === "RequestError"

/** What a failure that escaped the API's own error encoding answers. */
const fromCause = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  routes: RouteTable
) => {
  // The framework reports an unreadable body as a defect, so defects are searched as well as failures.
  const failures = [...Chunk.toReadonlyArray(Cause.failures(cause)), ...Chunk.toReadonlyArray(Cause.defects(cause))]
  const rejected = failures.find((failure): failure is BodyRejected => failure instanceof BodyRejected)
  if (rejected !== undefined) return errorResponse(rejected.code, rejected.message, rejected.details)
  const requestError = failures.find(isRequestError)
  if (requestError !== undefined && String((requestError.cause as Error | undefined)?.message).includes("maxBytes")) {
    return errorResponse("payload_too_large", `The request body exceeds ${MAX_BODY_BYTES} bytes.`)
  }
  if (requestError !== undefined && requestError.reason === "Decode") {
    return errorResponse("invalid_request", "The request body is not valid JSON.")
  }
  if (failures.some((failure) => HttpServerError.isServerError(failure) && failure._tag === "RouteNotFound")) {
    const path = request.url.split("?")[0] ?? "/"
    const allowed = routes.allowed(path)
    return allowed.length > 0
      ? errorResponse(
        "method_not_allowed",
        `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}.`,
        { allowed },
        { allow: allowed.join(", ") }
      )
      : errorResponse("not_found", `No route for ${request.method} ${path}.`)
  }
  // Already logged once where it happened (a database error, with its SQLSTATE): not again, and not its statement.
  if (failures.some((failure) => failure instanceof LoggedFailure)) {
    const logged = failures.find((failure): failure is LoggedFailure => failure instanceof LoggedFailure)!
    return errorResponse(logged.code, logged.message)
  }
  return Effect.zipRight(
    Effect.logError("request failed", Cause.pretty(cause).split("\n").slice(0, 8).join("\n")),
    errorResponse("internal_error", `The service failed unexpectedly; quote request id ${requestId}.`)
  )
}

/** `details.retryAfterSeconds` of an error envelope already encoded (the 429 of the rate limiter). */
const retryAfterOf = (response: HttpServerResponse.HttpServerResponse): number | undefined => {
  if (response.body._tag !== "Uint8Array") return undefined
  try {
    const seconds = JSON.parse(new TextDecoder().decode(response.body.body))?.error?.details?.retryAfterSeconds
    return typeof seconds === "number" && Number.isInteger(seconds) && seconds > 0 ? seconds : undefined
  } catch {
    return undefined
  }
}

const controlCharacter = (where: ReadonlyArray<string>) =>
  new BodyRejected({
    code: "invalid_request",
    message:
      "The request target holds a control character (NUL, U+0000–U+001F, U+007F–U+009F), which no field accepts.",
    details: { issues: [{ path: where, message: "must not contain control characters" }] }
  })

/** The path and every query name and value, percent-decoded, must be free of control characters (NUL included). */
const admitTarget = (url: string) =>
  Effect.gen(function*() {
    const mark = url.indexOf("?")
    const rawPath = mark < 0 ? url : url.slice(0, mark)
    let path: string
    try {
      path = decodeURIComponent(rawPath)
    } catch {
      return yield* new BodyRejected({ code: "invalid_request", message: "The path is not valid percent-encoding." })
    }
    if (hasControlCharacter(path)) return yield* controlCharacter(["path"])
    if (mark < 0) return
    for (const [name, value] of new URLSearchParams(url.slice(mark + 1))) {
      if (hasControlCharacter(name) || hasControlCharacter(value)) return yield* controlCharacter([name])
    }
  })

/** Checks made before any route runs: size, media type, nesting. A failure answers at once. */
const admitBody = (request: HttpServerRequest.HttpServerRequest, acceptsBodies: boolean) =>
  Effect.gen(function*() {
    yield* admitTarget(request.url)
    const headers = request.headers
    const declared = headers["content-length"]
    if (declared !== undefined && !/^\d+$/.test(declared)) {
      return yield* new BodyRejected({ code: "invalid_request", message: "Content-Length is not a number." })
    }
    if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) {
      // Read into the void first (when not absurdly large), so the client reads the 413 rather than a reset.
      if (Number(declared) <= DRAIN_MAX_BYTES) yield* readBody(NodeHttpServerRequest.toIncomingMessage(request), 0)
      return yield* tooLarge()
    }
    if (!BODY_METHODS.has(request.method) || !hasBody(headers)) return request
    if (!acceptsBodies || !isJsonContentType(headers["content-type"])) {
      return yield* new BodyRejected({
        code: "unsupported_media_type",
        message: `Request bodies must be JSON (Content-Type: application/json); got ${
          headers["content-type"] === undefined ? "no Content-Type" : JSON.stringify(headers["content-type"])
        }.`,
        details: { supported: ["application/json"] }
      })
    }
    const text = yield* readBody(NodeHttpServerRequest.toIncomingMessage(request), MAX_BODY_BYTES)
    if (jsonTooDeep(text, MAX_JSON_DEPTH)) {
      return yield* new BodyRejected({
        code: "invalid_request",
        message: `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`,
        details: { maxDepth: MAX_JSON_DEPTH }
      })
    }
    return withReadBody(request, text)
  })

export interface EdgeOptions {
  /** Routes the router serves besides the API's (used to answer 405 with `Allow`). */
  readonly extraRoutes: ReadonlyArray<RouteSpec>
  /** Routes of an `HttpApi`, read from its groups: a group added to the API is covered without listing it here. */
  readonly api?: Parameters<typeof routesOfApi>[0] | undefined
  readonly acceptsBodies?: boolean | undefined
  /** `WWW-Authenticate` on 401s. */
  readonly bearerChallenge?: boolean | undefined
  /** The one request log line (info, with the request id). */
  readonly logRequests?: boolean | undefined
}

/**
 * The HTTP edge of a router: gives each request an id (the `Request-Id` header, and `requestId` in error bodies),
 * refuses bodies over 1 MiB as they stream in (413), bodies that are not JSON (415), JSON nested deeper than 32 levels
 * and NUL characters (400), answers unknown routes (404) and wrong methods (405 with `Allow`), turns defects into
 * the error envelope, adds `WWW-Authenticate` to 401s and `Retry-After` to 409s and 429s, and logs one line per
 * request.
 */
export const edgeMiddleware = (options: EdgeOptions) =>
  HttpLayerRouter.middleware(
    Effect.gen(function*() {
      const config = yield* HttpConfig
      const routes = makeRouteTable([...(options.api ? routesOfApi(options.api) : []), ...options.extraRoutes])
      return (httpEffect) =>
        Effect.gen(function*() {
          const started = Date.now()
          const request = yield* HttpServerRequest.HttpServerRequest
          const requestId = `req_${Ids.randomBase62(20)}`
          const socket = NodeHttpServerRequest.toIncomingMessage(request).socket ?? {}
          const context = { requestId, docBase: docOrigin(config, request.headers, socket) }
          const response = yield* admitBody(request, options.acceptsBodies ?? true).pipe(
            Effect.flatMap((admitted) =>
              Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, admitted)
            ),
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause)
                : fromCause(cause, request, requestId, routes)
            ),
            Effect.locally(CurrentRequest, context)
          )
          const extra: Record<string, string> = { "request-id": requestId }
          // A replay settles within seconds: a 409 says when to ask again.
          if (response.status === 409 && response.headers["retry-after"] === undefined) extra["retry-after"] = "1"
          if (response.status === 413) extra["connection"] = "close"
          if (response.status === 429 && response.headers["retry-after"] === undefined) {
            extra["retry-after"] = String(retryAfterOf(response) ?? 1)
          }
          let final = HttpServerResponse.setHeaders(response, extra)
          if (
            options.bearerChallenge === true && final.status === 401 && final.headers["www-authenticate"] === undefined
          ) {
            const keySent = Option.isSome(bearerToken(request.headers["authorization"]))
            final = HttpServerResponse.setHeader(
              final,
              "www-authenticate",
              keySent ? `Bearer realm="scaledger", error="invalid_token"` : `Bearer realm="scaledger"`
            )
          }
          if (options.logRequests !== false) {
            yield* Effect.logInfo("http request").pipe(
              Effect.annotateLogs({
                requestId,
                method: request.method,
                // The path only: query strings can hold user data.
                path: (request.url.split("?")[0] ?? "/").slice(0, 200),
                status: final.status,
                durationMs: Date.now() - started
              })
            )
          }
          return final
        })
    }),
    { global: true }
  )

/** Routes of the REST router outside the API (docs, probes, the OpenAPI document). */
export const RestExtraRoutes: ReadonlyArray<RouteSpec> = [
  { method: "GET", path: "/healthz" },
  { method: "GET", path: "/readyz" },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/docs/errors" },
  { method: "GET", path: "/v1/openapi.json" }
]

/** The edge of the REST router. */
export const RequestEnvelope = edgeMiddleware({
  api: ScaledgerApi,
  extraRoutes: RestExtraRoutes,
  bearerChallenge: true
})
