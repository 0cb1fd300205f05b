/** JSON-RPC 2.0 (https://www.jsonrpc.org/specification) as MCP uses it over HTTP POST. */

export type JsonRpcId = string | number | null

export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Implementation-defined: the method needs an API key (sent with HTTP 401). */
  Unauthorized: -32001
} as const

export interface JsonRpcRequest {
  readonly id: JsonRpcId
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
}

export type Parsed =
  | { readonly _tag: "Request"; readonly request: JsonRpcRequest }
  | { readonly _tag: "Notification"; readonly method: string }
  | { readonly _tag: "Response" }
  | { readonly _tag: "Invalid"; readonly id: JsonRpcId; readonly message: string }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * MCP's ids are strings or integers. A number id must be a safe integer: a fraction is no MCP id, and beyond ±(2^53−1)
 * the decoded number is not the one sent, so the answer could not carry the request's id back.
 */
const isId = (value: unknown): value is JsonRpcId =>
  typeof value === "string" || Number.isSafeInteger(value) || value === null

/** Sorts one decoded JSON value into what the transport answers: a request, a notification, or a malformed message. */
export const classify = (message: unknown): Parsed => {
  if (!isRecord(message)) return { _tag: "Invalid", id: null, message: "A JSON-RPC message must be an object." }
  const id = "id" in message && isId(message.id) ? message.id : null
  if (message.jsonrpc !== "2.0") return { _tag: "Invalid", id, message: "`jsonrpc` must be \"2.0\"." }
  if (!("method" in message)) {
    // A client's answer to a server request: this server sends none, so it is acknowledged and dropped.
    if ("result" in message || "error" in message) return { _tag: "Response" }
    return { _tag: "Invalid", id, message: "`method` is missing." }
  }
  if (typeof message.method !== "string") return { _tag: "Invalid", id, message: "`method` must be a string." }
  if ("id" in message && !isId(message.id)) {
    return {
      _tag: "Invalid",
      id: null,
      message: "`id` must be a string or an integer within ±9007199254740991 (2^53−1)."
    }
  }
  // JSON-RPC allows a null id; MCP does not (a request's id MUST NOT be null).
  if ("id" in message && message.id === null) {
    return { _tag: "Invalid", id: null, message: "`id` must not be null: MCP requests carry a string or a number." }
  }
  if ("params" in message && message.params !== undefined && !isRecord(message.params)) {
    return { _tag: "Invalid", id, message: "`params` must be an object." }
  }
  if (!("id" in message)) return { _tag: "Notification", method: message.method }
  const params = isRecord(message.params) ? message.params : {}
  return { _tag: "Request", request: { id, method: message.method, params } }
}

export const result = (id: JsonRpcId, value: unknown) => ({ jsonrpc: "2.0" as const, id, result: value })

export const error = (id: JsonRpcId, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0" as const,
  id,
  error: data === undefined ? { code, message } : { code, message, data }
})
