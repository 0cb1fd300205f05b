import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { isJsonContentType, jsonTooDeep, MAX_JSON_DEPTH } from "@scaledger/domain/JsonText"
import { Cause, Effect, Layer, Option, Stream } from "effect"
import * as JsonRpc from "./JsonRpc.js"
import type { McpSettings } from "./McpConfig.js"
import { makeMcpServer, SUPPORTED_PROTOCOL_VERSIONS } from "./McpServer.js"

export const MAX_MESSAGE_BYTES = 1024 * 1024
/**
 * How much of an oversized message is read and thrown away, at most, before the 413: answering while the client is
 * still sending makes the closing socket reset the connection, and the client never reads the answer.
 */
const DRAIN_MAX_BYTES = 32 * MAX_MESSAGE_BYTES
const DRAIN_MAX_MS = 5_000

const tooLarge = HttpServerResponse.unsafeJson(
  JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "The message exceeds 1 MiB."),
  { status: 413, headers: { connection: "close" } }
)

/** The `MCP-Protocol-Version` header; sent twice with one value (which Node joins with `, `), that value. */
const protocolVersionOf = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const values = new Set(header.split(",").map((value) => value.trim()))
  return values.size === 1 ? [...values][0] : header
}

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
const OTHER_METHODS = ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

const answer = (status: number, body?: unknown, headers: Readonly<Record<string, string>> = {}) =>
  body === undefined
    ? HttpServerResponse.empty({ status, headers })
    : HttpServerResponse.unsafeJson(body, { status, headers })

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

      const post = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!server.originAllowed(request.headers["origin"])) {
          return answer(
            403,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Origin ${request.headers["origin"]} is not allowed.`
            )
          )
        }
        const version = protocolVersionOf(request.headers["mcp-protocol-version"])
        if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
          return answer(
            400,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Unsupported MCP-Protocol-Version ${version}: supported are ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}.`
            )
          )
        }
        const contentType = request.headers["content-type"]
        if (contentType !== undefined && !isJsonContentType(contentType)) {
          return answer(
            415,
            JsonRpc.error(
              null,
              JsonRpc.ErrorCodes.InvalidRequest,
              `Messages are JSON (Content-Type: application/json); got ${JSON.stringify(contentType)}.`
            )
          )
        }
        const declared = Number(request.headers["content-length"] ?? 0)
        if (declared > DRAIN_MAX_BYTES) return tooLarge
        const read = yield* readMessage(request)
        if (read._tag === "TooLarge") return tooLarge
        if (read._tag === "CutOff") {
          return answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body was cut off."))
        }
        const text = read.text
        if (text === undefined) {
          return answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body is not UTF-8."))
        }
        if (jsonTooDeep(text, MAX_JSON_DEPTH)) {
          return answer(
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
          return answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body is not valid JSON."))
        }
        const reply = yield* server.handle({ body, authorization: authorizationHeaders(request) })
        return answer(reply.status, reply.body, reply.headers)
      }).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.as(
            Effect.logError("MCP request failed", defect),
            answer(500, JsonRpc.error(null, JsonRpc.ErrorCodes.InternalError, "The server failed unexpectedly."))
          )
        )
      )

      for (const path of PATHS) {
        yield* router.add("POST", path, post)
        for (const method of OTHER_METHODS) yield* router.add(method, path, Effect.succeed(methodNotAllowed))
      }
    })
  )

/** Unknown paths answer a JSON-RPC error rather than an empty 404. */
export const McpNotFound = HttpLayerRouter.middleware(
  (httpEffect) =>
    Effect.catchAllCause(httpEffect, (cause) => {
      const failure = Cause.failureOption(cause)
      const notFound = Option.isSome(failure) && HttpServerError.isServerError(failure.value) &&
        failure.value._tag === "RouteNotFound"
      return notFound
        ? Effect.succeed(
          answer(404, JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "Not found: the MCP endpoint is /mcp."))
        )
        : Effect.failCause(cause)
    }),
  { global: true }
)

export const McpRoutesLive = (settings: McpSettings) => Layer.mergeAll(McpRoutes(settings), McpNotFound)
