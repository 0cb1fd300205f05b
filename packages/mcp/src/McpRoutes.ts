import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Ids from "@scaledger/db/Ids"
import type { ErrorCode } from "@scaledger/domain/Errors"
import { isJsonContentType, jsonTooDeep, MAX_JSON_DEPTH } from "@scaledger/domain/JsonText"
import { CurrentRequest } from "@scaledger/domain/RequestContext"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Cause, Effect, FiberRef, Layer, Option, Stream } from "effect"
import * as JsonRpc from "./JsonRpc.js"
import { hostAllowed, type McpSettings } from "./McpConfig.js"
import { makeMcpServer, SUPPORTED_PROTOCOL_VERSIONS } from "./McpServer.js"

export const MAX_MESSAGE_BYTES = 1024 * 1024
/**
 * How much of an oversized message is read and thrown away, at most, before the 413: answering while the client is
 * still sending makes the closing socket reset the connection, and the client never reads the answer.
 */
const DRAIN_MAX_BYTES = 32 * MAX_MESSAGE_BYTES
const DRAIN_MAX_MS = 5_000

/** The `MCP-Protocol-Version` header; sent twice with one value (which Node joins with `, `), that value. */
const protocolVersionOf = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const values = new Set(header.split(",").map((value) => value.trim()))
  return values.size === 1 ? [...values][0] : header
}

/** Whether a decoded message is an `initialize` request (the one message the version header does not bind). */
const isInitialize = (body: unknown): boolean =>
  typeof body === "object" && body !== null && !Array.isArray(body) &&
  (body as { readonly method?: unknown }).method === "initialize"

type ReadMessage =
  | { readonly _tag: "Read"; readonly text: string | undefined }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "CutOff" }

/**
 * The body as text (undefined when it is not UTF-8), counted as it arrives. Past `MAX_MESSAGE_BYTES` nothing more
 * is kept and the rest is read into the void, up to `DRAIN_MAX_BYTES` or `DRAIN_MAX_MS`, before it is `TooLarge`.
 */
const readMessage = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    let overSince: number | undefined
    return request.stream.pipe(
      Stream.takeWhile(() =>
        overSince === undefined || (size <= DRAIN_MAX_BYTES && Date.now() - overSince < DRAIN_MAX_MS)
      ),
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          size += chunk.length
          if (size <= MAX_MESSAGE_BYTES) chunks.push(chunk)
          else overSince ??= Date.now()
        })
      ),
      Effect.map((): ReadMessage => {
        if (overSince !== undefined) return { _tag: "TooLarge" }
        try {
          return { _tag: "Read", text: new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks)) }
        } catch {
          return { _tag: "Read", text: undefined }
        }
      }),
      Effect.orElseSucceed((): ReadMessage => ({ _tag: "CutOff" }))
    )
  })

/** Every `Authorization` header as sent (Node's `headers` keeps only the first). */
const authorizationHeaders = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const source = request.source as { readonly headersDistinct?: Readonly<Record<string, ReadonlyArray<string>>> }
  const distinct = typeof source === "object" && source !== null ? source.headersDistinct?.["authorization"] : undefined
  if (distinct !== undefined) return distinct
  const header = request.headers["authorization"]
  return header === undefined ? [] : [header]
}

const PATHS = ["/mcp", "/"] as const

/** The error code (of `/docs/errors`, as REST names it) a JSON-RPC error answered with this HTTP status stands for. */
const errorCodeOf = (status: number, rpcCode: number): ErrorCode => {
  switch (status) {
    case 401:
      return "unauthorized"
    case 404:
      return "not_found"
    case 405:
      return "method_not_allowed"
    case 413:
      return "payload_too_large"
    case 415:
      return "unsupported_media_type"
    case 500:
      return "internal_error"
    case 503:
      return "service_unavailable"
  }
  if (rpcCode === JsonRpc.ErrorCodes.MethodNotFound) return "not_found"
  if (rpcCode === JsonRpc.ErrorCodes.InternalError) return "internal_error"
  return "invalid_request"
}

/**
 * One answer. A JSON-RPC error gets `error.data`: `code` (the error code REST would answer), `docUrl` (its section of
 * `/docs/errors`, as in the REST envelope) and `requestId` (the `Request-Id` header), besides any data it had.
 */
const answer = (status: number, body?: unknown, headers: Readonly<Record<string, string>> = {}) =>
  Effect.map(FiberRef.get(CurrentRequest), (request) => {
    if (body === undefined) return HttpServerResponse.empty({ status, headers })
    const error = (body as { error?: { code: number; data?: unknown } }).error
    if (typeof error !== "object" || error === null || typeof error.code !== "number") {
      return HttpServerResponse.unsafeJson(body, { status, headers })
    }
    const code = errorCodeOf(status, error.code)
    const data = typeof error.data === "object" && error.data !== null ? error.data : {}
    const linked = {
      ...body,
      error: {
        ...error,
        data: { ...data, code, docUrl: `${request.docBase}/docs/errors#${code}`, requestId: request.requestId }
      }
    }
    return HttpServerResponse.unsafeJson(linked, { status, headers })
  })

const tooLarge = answer(
  413,
  JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "The message exceeds 1 MiB."),
  { connection: "close" }
)

/** This server sends no event stream: every method but POST answers 405. */
const methodNotAllowed = answer(
  405,
  JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "Method not allowed: the MCP endpoint takes POST only."),
  { allow: "POST" }
)

/**
 * The MCP endpoint: JSON-RPC 2.0 over HTTP POST at `/mcp` (and `/`), plain `application/json` answers, no session,
 * no event stream.
 */
export const McpRoutes = (settings: McpSettings) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const server = yield* makeMcpServer(settings)

      /**
       * A request for a host not this server's, or from an origin not allowed, is refused whatever its method (the
       * transport spec: every request; DNS rebinding).
       */
      const originRefused = (request: HttpServerRequest.HttpServerRequest) =>
        !hostAllowed(settings, request.headers["host"])
          ? answer(
            403,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Host ${shownValue(request.headers["host"] ?? "")} is not this server's: list it in MCP_ALLOWED_HOSTS.`
            )
          )
          : server.originAllowed(request.headers["origin"]) ?
          undefined :
          answer(
            403,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Origin ${request.headers["origin"]} is not allowed.`
            )
          )

      const otherMethod = Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) => originRefused(request) ?? methodNotAllowed
      )

      const post = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const refused = originRefused(request)
        if (refused !== undefined) return yield* refused
        const version = protocolVersionOf(request.headers["mcp-protocol-version"])
        const unsupportedVersion = version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)
        const contentType = request.headers["content-type"]
        if (contentType !== undefined && !isJsonContentType(contentType)) {
          return yield* answer(
            415,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Messages are JSON (Content-Type: application/json); got ${JSON.stringify(contentType)}.`
            )
          )
        }
        const declared = Number(request.headers["content-length"] ?? 0)
        if (declared > DRAIN_MAX_BYTES) return yield* tooLarge
        const read = yield* readMessage(request)
        if (read._tag === "TooLarge") return yield* tooLarge
        if (read._tag === "CutOff") {
          return yield* answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body was cut off."))
        }
        const text = read.text
        if (text === undefined) {
          return yield* answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body is not UTF-8."))
        }
        if (jsonTooDeep(text, MAX_JSON_DEPTH)) {
          return yield* answer(
            400,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `The message nests deeper than ${MAX_JSON_DEPTH} levels.`
            )
          )
        }
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          return yield* answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body is not valid JSON."))
        }
        // The header names the version `initialize` negotiated, so it binds the requests after it; `initialize` itself
        // negotiates (answering 2025-11-25 for a version this server does not speak), as the SDK's own server does.
        if (unsupportedVersion && !isInitialize(body)) {
          return yield* answer(
            400,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Unsupported MCP-Protocol-Version ${version}: supported are ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}.`
            )
          )
        }
        const reply = yield* server.handle({ body, authorization: authorizationHeaders(request) })
        return yield* answer(reply.status, reply.body, reply.headers)
      }).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(
            Effect.logError("MCP request failed", defect),
            answer(500, JsonRpc.error(null, JsonRpc.ErrorCodes.InternalError, "The server failed unexpectedly."))
          )
        )
      )

      // Every method on the endpoint is routed (TRACE, PROPFIND, … too): POST is answered, any other is 405, never
      // the 404 "the MCP endpoint is /mcp" of a path that is not the endpoint.
      const endpoint = Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) => request.method === "POST" ? post : otherMethod
      )
      for (const path of PATHS) yield* router.add("*", path, endpoint)
    })
  )

/**
 * The origin error `docUrl`s point at: `PUBLIC_BASE_URL`'s; else the REST listener (`PORT`) on the address the client
 * reached this one on (`/docs/errors` is served there); without a REST port (tests), this listener's own address.
 */
export const mcpDocOrigin = (
  settings: Pick<McpSettings, "publicBaseUrl" | "restPort">,
  socket: { readonly localAddress?: string | undefined; readonly localPort?: number | undefined }
): string => {
  if (settings.publicBaseUrl !== undefined) return settings.publicBaseUrl
  let address = socket.localAddress ?? "127.0.0.1"
  if (address.startsWith("::ffff:")) address = address.slice(7)
  const host = address.includes(":") ? `[${address}]` : address
  const port = settings.restPort ?? socket.localPort
  return `http://${host}${port === undefined ? "" : `:${port}`}`
}

/**
 * The edge of the MCP listener: every answer carries a `Request-Id` header (the `requestId` of JSON-RPC errors'
 * `data` and of tool errors), and unknown paths answer a JSON-RPC error rather than an empty 404.
 */
export const McpEdge = (settings: McpSettings) =>
  HttpLayerRouter.middleware(
    (httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const requestId = `req_${Ids.randomBase62(20)}`
        const socket = (request.source as { readonly socket?: Parameters<typeof mcpDocOrigin>[1] }).socket ?? {}
        const context = {
          requestId,
          get docBase() {
            return mcpDocOrigin(settings, socket)
          }
        }
        return httpEffect.pipe(
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOption(cause)
            const notFound = Option.isSome(failure) && HttpServerError.isServerError(failure.value) &&
              failure.value._tag === "RouteNotFound"
            return notFound
              ? answer(
                404,
                JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "Not found: the MCP endpoint is /mcp.")
              )
              : Effect.failCause(cause)
          }),
          Effect.map((response) => HttpServerResponse.setHeader(response, "request-id", requestId)),
          Effect.locally(CurrentRequest, context)
        )
      }),
    { global: true }
  )

export const McpRoutesLive = (settings: McpSettings) => Layer.mergeAll(McpRoutes(settings), McpEdge(settings))
