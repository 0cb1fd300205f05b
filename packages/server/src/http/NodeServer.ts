import * as Ids from "@scaledger/db/Ids"
import { ErrorCatalog, type ErrorCode } from "@scaledger/domain/Errors"
import * as Http from "node:http"
import type * as Net from "node:net"

/** Largest request head (request line and headers) Node's parser accepts; beyond it: 431 in the envelope. */
export const MAX_HEADER_BYTES = 16 * 1024

const REASONS: Partial<Record<number, string>> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Payload Too Large",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable"
}

/** An error the Node server answers itself, before any handler: its code, message, `docUrl` and request id. */
export interface ServerError {
  readonly code: ErrorCode
  readonly message: string
  readonly docUrl: string
  readonly requestId: string
}

export interface NodeServerOptions {
  /** Origin for `docUrl`s when known (`PUBLIC_BASE_URL`); else the listener's own address. */
  readonly publicOrigin?: string | undefined
  /**
   * Origin for `docUrl`s by the connection, over `publicOrigin` (the MCP listener's point at the REST listener, which
   * serves `/docs/errors`).
   */
  readonly docOrigin?: ((socket: Net.Socket) => string) | undefined
  /** The body of such an error: the REST envelope `{ error }` unless given (the MCP listener's is JSON-RPC). */
  readonly errorBody?: ((error: ServerError) => unknown) | undefined
}

const servers = new Set<Http.Server>()
const draining = new WeakSet<Http.Server>()

/** How long requests in flight may take to finish once a shutdown began; past it their connections are closed. */
export const DRAIN_DEADLINE_MS = 10_000

/**
 * Starts refusing new requests on every server this process made: each answers `503 service_unavailable` with
 * `Connection: close` at once, and idle keep-alive connections are closed. Called on SIGTERM/SIGINT, before the
 * servers' scopes close, so a request arriving during shutdown never hangs. Requests in flight get
 * `DRAIN_DEADLINE_MS` to finish: a client that stops reading a long answer does not hold the shutdown (its answer
 * is cut, and an export it was being sent is rolled back or, written already, kept whole).
 */
export const beginDrain = (deadlineMs: number = DRAIN_DEADLINE_MS) => {
  const drained = [...servers]
  for (const server of drained) {
    draining.add(server)
    server.closeIdleConnections()
  }
  setTimeout(() => {
    for (const server of drained) server.closeAllConnections()
  }, deadlineMs).unref()
}

const originOf = (socket: Net.Socket, options: NodeServerOptions) => {
  if (options.docOrigin !== undefined) return options.docOrigin(socket)
  if (options.publicOrigin !== undefined) return options.publicOrigin
  let address = socket.localAddress ?? "127.0.0.1"
  if (address.startsWith("::ffff:")) address = address.slice(7)
  return `http://${address.includes(":") ? `[${address}]` : address}:${socket.localPort ?? ""}`
}

/** The error envelope as raw bytes, for answers written outside the Effect router (parser errors, shutdown). */
const envelope = (code: ErrorCode, message: string, socket: Net.Socket, options: NodeServerOptions) => {
  const requestId = `req_${Ids.randomBase62(20)}`
  const error: ServerError = { code, message, docUrl: `${originOf(socket, options)}/docs/errors#${code}`, requestId }
  const body = JSON.stringify(options.errorBody === undefined ? { error } : options.errorBody(error))
  return { requestId, body, status: ErrorCatalog[code].status }
}

const parserErrorCode = (error: NodeJS.ErrnoException): { code: ErrorCode; message: string } => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return { code: "headers_too_large", message: `The request headers exceed ${MAX_HEADER_BYTES} bytes.` }
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return { code: "request_timeout", message: "The request did not arrive in time." }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { code: "payload_too_large", message: "The chunk extensions are too large." }
    default:
      return {
        code: "invalid_request",
        message: `The request is not valid HTTP/1.1 (${String(error.code ?? "parse error").replace(/[^A-Z_]/g, "")}).`
      }
  }
}

/**
 * A Node HTTP server for `NodeHttpServer.layer` with the edge the Effect router cannot see: requests Node's parser
 * refuses (oversized headers, duplicate `Content-Length`, a bad method) are answered in the error envelope with a
 * `Request-Id` where the socket still allows writing; during shutdown every new request is answered `503` with
 * `Connection: close` instead of waiting for a handler that is gone.
 */
export const makeNodeServer = (options: NodeServerOptions = {}) => (): Http.Server => {
  const server = Http.createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    requestTimeout: 60_000,
    headersTimeout: 30_000,
    // Node answers an HTTP/1.1 request without `Host` with a bare 400 (no envelope, no Request-Id) before any
    // handler runs. The service does not route by Host (docUrl never trusts it either): such a request is answered
    // as any other.
    requireHostHeader: false
  })
  servers.add(server)
  server.on("close", () => servers.delete(server))

  /** Writes the envelope straight to the socket and closes it: for answers no request handler gives. */
  const endWithEnvelope = (socket: Net.Socket, code: ErrorCode, message: string) => {
    const { body, requestId, status } = envelope(code, message, socket, options)
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status] ?? "Bad Request"}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
    )
  }

  server.on("clientError", (error: NodeJS.ErrnoException, socket: Net.Socket) => {
    // A response whose head is already written cannot be followed by another: just close (as Node does).
    const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (error.code === "ECONNRESET" || !socket.writable || current?.headersSent === true) {
      socket.destroy()
      return
    }
    const { code, message } = parserErrorCode(error)
    endWithEnvelope(socket, code, message)
  })

  // CONNECT (a proxy's method) reaches no request handler: without a listener Node closes the connection with no
  // answer at all. This is no proxy: 400 in the envelope, as for a method Node's parser does not know.
  server.on("connect", (_request: Http.IncomingMessage, socket: Net.Socket) => {
    if (!socket.writable) {
      socket.destroy()
      return
    }
    endWithEnvelope(socket, "invalid_request", "CONNECT is not supported: this service is not a proxy.")
  })

  // An `Expect` other than `100-continue` is answered by Node itself with a bare 417 (no envelope, no Request-Id)
  // unless someone listens. RFC 9110 lets a server ignore an expectation it does not know: the request is answered
  // as any other.
  server.on("checkExpectation", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    server.emit("request", request, response)
  })

  // The router's handler is removed when the server's scope closes, before the listener finishes closing: a request
  // on a kept-alive connection in between would find no handler and hang. Answer it (and every request once
  // draining) here instead.
  const emit = server.emit.bind(server)
  server.emit = ((event: string, ...args: Array<unknown>) => {
    if (event === "request" && (draining.has(server) || server.listenerCount("request") === 0)) {
      const request = args[0] as Http.IncomingMessage
      const response = args[1] as Http.ServerResponse
      const { body, requestId, status } = envelope(
        "service_unavailable",
        "The service is shutting down; retry on another instance or shortly.",
        request.socket,
        options
      )
      request.resume()
      response.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "request-id": requestId,
        "retry-after": "1",
        connection: "close"
      })
      response.end(body)
      return true
    }
    return emit(event, ...args)
  }) as typeof server.emit
  return server
}
