import { isDataException } from "@scaledger/db/SqlErrors"
import type { Account } from "@scaledger/domain/Auth"
import { hasControlCharacter } from "@scaledger/domain/Basic"
import { decodeIssues, type ErrorCode } from "@scaledger/domain/Errors"
import { Data, Effect, JSONSchema, ParseResult, Schema } from "effect"

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
  /** Whether the tool reads an outside service (SEC EDGAR) besides the service's own record (`openWorldHint`). */
  readonly openWorld?: boolean
  readonly run: (args: any, account: Account) => Effect.Effect<ToolAnswer, ToolError, R>
}

export const tool = <A, I, R>(definition: {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<A, I, never>
  readonly openWorld?: boolean
  readonly run: (args: A, account: Account) => Effect.Effect<ToolAnswer, ToolError, R>
}): McpTool<R> => definition

const errorCodes: Record<string, ErrorCode> = {
  InvalidRequest: "invalid_request",
  InvalidAddress: "invalid_address",
  InvalidDate: "invalid_date",
  UnsupportedCurrency: "unsupported_currency",
  NotFound: "not_found",
  ReplayInProgress: "replay_in_progress",
  RateLimited: "rate_limited",
  ServiceUnavailable: "service_unavailable",
  SqlError: "service_unavailable"
}

/**
 * The REST error code of a tool failure (`internal_error` for a failure without one). A database error on a value
 * the caller gave (SQLSTATE class 22) is `invalid_request`, as REST answers it: retrying cannot help.
 */
export const errorCodeOf = (error: ToolError): ErrorCode =>
  isDataException(error)
    ? "invalid_request"
    : errorCodes[error._tag] ?? "internal_error"

/** Characters a text argument may have at most (advertised as `maxLength`), by what it names. */
export const TEXT_MAX = { symbol: 64, address: 64, currency: 16, date: 32, decimal: 80 } as const

/**
 * A text argument of at most `max` characters: what is longer names nothing (`invalid_request` by field, as an
 * argument of the wrong type), and no answer repeats it.
 */
export const textArgument = (max: number, description: string, options: { readonly nonEmpty?: boolean } = {}) => {
  // What a refused value is told (else the description reads as the expected type), whichever bound it misses.
  const message = () =>
    options.nonEmpty === true ? `expected text of 1 to ${max} characters` : `expected text of at most ${max} characters`
  return (options.nonEmpty === true
    ? Schema.String.pipe(Schema.minLength(1, { message }), Schema.maxLength(max))
    : Schema.String.pipe(Schema.maxLength(max))).annotations({
      description,
      message,
      // What agents read: the description and the bounds, not the refinements' generated titles.
      jsonSchema: {
        type: "string",
        ...(options.nonEmpty === true ? { minLength: 1 } : {}),
        maxLength: max,
        description
      }
    })
}

/** An optional `limit` argument: an integer from 1 to `max`, `fallback` when absent, with its bounds advertised. */
export const limitArgument = (max: number, fallback: number, description: string) =>
  Schema.optional(
    Schema.Int.pipe(Schema.between(1, max)).annotations({
      jsonSchema: { type: "integer", minimum: 1, maximum: max, default: fallback, description }
    })
  )

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
  const { $defs, $id: _id, $schema: _, ...rest } = JSONSchema.make(schema) as unknown as JsonObject & {
    $defs?: JsonObject
  }
  const plain = inline(rest, $defs ?? {}) as JsonObject
  // A tool without arguments (`Schema.Struct({})`, which Effect renders as "an object or an array"): no property.
  if (plain.type !== "object") return { type: "object", properties: {}, required: [], additionalProperties: false }
  return {
    type: "object",
    properties: {},
    ...plain,
    required: (plain.required as Array<string> | undefined) ?? [],
    additionalProperties: false
  }
}

/** Longest message an argument error carries (a call with thousands of unknown keys would list every one). */
const MAX_ERROR_MESSAGE = 2_000

/** Longest message of one refused argument (`details.issues`). */
const MAX_ISSUE_MESSAGE = 200

/** An argument error's message, cut to `MAX_ERROR_MESSAGE` characters. */
export const boundedMessage = (message: string): string =>
  message.length <= MAX_ERROR_MESSAGE ? message : `${message.slice(0, MAX_ERROR_MESSAGE)}… (cut)`

/**
 * Decodes a tool's arguments: an object (not an array, a string or a number, which `Schema.Struct({})` would take),
 * without unknown fields, so that a misspelt filter is not silently ignored.
 */
export const decodeArguments = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknown(schema, { onExcessProperty: "error", errors: "all" })
  // `Schema.Struct({})` lets any key through, even with `onExcessProperty: "error"`.
  const takesNone = "fields" in schema && Object.keys(schema.fields as object).length === 0
  return (args: unknown) => {
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      return Effect.fail(new ArgumentsRejected({ message: "`arguments` must be an object." }))
    }
    const control = controlCharacterAt(args, [])
    if (control !== undefined) {
      return Effect.fail(
        new ArgumentsRejected({
          message: `${control.length === 0 ? "An argument name" : `\`${control.join(".")}\``} holds a control ` +
            "character (NUL, U+0000–U+001F, U+007F–U+009F), which no argument accepts."
        })
      )
    }
    if (takesNone && Object.keys(args).length > 0) {
      return Effect.fail(
        new ArgumentsRejected({
          message: `This tool takes no arguments; got ${boundedMessage(Object.keys(args).join(", "))}.`
        })
      )
    }
    return Effect.mapError(decode(args), (error) => {
      // Each refused argument by name, as REST lists its fields (`details.issues`), not the schema's type text.
      // Each cut short: a message quotes the value refused, which may be as long as the request.
      const issues = decodeIssues(ParseResult.ArrayFormatter.formatErrorSync(error)).map((issue) => ({
        path: issue.path.map(String),
        message: issue.message.length <= MAX_ISSUE_MESSAGE
          ? issue.message
          : `${issue.message.slice(0, MAX_ISSUE_MESSAGE)}… (cut)`
      }))
      return new ArgumentsRejected({
        message: boundedMessage(
          issues.map((issue) =>
            `${issue.path.length === 0 ? "arguments" : `\`${issue.path.join(".")}\``}: ${issue.message}`
          )
            .join("; ")
        ),
        issues
      })
    })
  }
}

/** The path of the first string (or key) in `value` that holds a control character, as REST refuses them. */
const controlCharacterAt = (value: unknown, path: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (typeof value === "string") return hasControlCharacter(value) ? path : undefined
  if (typeof value !== "object" || value === null) return undefined
  for (const [key, inner] of Object.entries(value)) {
    if (hasControlCharacter(key)) return path
    const found = controlCharacterAt(inner, [...path, key])
    if (found !== undefined) return found
  }
  return undefined
}

/** Why a tool's arguments were refused (a tool error `invalid_request`). */
export class ArgumentsRejected extends Data.TaggedError("ArgumentsRejected")<{
  readonly message: string
  readonly issues?: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly message: string }>
}> {}
