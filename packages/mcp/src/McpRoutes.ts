import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Effect, Layer, Option } from "effect"
import * as JsonRpc from "./JsonRpc.js"
import type { McpSettings } from "./McpConfig.js"
import { makeMcpServer, SUPPORTED_PROTOCOL_VERSIONS } from "./McpServer.js"

export const MAX_MESSAGE_BYTES = 1024 * 1024

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
        const version = request.headers["mcp-protocol-version"]
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
        if (Number(request.headers["content-length"] ?? 0) > MAX_MESSAGE_BYTES) {
          return answer(413, JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "The message exceeds 1 MiB."))
        }
        const text = yield* request.text.pipe(
          HttpIncomingMessage.withMaxBodySize(Option.some(MAX_MESSAGE_BYTES)),
          Effect.option
        )
        if (Option.isNone(text)) {
          return answer(413, JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "The message exceeds 1 MiB."))
        }
        let body: unknown
        try {
          body = JSON.parse(text.value)
        } catch {
          return answer(400, JsonRpc.error(null, JsonRpc.ErrorCodes.ParseError, "The body is not valid JSON."))
        }
        const reply = yield* server.handle({ body, authorization: request.headers["authorization"] })
        return answer(reply.status, reply.body, reply.headers)
      })

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
