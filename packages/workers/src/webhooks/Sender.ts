import { storableText } from "@scaledger/domain/Basic"
import { Context, Effect, Layer } from "effect"
import * as Https from "node:https"
import type { CheckedTarget } from "./EgressGuard.js"

/** Read at most this much of a receiver's answer. */
export const MAX_RESPONSE_BYTES = 64 * 1024
/** Keep at most this much of it in the delivery log. */
export const LOGGED_RESPONSE_BYTES = 2 * 1024
/**
 * How long the body is read for once the status has come (within the total time-out): the status decides the
 * outcome, the body is only logged, so a receiver that never ends its answer does not turn a 2xx into a time-out.
 */
export const BODY_WAIT_MS = 1_000

/** What one HTTP attempt came to. `status` null: no answer (connection error, time-out). */
export interface SendOutcome {
  readonly status: number | null
  readonly error: string | null
  readonly response: string | null
  /** `Retry-After` in milliseconds, when the answer carried one. */
  readonly retryAfterMs: number | null
  readonly durationMs: number
}

export interface SendRequest {
  readonly target: CheckedTarget
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  readonly connectTimeoutMs: number
  readonly totalTimeoutMs: number
}

/** A connection error's text: each address's, when several were tried (node's `AggregateError` has no message). */
const errorText = (error: Error): string =>
  error instanceof AggregateError && error.errors.length > 0
    ? error.errors.map((each: unknown) => each instanceof Error ? each.message : String(each)).join("; ")
    : error.message || String(error)

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `now`. */
export const parseRetryAfter = (value: string | undefined, now: number): number | null => {
  if (value === undefined || value.trim() === "") return null
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

export interface WebhookSenderShape {
  readonly send: (request: SendRequest) => Effect.Effect<SendOutcome>
}

/** Extra trust for the HTTPS client, for in-process tests; processes use `NODE_EXTRA_CA_CERTS`. */
export interface SenderOptions {
  readonly ca?: string | ReadonlyArray<string>
}

/**
 * POSTs one delivery over HTTPS with node's client: connects only to the checked addresses (the `lookup` answers them,
 * the certificate is still verified against the host name), never follows a redirect (node's `https` does not),
 * reads at most 64 KiB of the answer (for at most `BODY_WAIT_MS` after its status), and gives up after the connect
 * and total time-outs.
 */
export const makeSender = (options: SenderOptions = {}): WebhookSenderShape => {
  const agent = new Https.Agent({
    keepAlive: true,
    maxSockets: 64,
    ...(options.ca === undefined ? {} : { ca: options.ca as string | Array<string> })
  })
  const send = (request: SendRequest) =>
    Effect.async<SendOutcome>((resume) => {
      const started = performance.now()
      let done = false
      let bodyWait: ReturnType<typeof setTimeout> | undefined
      const finish = (outcome: Omit<SendOutcome, "durationMs">) => {
        if (done) return
        done = true
        clearTimeout(total)
        clearTimeout(connect)
        clearTimeout(bodyWait)
        resume(Effect.succeed({ ...outcome, durationMs: Math.round(performance.now() - started) }))
      }
      const { target } = request
      const req = Https.request({
        agent,
        protocol: "https:",
        hostname: target.hostname,
        port: target.url.port === "" ? 443 : Number(target.url.port),
        path: `${target.url.pathname}${target.url.search}`,
        method: "POST",
        headers: { ...request.headers, "content-length": Buffer.byteLength(request.body) },
        // The connection goes to the addresses the guard checked, whatever DNS says now: the first, then (asked for
        // all, as node's connection does to try the next when one does not answer) the others it checked.
        lookup: ((_host: string, opts: { all?: boolean }, callback: (...args: Array<unknown>) => void) => {
          if (opts?.all === true) {
            callback(null, [...(target.addresses ?? [{ address: target.address, family: target.family }])])
          } else callback(null, target.address, target.family)
        }) as never
      })
      const total = setTimeout(() => {
        finish({
          status: null,
          error: `timed out after ${request.totalTimeoutMs} ms`,
          response: null,
          retryAfterMs: null
        })
        req.destroy()
      }, request.totalTimeoutMs)
      const connect = setTimeout(() => {
        finish({
          status: null,
          error: `connect timed out after ${request.connectTimeoutMs} ms`,
          response: null,
          retryAfterMs: null
        })
        req.destroy()
      }, request.connectTimeoutMs)
      req.on("socket", (socket) => {
        if (!socket.connecting) clearTimeout(connect)
        else socket.once("secureConnect", () => clearTimeout(connect))
      })
      req.on("error", (error) => {
        finish({
          status: null,
          error: storableText(errorText(error)),
          response: null,
          retryAfterMs: null
        })
      })
      req.on("response", (res) => {
        const chunks: Array<Buffer> = []
        let size = 0
        clearTimeout(total)
        bodyWait = setTimeout(() => {
          complete()
          res.destroy()
        }, Math.max(0, Math.min(BODY_WAIT_MS, request.totalTimeoutMs - (performance.now() - started))))
        const complete = () => {
          // A receiver's binary answer may hold NUL: unmended, the attempt's record fails and the delivery is sent again.
          const text = storableText(Buffer.concat(chunks).subarray(0, LOGGED_RESPONSE_BYTES).toString("utf8"))
          const status = res.statusCode ?? null
          const header = res.headers["retry-after"]
          finish({
            status,
            error: status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`,
            response: text === "" ? null : text,
            retryAfterMs: parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now())
          })
        }
        res.on("data", (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return
          chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size))
          size += chunk.length
          if (size >= MAX_RESPONSE_BYTES) {
            complete()
            res.destroy()
          }
        })
        res.on("end", complete)
        res.on("error", complete)
        res.on("close", complete)
      })
      req.end(request.body)
      return Effect.sync(() => {
        done = true
        clearTimeout(total)
        clearTimeout(connect)
        clearTimeout(bodyWait)
        req.destroy()
      })
    })
  return { send }
}

export class WebhookSender extends Context.Tag("@scaledger/workers/WebhookSender")<
  WebhookSender,
  WebhookSenderShape
>() {
  static readonly Live = Layer.sync(WebhookSender, () => makeSender())
  static readonly layer = (options: SenderOptions) => Layer.sync(WebhookSender, () => makeSender(options))
}
