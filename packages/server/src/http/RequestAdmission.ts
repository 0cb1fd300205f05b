import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { hasControlCharacter } from "@scaledger/domain/Basic"
import type { ErrorCode } from "@scaledger/domain/Errors"
import { isJsonContentType, jsonTooDeep, MAX_JSON_DEPTH } from "@scaledger/domain/JsonText"
import { Data, Effect, Stream } from "effect"
import type { IncomingMessage } from "node:http"

/**
 * What the edge checks before any route runs (`RequestEnvelope`): the request target, the body's size, media type,
 * nesting and characters; the body is read here, counted as it arrives.
 */
export const MAX_BODY_BYTES = 1024 * 1024
export { jsonTooDeep, MAX_JSON_DEPTH }
// ---------------------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------------------

/** A request body refused at the edge. */
export class BodyRejected extends Data.TaggedError("BodyRejected")<{
  readonly code: ErrorCode
  readonly message: string
  readonly details?: unknown
}> {}

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
/** The methods of the operations that take a JSON body (every POST, PUT and PATCH; no DELETE). */
const PAYLOAD_METHODS = new Set(["POST", "PUT", "PATCH"])

const hasBody = (headers: Readonly<Record<string, string | undefined>>) =>
  headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0

const notJson = (contentType: string | undefined) =>
  new BodyRejected({
    code: "unsupported_media_type",
    message: `Request bodies must be JSON (Content-Type: application/json); got ${
      contentType === undefined ? "no Content-Type" : JSON.stringify(contentType)
    }.`,
    details: { supported: ["application/json"] }
  })

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

/**
 * Printable ASCII without `%` (a target that decodes to itself, so it cannot hold a control character) and
 * without `;` (see `withSemicolonsEncoded`).
 */
const PLAIN_TARGET = /^[\x21-\x24\x26-\x3a\x3c-\x7e]*$/

/**
 * The router ends a path at its first `;` (read as `/path;jsessionid=…`), so `/v1/wallets/;x` would reach the list
 * of wallets and `/v1/fx/EUR/2025-05-09;x` that date's rate. In a path a `;` is a character of its segment: sent
 * on percent-encoded, the segment's parameter holds it and its schema judges it.
 */
const withSemicolonsEncoded = (request: HttpServerRequest.HttpServerRequest) => {
  const mark = request.url.indexOf("?")
  const path = mark < 0 ? request.url : request.url.slice(0, mark)
  return path.includes(";")
    ? request.modify({ url: path.replaceAll(";", "%3B") + (mark < 0 ? "" : request.url.slice(mark)) })
    : request
}

/** Checks made before any route runs: size, media type, nesting. A failure answers at once. */
/** Most requests (a GET without a body on a plain target) pass every check: no work beyond seeing that. */
export const needsNoChecks = (request: HttpServerRequest.HttpServerRequest): boolean =>
  !BODY_METHODS.has(request.method) && request.headers["content-length"] === undefined &&
  PLAIN_TARGET.test(request.url)

export const admitBody = (
  request: HttpServerRequest.HttpServerRequest,
  acceptsBodies: boolean
): Effect.Effect<HttpServerRequest.HttpServerRequest, BodyRejected> =>
  needsNoChecks(request) ? Effect.succeed(request) : admitChecked(request, acceptsBodies)

const admitChecked = (received: HttpServerRequest.HttpServerRequest, acceptsBodies: boolean) =>
  Effect.gen(function*() {
    yield* admitTarget(received.url)
    const request = withSemicolonsEncoded(received)
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
    if (!BODY_METHODS.has(request.method)) return request
    if (!hasBody(headers)) {
      // An empty body still declared as another media type would be parsed as that type by the route (a form as
      // `{}`, multipart as an error or a wait for a boundary that never comes): refused as that type is.
      const declaredType = headers["content-type"]
      return acceptsBodies && PAYLOAD_METHODS.has(request.method) && declaredType !== undefined &&
          !isJsonContentType(declaredType)
        ? yield* notJson(declaredType)
        : request
    }
    if (!acceptsBodies || !isJsonContentType(headers["content-type"])) return yield* notJson(headers["content-type"])
    // A compressed body would be read as JSON text as it is, and refused as not JSON or not UTF-8 (400): the
    // coding is what is unsupported (RFC 9110 §15.5.16).
    const coding = headers["content-encoding"]
    if (coding !== undefined && coding.trim().toLowerCase() !== "identity") {
      return yield* new BodyRejected({
        code: "unsupported_media_type",
        message: `Request bodies are read as sent, without a content coding; got Content-Encoding ${
          JSON.stringify(coding)
        }.`,
        details: { contentEncoding: coding, supported: ["identity"] }
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
