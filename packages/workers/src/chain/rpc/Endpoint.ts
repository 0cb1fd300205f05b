/**
 * One JSON-RPC endpoint over viem's transports. viem only moves bytes here (its own retries off); what to do on a
 * failure is decided in `Transport.ts`.
 */
import { http, webSocket } from "viem"
import { getHttpRpcClient } from "viem/utils"

export interface Subscription {
  readonly unsubscribe: () => Promise<unknown>
}

export interface RpcCall {
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

/** One element of a batch answer, matched to its request. */
export type BatchAnswer =
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string } }

export interface Endpoint {
  readonly label: string
  readonly kind: "http" | "ws"
  readonly request: (args: RpcCall) => Promise<unknown>
  /**
   * Several requests in one HTTP exchange (JSON-RPC batch), answered in request order; `undefined` when the server
   * did not answer with one element per request (it refused the batch as such). HTTP endpoints only.
   */
  readonly batch?: (
    calls: ReadonlyArray<RpcCall>,
    timeoutMs: number
  ) => Promise<ReadonlyArray<BatchAnswer> | undefined>
  readonly subscribe?: (args: {
    readonly params: ReadonlyArray<unknown>
    readonly onData: (data: { readonly result: unknown }) => void
    readonly onError: (error: unknown) => void
  }) => Promise<Subscription>
  readonly close: () => Promise<void>
}

/** Scheme and host only: provider URLs often carry an API key in the path or query. */
export const endpointLabel = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}`
  } catch {
    return "<invalid url>"
  }
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const batchAnswers = (calls: number, data: unknown): ReadonlyArray<BatchAnswer> | undefined => {
  if (!Array.isArray(data) || data.length !== calls) return undefined
  const answers: Array<BatchAnswer | undefined> = new Array(calls)
  for (const element of data) {
    if (!isObject(element) || typeof element.id !== "number" || element.id < 0 || element.id >= calls) return undefined
    const error = element.error
    answers[element.id] = isObject(error)
      ? { error: { code: typeof error.code === "number" ? error.code : 0, message: String(error.message ?? "") } }
      : { result: element.result ?? null }
  }
  return answers.every((a) => a !== undefined) ? (answers as ReadonlyArray<BatchAnswer>) : undefined
}

export const makeEndpoint = (url: string, timeoutMs: number): Endpoint => {
  const label = endpointLabel(url)
  if (/^wss?:/i.test(url)) {
    const transport = webSocket(url, { retryCount: 0, timeout: timeoutMs })({ retryCount: 0 })
    let opened = false
    return {
      label,
      kind: "ws",
      request: (args) => {
        opened = true
        return transport.request(args as never)
      },
      subscribe: (args) => {
        opened = true
        return transport.value!.subscribe(args as never) as Promise<Subscription>
      },
      close: async () => {
        if (opened) (await transport.value!.getRpcClient()).close()
      }
    }
  }
  const transport = http(url, { retryCount: 0, timeout: timeoutMs, batch: false })({ retryCount: 0 })
  const client = getHttpRpcClient(url, { timeout: timeoutMs })
  return {
    label,
    kind: "http",
    request: (args) => transport.request(args as never),
    batch: async (calls, timeout) => {
      const body = calls.map((call, id) => ({ jsonrpc: "2.0" as const, id, method: call.method, params: call.params }))
      return batchAnswers(calls.length, await client.request({ body: body as never, timeout }))
    },
    close: async () => {}
  }
}
