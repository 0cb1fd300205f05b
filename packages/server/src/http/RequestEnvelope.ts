import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Ids from "@scaledger/db/Ids"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { errorBody, ErrorCatalog, type ErrorCode } from "@scaledger/domain/Errors"
import { CurrentRequest } from "@scaledger/domain/RequestContext"
import { Cause, Chunk, Context, Effect, Option } from "effect"
import { authorizationHeaders, bearerToken } from "../auth/AuthenticationLive.js"
import { HttpConfig } from "../Config.js"
import { LoggedFailure } from "./DatabaseErrors.js"
import { admitBody, BodyRejected, MAX_BODY_BYTES, needsNoChecks } from "./RequestAdmission.js"
import { logRequest } from "./RequestLog.js"
import { makeRouteTable, routesOfApi, type RouteSpec, type RouteTable } from "./RouteTable.js"

export { BodyRejected, jsonTooDeep, MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./RequestAdmission.js"

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

/**
 * The REST listener's origin, for listeners that do not serve `/docs/errors` themselves (the admin listener):
 * `PUBLIC_BASE_URL` when set; else `HOST`:`PORT`, a wildcard `HOST` read as loopback.
 */
export const restOrigin = (
  config: { readonly publicBaseUrl: Option.Option<URL>; readonly host: string; readonly port: number }
): string => {
  if (Option.isSome(config.publicBaseUrl)) return config.publicBaseUrl.value.origin
  const host = config.host === "" || config.host === "0.0.0.0"
    ? "127.0.0.1"
    : config.host === "::"
    ? "[::1]"
    : config.host.includes(":") && !config.host.startsWith("[")
    ? `[${config.host}]`
    : config.host
  return `http://${host}:${config.port}`
}

// ---------------------------------------------------------------------------------------------------------------
// The middleware
// ---------------------------------------------------------------------------------------------------------------

const methodNotAllowed = (method: string, path: string, allowed: ReadonlyArray<string>) =>
  errorResponse(
    "method_not_allowed",
    `${method} is not allowed on ${path}; allowed: ${allowed.join(", ")}.`,
    { allowed },
    { allow: allowed.join(", ") }
  )

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
    // A path the router did not take although the table allows its method (a spelling the router does not
    // normalise) is not found, not a wrong method.
    return allowed.length > 0 && !allowed.includes(request.method)
      ? methodNotAllowed(request.method, path, allowed)
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

/**
 * The edge's own headers: `Request-Id` always, `Retry-After` on 409/429/503, `Connection: close` on 413, the
 * challenge.
 */
const withEdgeHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  bearerChallenge: boolean
) => {
  const status = response.status
  let final: HttpServerResponse.HttpServerResponse
  if (status === 409 || status === 413 || status === 429 || status === 503) {
    const extra: Record<string, string> = { "request-id": requestId }
    // A replay settles within seconds, and so does a database conflict or a reconnect: a 409 or 503 says when to
    // ask again.
    if ((status === 409 || status === 503) && response.headers["retry-after"] === undefined) {
      extra["retry-after"] = "1"
    }
    if (status === 413) extra["connection"] = "close"
    if (status === 429 && response.headers["retry-after"] === undefined) {
      extra["retry-after"] = String(retryAfterOf(response) ?? 1)
    }
    final = HttpServerResponse.setHeaders(response, extra)
  } else final = HttpServerResponse.setHeader(response, "request-id", requestId)
  if (bearerChallenge && status === 401 && final.headers["www-authenticate"] === undefined) {
    const sent = authorizationHeaders(request)
    final = HttpServerResponse.setHeader(
      final,
      "www-authenticate",
      sent.length > 1
        ? `Bearer realm="scaledger", error="invalid_request"`
        : Option.isSome(bearerToken(sent[0]))
        ? `Bearer realm="scaledger", error="invalid_token"`
        : `Bearer realm="scaledger"`
    )
  }
  return final
}

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
  /**
   * `docUrl`s point at the REST listener (`restOrigin`) rather than this one: for a listener that does not serve
   * `/docs/errors` (the admin listener).
   */
  readonly docsOnRestListener?: boolean | undefined
}

/**
 * The HTTP edge of a router: gives each request an id (the `Request-Id` header, and `requestId` in error bodies),
 * refuses bodies over 1 MiB as they stream in (413), bodies that are not JSON (415), JSON nested deeper than 32 levels
 * and NUL characters (400), answers unknown routes (404) and wrong methods (405 with `Allow`), turns defects into
 * the error envelope, adds `WWW-Authenticate` to 401s and `Retry-After` to 409s, 429s and 503s, and logs one line per
 * request.
 */
export const edgeMiddleware = (options: EdgeOptions) =>
  HttpLayerRouter.middleware(
    Effect.gen(function*() {
      const config = yield* HttpConfig
      const routes = makeRouteTable([...(options.api ? routesOfApi(options.api) : []), ...options.extraRoutes])
      const acceptsBodies = options.acceptsBodies ?? true
      return (httpEffect) =>
        Effect.withFiberRuntime<
          HttpServerResponse.HttpServerResponse,
          Effect.Effect.Error<typeof httpEffect> | BodyRejected
        >((fiber) => {
          const started = Date.now()
          const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
          const requestId = `req_${Ids.randomBase62(20)}`
          // Only error bodies read the origin: worked out when one does.
          const context = {
            requestId,
            get docBase() {
              return options.docsOnRestListener === true
                ? restOrigin(config)
                : docOrigin(config, request.headers, NodeHttpServerRequest.toIncomingMessage(request).socket ?? {})
            }
          }
          // An empty path parameter (`/v1/wallets/`, `/v1/fx/SGD/`) names no resource: not found, as
          // `/v1/settings/` is, rather than the route's answer for an empty id.
          const path = request.url.split("?")[0] ?? "/"
          const shadowed = routes.shadowedMethod(path, request.method)
          const routed = routes.onlyWithEmptyParameter(path)
            ? errorResponse("not_found", `No route for ${request.method} ${path}.`)
            : shadowed !== undefined
            ? methodNotAllowed(request.method, path, shadowed)
            : httpEffect
          const admitted = needsNoChecks(request) ? routed : admitBody(request, acceptsBodies).pipe(
            Effect.flatMap((checked) => Effect.provideService(routed, HttpServerRequest.HttpServerRequest, checked))
          )
          return admitted.pipe(
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.failCause(cause)
                : fromCause(cause, request, requestId, routes)
            ),
            Effect.locally(CurrentRequest, context),
            Effect.map((response) => {
              const final = withEdgeHeaders(response, request, requestId, options.bearerChallenge === true)
              if (options.logRequests !== false) {
                logRequest(fiber, () => ({
                  requestId,
                  method: request.method,
                  // The path only: query strings can hold user data.
                  path: (request.url.split("?")[0] ?? "/").slice(0, 200),
                  status: final.status,
                  durationMs: Date.now() - started
                }))
              }
              return final
            })
          )
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
