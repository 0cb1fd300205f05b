import { HttpLayerRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { HttpIncomingMessage } from "@effect/platform"
import { Ids } from "@scaledger/db"
import { CurrentRequest, errorBody, ErrorCatalog, type ErrorCode } from "@scaledger/domain"
import { Cause, Chunk, Effect, Option } from "effect"
import { bearerToken } from "../auth/AuthenticationLive.js"
import { HttpConfig } from "../Config.js"

export const MAX_BODY_BYTES = 1024 * 1024

export const errorResponse = (code: ErrorCode, message: string, details?: unknown) =>
  Effect.flatMap(
    errorBody(code, message, details),
    (body) => HttpServerResponse.json(body, { status: ErrorCatalog[code].status }).pipe(Effect.orDie)
  )

const originOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const host = request.headers["host"] ?? "localhost"
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() ?? "http"
  return `${proto}://${host}`
}

const isRequestError = (error: unknown): error is HttpServerError.RequestError =>
  HttpServerError.isServerError(error) && error._tag === "RequestError"

const bodyTooLarge = (error: HttpServerError.RequestError): boolean =>
  String((error.cause as Error | undefined)?.message).includes("maxBytes")

/** What a failure that escaped the API's own error encoding answers. */
const fromCause = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest, requestId: string) => {
  // The framework reports an unreadable body as a defect, so defects are searched as well as failures.
  const failures = [...Chunk.toReadonlyArray(Cause.failures(cause)), ...Chunk.toReadonlyArray(Cause.defects(cause))]
  const requestError = failures.find(isRequestError)
  if (requestError !== undefined && bodyTooLarge(requestError)) {
    return errorResponse("payload_too_large", `The request body exceeds ${MAX_BODY_BYTES} bytes.`)
  }
  if (requestError !== undefined && requestError.reason === "Decode") {
    return errorResponse("invalid_request", "The request body is not valid JSON.")
  }
  if (failures.some((failure) => HttpServerError.isServerError(failure) && failure._tag === "RouteNotFound")) {
    return errorResponse("not_found", `No route for ${request.method} ${request.url.split("?")[0]}.`)
  }
  return Effect.zipRight(
    Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ requestId })),
    errorResponse("internal_error", `The service failed unexpectedly; quote request id ${requestId}.`)
  )
}

/**
 * Wraps every route: gives the request an id (the `Request-Id` header, and `requestId` in error bodies), caps
 * bodies at 1 MiB (413), answers unknown routes, undecodable bodies and defects in the error envelope, and adds
 * `WWW-Authenticate` to every 401.
 */
export const RequestEnvelope = HttpLayerRouter.middleware(
  Effect.gen(function*() {
    const config = yield* HttpConfig
    const configuredOrigin = Option.map(config.publicBaseUrl, (url) => url.origin)
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = `req_${Ids.randomBase62(20)}`
        const context = { requestId, docBase: Option.getOrElse(configuredOrigin, () => originOf(request)) }
        const declaredLength = Number(request.headers["content-length"] ?? 0)
        const response = yield* (declaredLength > MAX_BODY_BYTES
          ? errorResponse("payload_too_large", `The request body exceeds ${MAX_BODY_BYTES} bytes.`)
          : httpEffect.pipe(
            HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : fromCause(cause, request, requestId)
            )
          )).pipe(Effect.locally(CurrentRequest, context))
        const withId = HttpServerResponse.setHeaders(response, {
          "request-id": requestId,
          // A replay settles within seconds: a 409 says when to ask again.
          ...(response.status === 409 && response.headers["retry-after"] === undefined ? { "retry-after": "1" } : {})
        })
        if (withId.status !== 401 || withId.headers["www-authenticate"] !== undefined) return withId
        const keySent = Option.isSome(bearerToken(request.headers["authorization"]))
        return HttpServerResponse.setHeader(
          withId,
          "www-authenticate",
          keySent ? `Bearer realm="scaledger", error="invalid_token"` : `Bearer realm="scaledger"`
        )
      })
  }),
  { global: true }
)
