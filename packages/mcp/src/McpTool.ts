import type { Account } from "@scaledger/domain/Auth"
import type { ErrorCode } from "@scaledger/domain/Errors"
import type { Effect } from "effect"
import { JSONSchema, Schema } from "effect"

/** What a tool's failure says: one of the REST error codes, so an agent and a REST client read the same words. */
export interface ToolError {
  readonly _tag: string
  readonly message: string
  readonly details?: unknown
  readonly retryAfterSeconds?: number | undefined
}

/** The answer of a tool: its REST twin's payload plus the `evidence` behind it. */
export type ToolAnswer = Readonly<Record<string, unknown>> & { readonly evidence: unknown }

/**
 * One read-only MCP tool. `input` decodes the call's `arguments` (and gives the advertised JSON Schema); `run`
 * answers for the key's account by calling the same service as the tool's REST twin.
 */
export interface McpTool<R = never> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<any, any, never>
  readonly run: (args: any, account: Account) => Effect.Effect<ToolAnswer, ToolError, R>
}

export const tool = <A, I, R>(definition: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<A, I, never>
  readonly run: (args: A, account: Account) => Effect.Effect<ToolAnswer, ToolError, R>
}): McpTool<R> => definition

const errorCodes: Record<string, ErrorCode> = {
  InvalidRequest: "invalid_request",
  InvalidAddress: "invalid_address",
  InvalidDate: "invalid_date",
  UnsupportedCurrency: "unsupported_currency",
  NotFound: "not_found",
  ReplayInProgress: "replay_in_progress",
  ServiceUnavailable: "service_unavailable",
  SqlError: "service_unavailable"
}

/** The REST error code of a tool failure (`internal_error` for a failure without one). */
export const errorCodeOf = (error: ToolError): ErrorCode => errorCodes[error._tag] ?? "internal_error"

type JsonObject = Record<string, unknown>

/** Replaces every `$ref` with its definition, so the schema is one plain object as MCP clients expect. */
const inline = (node: unknown, defs: JsonObject): unknown => {
  if (Array.isArray(node)) return node.map((item) => inline(item, defs))
  if (typeof node !== "object" || node === null) return node
  const object = node as JsonObject
  if (typeof object.$ref === "string") {
    const name = object.$ref.replace(/^#\/\$defs\//, "")
    return inline(defs[name], defs)
  }
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, inline(value, defs)]))
}

/**
 * The tool's `inputSchema`: a plain JSON Schema object (`type`, `properties`, `required` at the top level, no
 * `$ref`), generated from the Effect Schema that decodes the arguments.
 */
export const inputSchemaOf = (schema: Schema.Schema<any, any, never>): JsonObject => {
  const { $defs, $schema: _, ...rest } = JSONSchema.make(schema) as unknown as JsonObject & { $defs?: JsonObject }
  const plain = inline(rest, $defs ?? {}) as JsonObject
  return { type: "object", properties: {}, ...plain, required: (plain.required as Array<string> | undefined) ?? [] }
}

/** Decodes a tool's arguments; unknown fields are refused so that a misspelt filter is not silently ignored. */
export const decodeArguments = <A, I>(schema: Schema.Schema<A, I, never>) =>
  Schema.decodeUnknown(schema, { onExcessProperty: "error", errors: "all" })
