/**
 * A local server that speaks OpenAI's Chat Completions protocol (`POST /v1/chat/completions`, the real response
 * shape), scripted per request, for testing the openai classifier provider without a network.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly path: string
  readonly authorization: string | undefined
  readonly body: {
    readonly model: string
    readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
    readonly response_format?: {
      readonly type: string
      readonly json_schema?: { readonly name: string; readonly strict?: boolean; readonly schema?: unknown }
    }
  }
}

/** What to do with one request: answer with this content, this raw body and status, or never answer. */
export type Reply =
  | {
    readonly content: string | null
    readonly refusal?: string
    readonly model?: string
    readonly compat?: boolean
    readonly delayMs?: number
  }
  | { readonly status: number; readonly raw: string }
  | { readonly hang: true }

/** OpenAI's Chat Completions response; `compat` leaves out the fields some compatible servers omit. */
export const completion = (
  content: string | null,
  model = "gpt-4o-mini-2024-07-18",
  compat = false,
  refusal?: string
) => ({
  id: "chatcmpl-AbC123",
  object: "chat.completion",
  created: 1_763_900_000,
  model,
  choices: [
    {
      index: 0,
      message: compat
        ? { role: "assistant", content }
        : { role: "assistant", content, refusal: refusal ?? null, annotations: [] },
      ...(compat ? {} : { logprobs: null }),
      finish_reason: "stop"
    }
  ],
  usage: {
    prompt_tokens: 412,
    completion_tokens: 38,
    total_tokens: 450,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0
    }
  },
  service_tier: "default",
  system_fingerprint: "fp_0123456789"
})

export const startChatServer = async (script: (request: Received, n: number) => Reply) => {
  const received: Array<Received> = []
  const hanging: Array<Http.ServerResponse> = []
  const flight = { now: 0, max: 0 }
  const server = Http.createServer((req, res) => {
    let text = ""
    req.on("data", (chunk) => (text += chunk))
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }))
        return
      }
      const request: Received = { path: req.url, authorization: req.headers.authorization, body: JSON.parse(text) }
      received.push(request)
      const reply = script(request, received.length)
      if ("hang" in reply) {
        hanging.push(res)
        return
      }
      if ("raw" in reply) {
        res.writeHead(reply.status, { "content-type": "application/json" })
        res.end(reply.raw)
        return
      }
      flight.now++
      flight.max = Math.max(flight.max, flight.now)
      setTimeout(() => {
        flight.now--
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(completion(reply.content, reply.model, reply.compat, reply.refusal)))
      }, reply.delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    /** Most answered requests in flight at once since the last reset. */
    flight,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
