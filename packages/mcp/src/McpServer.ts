import type { Account } from "@scaledger/domain/Auth"
import { CurrentRequest, type RequestContext } from "@scaledger/domain/RequestContext"
import { Context, Effect, FiberRef, Option } from "effect"
import * as JsonRpc from "./JsonRpc.js"
import type { McpSettings } from "./McpConfig.js"
import { boundedMessage, decodeArguments, errorCodeOf, inputSchemaOf, type McpTool, type ToolError } from "./McpTool.js"

export const SUPPORTED_PROTOCOL_VERSIONS: ReadonlyArray<string> = ["2025-03-26", "2025-06-18", "2025-11-25"]
export const LATEST_PROTOCOL_VERSION = "2025-11-25"
const SERVER_VERSION = "0.1.0"

export const INSTRUCTIONS = [
  "Scaledger keeps the record of tokenized-stock holdings on chain (Robinhood Chain stock tokens, ERC-8056): each",
  "token's multiplier history (dividends and splits arrive as multiplier changes with no wallet transaction),",
  "positions, FIFO lots, disposals, realised gains and income from multiplier growth, in the account's reporting",
  "currency. Every tool is read-only.",
  "Unknown values are null, never zero: a null cost basis, price or income means it cannot be established from the",
  "record (a missing price, an unconfirmed label, history before coverage), and the answer says why where it can.",
  "Every result carries `evidence`: the event ids, blocks, exchange rates (with source and ECB date), feed rounds and",
  "filing accession numbers behind its figures. Quote them when you explain an answer.",
  "Amounts are decimal strings. Dates are YYYY-MM-DD (UTC). Tools that read an account need the API key",
  "(`Authorization: Bearer sk_live_…`); while the account's history is being rebuilt they answer a tool error",
  "`replay_in_progress` with `retryAfter` seconds."
].join(" ")

/** How the MCP server checks an API key: the same keys as the REST API, provided by the composition root. */
export class McpKeys extends Context.Tag("@scaledger/mcp/McpKeys")<McpKeys, {
  readonly authenticate: (key: string) => Effect.Effect<Option.Option<Account>, { readonly _tag: string }>
  /**
   * Counts one tool call against the key's requests a minute (the same budget as its REST requests): undefined when
   * it may go on, else how long to wait. Absent: no limit.
   */
  readonly admit?: (
    key: string
  ) => Effect.Effect<{ readonly retryAfterSeconds: number; readonly limitPerMinute: number } | undefined>
}>() {}

/** The tools this server offers, each bound to the services it reads. */
export class McpToolkit extends Context.Tag("@scaledger/mcp/McpToolkit")<McpToolkit, ReadonlyArray<McpTool>>() {}

/** Methods anyone may call; everything else needs a key. */
const OPEN_METHODS: ReadonlySet<string> = new Set(["initialize", "ping", "tools/list"])

export interface HttpAnswer {
  readonly status: number
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export interface IncomingMessage {
  readonly body: unknown
  /** Every `Authorization` header of the request, as sent (more than one is refused where a key is needed). */
  readonly authorization: ReadonlyArray<string>
}

const unauthorized = (id: JsonRpc.JsonRpcId, keySent: boolean | "several"): HttpAnswer => ({
  status: 401,
  headers: {
    "www-authenticate": keySent === "several"
      ? `Bearer realm="scaledger", error="invalid_request"`
      : keySent
      ? `Bearer realm="scaledger", error="invalid_token"`
      : `Bearer realm="scaledger"`
  },
  body: JsonRpc.error(
    id,
    JsonRpc.ErrorCodes.Unauthorized,
    keySent === "several"
      ? "More than one Authorization header: send exactly one."
      : keySent
      ? "The API key is unknown or revoked."
      : "This method needs an API key: send `Authorization: Bearer <API_KEY>`."
  )
})

/** `Bearer <token>`, scheme case-insensitive, one or more spaces (RFC 6750: `1*SP`), a token without spaces. */
const bearerToken = (header: string | undefined): Option.Option<string> => {
  const match = header === undefined ? null : /^Bearer +([^\s]+)$/i.exec(header)
  return match === null ? Option.none() : Option.some(match[1]!)
}

/** A tool error: `code` and `message` as the REST envelope has them, with the same `docUrl` and `requestId`. */
const toolErrorResult = (error: ToolError, request: RequestContext) => {
  const code = errorCodeOf(error)
  const structured = {
    code,
    message: error.message,
    docUrl: `${request.docBase}/docs/errors#${code}`,
    requestId: request.requestId,
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(code === "replay_in_progress" || code === "rate_limited" ? { retryAfter: error.retryAfterSeconds ?? 1 } : {})
  }
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured, isError: true }
}

/**
 * The MCP server over JSON-RPC 2.0: answers one decoded POST body. Stateless (no session id): every request stands
 * alone, so any instance behind a balancer can answer it.
 */
export const makeMcpServer = (settings: McpSettings) =>
  Effect.gen(function*() {
    const keys = yield* McpKeys
    const tools = yield* McpToolkit
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const listed = tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputSchemaOf(tool.input),
      annotations: {
        title: tool.title,
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: tool.openWorld === true
      }
    }))

    const initialize = (params: Readonly<Record<string, unknown>>) => {
      const asked = params.protocolVersion
      const protocolVersion = typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
        ? asked
        : LATEST_PROTOCOL_VERSION
      return {
        protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: "scaledger", title: "Scaledger", version: SERVER_VERSION },
        instructions: INSTRUCTIONS
      }
    }

    const callTool = (params: Readonly<Record<string, unknown>>, account: Account) =>
      Effect.gen(function*() {
        const request = yield* FiberRef.get(CurrentRequest)
        const name = params.name
        const tool = typeof name === "string" ? byName.get(name) : undefined
        if (tool === undefined) {
          const message = name === undefined
            ? "tools/call needs params.name, the name of a tool (tools/list lists them)."
            : typeof name === "string"
            ? `Unknown tool: ${boundedMessage(name)}`
            : `params.name must be a tool's name (a string), not ${
              boundedMessage(JSON.stringify(name) ?? String(name))
            }.`
          return { _tag: "RpcError" as const, code: JsonRpc.ErrorCodes.InvalidParams, message }
        }
        const args = yield* decodeArguments(tool.input)(params.arguments ?? {}).pipe(Effect.either)
        if (args._tag === "Left") {
          return {
            _tag: "Result" as const,
            value: toolErrorResult({
              _tag: "InvalidRequest",
              message: `Invalid arguments for ${tool.name}: ${args.left.message}`,
              ...(args.left.issues === undefined ? {} : { details: { issues: args.left.issues } })
            }, request)
          }
        }
        const answer = yield* tool.run(args.right, account).pipe(
          Effect.map((structured) => ({
            content: [{ type: "text", text: JSON.stringify(structured) }],
            structuredContent: structured
          })),
          Effect.catchAll((error) =>
            Effect.as(
              error._tag === "SqlError"
                ? Effect.logWarning(`MCP tool ${tool.name}: database error`, error)
                : Effect.void,
              toolErrorResult(error, request)
            )
          ),
          Effect.catchAllDefect((defect) =>
            Effect.as(
              Effect.logError(`MCP tool ${tool.name} failed`, defect),
              toolErrorResult({ _tag: "Internal", message: "The tool failed unexpectedly." }, request)
            )
          )
        )
        return { _tag: "Result" as const, value: answer }
      })

    const authenticate = (authorization: string | undefined) =>
      Effect.gen(function*() {
        const token = bearerToken(authorization)
        if (Option.isNone(token)) return Option.none<Account>()
        return yield* keys.authenticate(token.value)
      })

    const keyLookupFailed = (id: JsonRpc.JsonRpcId, error: unknown) =>
      Effect.as(Effect.logError("MCP key lookup failed", error), {
        status: 503,
        body: JsonRpc.error(id, JsonRpc.ErrorCodes.InternalError, "The database is not reachable; retry later.")
      })

    /** One POST body in, one HTTP answer out. */
    const handle = (message: IncomingMessage): Effect.Effect<HttpAnswer> =>
      Effect.gen(function*() {
        // DECISIONS.md (MCP): a batch array answers 400 with -32600, whatever the protocol version.
        if (Array.isArray(message.body)) {
          return {
            status: 400,
            body: JsonRpc.error(null, JsonRpc.ErrorCodes.InvalidRequest, "Batches are not supported: send one message.")
          }
        }
        const parsed = JsonRpc.classify(message.body)
        switch (parsed._tag) {
          case "Notification":
          case "Response":
            return { status: 202 }
          case "Invalid":
            return { status: 400, body: JsonRpc.error(parsed.id, JsonRpc.ErrorCodes.InvalidRequest, parsed.message) }
          case "Request": {
            const { id, method, params } = parsed.request
            if (method === "initialize") return { status: 200, body: JsonRpc.result(id, initialize(params)) }
            if (method === "ping") return { status: 200, body: JsonRpc.result(id, {}) }
            if (method === "tools/list") return { status: 200, body: JsonRpc.result(id, { tools: listed }) }
            if (message.authorization.length > 1) return unauthorized(id, "several")
            const authorization = message.authorization[0]
            const lookup = yield* Effect.either(authenticate(authorization))
            // The key cannot be checked (the database is down): 503, answering the request's id as JSON-RPC asks.
            if (lookup._tag === "Left") return yield* keyLookupFailed(id, lookup.left)
            const account = lookup.right
            if (Option.isNone(account)) {
              return unauthorized(id, Option.isSome(bearerToken(authorization)))
            }
            if (method !== "tools/call") {
              return {
                status: 200,
                body: JsonRpc.error(id, JsonRpc.ErrorCodes.MethodNotFound, `Method not found: ${method}`)
              }
            }
            const refused = keys.admit === undefined
              ? undefined
              : yield* keys.admit(Option.getOrThrow(bearerToken(authorization)))
            if (refused !== undefined) {
              return {
                status: 200,
                body: JsonRpc.result(
                  id,
                  toolErrorResult({
                    _tag: "RateLimited",
                    message:
                      `More than ${refused.limitPerMinute} requests a minute with this key; retry after ${refused.retryAfterSeconds} s.`,
                    details: refused,
                    retryAfterSeconds: refused.retryAfterSeconds
                  }, yield* FiberRef.get(CurrentRequest))
                )
              }
            }
            const outcome = yield* callTool(params, account.value)
            return outcome._tag === "RpcError"
              ? { status: 200, body: JsonRpc.error(id, outcome.code, outcome.message) }
              : { status: 200, body: JsonRpc.result(id, outcome.value) }
          }
        }
      })

    const originAllowed = (origin: string | undefined): boolean => {
      if (origin === undefined) return true
      if (settings.allowedOrigins !== undefined) return settings.allowedOrigins.includes(origin)
      try {
        const url = new URL(origin)
        return ["http:", "https:"].includes(url.protocol) && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname)
      } catch {
        return false
      }
    }

    return { handle, originAllowed, openMethods: OPEN_METHODS } as const
  })

export type McpServer = Effect.Effect.Success<ReturnType<typeof makeMcpServer>>
