/**
 * Requests over the configured endpoints, in Effect: the concurrency cap, time-outs, retries with backoff (honouring
 * `Retry-After`), rotation to the next endpoint on a retryable failure, JSON-RPC batching on HTTP endpoints, and
 * the meaning of a node's error for a read of state at a block (pruned state, a block beyond the head).
 */
import {
  AllEndpointsFailed,
  BlockNotFound,
  type RequestError,
  type RpcError,
  RpcTimeout,
  StateUnavailable
} from "@scaledger/domain/chain/ChainErrors"
import { Array as Arr, Duration, Effect, Redacted, Schedule, type Scope } from "effect"
import type { ChainConfigShape } from "../ChainConfig.js"
import { type BatchAnswer, type Endpoint, makeEndpoint, type RpcCall } from "./Endpoint.js"
import { BLOCK_NOT_FOUND, classifyRpcFailure, type Failure, HEADER_NOT_FOUND, isRetryable, PRUNED } from "./Failures.js"
import { decodeAnswer, Quantity } from "./RpcSchemas.js"

export type SendError = AllEndpointsFailed | RpcError
export type SendAtError = SendError | StateUnavailable | BlockNotFound

export interface Transport {
  readonly endpoints: ReadonlyArray<Endpoint>
  /** The highest block number seen so far. */
  readonly knownHead: () => number
  readonly noteHead: (block: number) => void
  /** One request. A node's own JSON-RPC error is an `RpcError` (not retried). */
  readonly send: (method: string, params: ReadonlyArray<unknown>) => Effect.Effect<unknown, SendError>
  /**
   * A read of state at `block` (undefined: the latest): pruned state is `StateUnavailable` (after asking the other
   * endpoints), a block the node does not have is `BlockNotFound`.
   */
  readonly sendAt: (
    method: string,
    params: ReadonlyArray<unknown>,
    block: number | undefined
  ) => Effect.Effect<unknown, SendAtError>
  /**
   * Many requests of one method, answered in order: JSON-RPC batches of up to `batchSize` on an HTTP endpoint
   * (several batches in flight, within the concurrency cap), single requests otherwise. An element that failed
   * inside a batch is sent again on its own, so each ends exactly as `send` would.
   */
  readonly sendAll: (
    method: string,
    params: ReadonlyArray<ReadonlyArray<unknown>>
  ) => Effect.Effect<ReadonlyArray<unknown>, SendError>
  readonly headNumber: Effect.Effect<number, RequestError>
}

const decodeQuantity = decodeAnswer(Quantity, "eth_blockNumber")

export const makeTransport = (config: ChainConfigShape): Effect.Effect<Transport, never, Scope.Scope> =>
  Effect.gen(function*() {
    const endpoints = config.rpcUrls.map((u) => makeEndpoint(Redacted.value(u), config.timeoutMs))
    const labels = endpoints.map((e) => e.label)
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.allSettled(endpoints.map((e) => e.close()))))
    const semaphore = yield* Effect.makeSemaphore(config.concurrency)

    let active = 0
    let knownHead = 0
    /** Lowered when a server refuses batches of the size sent. */
    let batchLimit = Math.max(1, config.batchSize)
    const noteHead = (n: number) => {
      if (n > knownHead) knownHead = n
    }

    const retrySchedule = Schedule.exponential(Duration.millis(config.retryBaseDelayMs), 2).pipe(
      Schedule.jittered,
      Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(config.retryMaxDelayMs))),
      Schedule.zipRight(Schedule.identity<Failure>()),
      Schedule.modifyDelay((error, delay) =>
        error._tag === "RpcRateLimited" && error.retryAfterMs !== undefined
          ? Duration.max(delay, Duration.millis(Math.min(error.retryAfterMs, config.retryAfterCapMs)))
          : delay
      ),
      Schedule.intersect(Schedule.recurs(Math.max(config.maxRetries, endpoints.length - 1))),
      Schedule.whileInput((error: Failure) => isRetryable(error))
    )

    /** One attempt on one endpoint within `timeoutMs`, holding a permit of the concurrency cap. */
    const attempt = <A>(
      index: number,
      method: string,
      timeoutMs: number,
      run: (endpoint: Endpoint) => Promise<A>
    ) => {
      const endpoint = endpoints[index]!
      return Effect.tryPromise({
        try: () => run(endpoint),
        catch: (error) => classifyRpcFailure(error, endpoint.label, method, timeoutMs)
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMs + 1_000),
          onTimeout: () =>
            new RpcTimeout({
              endpoint: endpoint.label,
              method,
              timeoutMs,
              message: `no answer within ${timeoutMs} ms`
            })
        }),
        semaphore.withPermits(1)
      )
    }

    const attemptOn = (index: number, call: RpcCall) =>
      attempt(index, call.method, config.timeoutMs, (e) => e.request(call))

    /** Retries `run` (on the active endpoint, moving to the next on a retryable failure) until it answers. */
    const withRetries = <A>(method: string, run: (index: number) => Effect.Effect<A, Failure>) =>
      Effect.suspend(() => {
        let attempts = 0
        const once = Effect.suspend(() => {
          const index = active
          attempts++
          return run(index).pipe(
            Effect.tapError((error) =>
              Effect.sync(() => {
                if (isRetryable(error) && active === index) active = (index + 1) % endpoints.length
              })
            )
          )
        })
        return once.pipe(
          Effect.retry(retrySchedule),
          Effect.catchAll((error): Effect.Effect<never, SendError> =>
            isRetryable(error)
              ? Effect.fail(
                new AllEndpointsFailed({
                  endpoints: labels,
                  method,
                  attempts,
                  lastError: error,
                  message: `${method} failed after ${attempts} attempt(s) on ${labels.join(", ")}: ${error.message}`
                })
              )
              : Effect.fail(error)
          )
        )
      })

    const send = (method: string, params: ReadonlyArray<unknown>) =>
      withRetries(method, (index) => attemptOn(index, { method, params }))

    const headNumber: Effect.Effect<number, RequestError> = send("eth_blockNumber", []).pipe(
      Effect.flatMap(decodeQuantity),
      Effect.tap((n) => Effect.sync(() => noteHead(n)))
    )

    const sendAt = (method: string, params: ReadonlyArray<unknown>, block: number | undefined) =>
      send(method, params).pipe(
        Effect.catchTag("RpcError", (error): Effect.Effect<unknown, SendAtError> => {
          const blockNotFound = () =>
            new BlockNotFound({ block: block ?? "latest", message: `${method}: ${error.message}` })
          if (BLOCK_NOT_FOUND.test(error.message)) return Effect.fail(blockNotFound())
          if (!PRUNED.test(error.message)) return Effect.fail(error)
          const unavailable = new StateUnavailable({
            method,
            block: block ?? knownHead,
            endpoint: error.endpoint,
            message: error.message
          })
          // geth says "header not found" both for pruned state and for a block beyond its head.
          const beyondHead: Effect.Effect<boolean> =
            HEADER_NOT_FOUND.test(error.message) && block !== undefined && block > knownHead
              ? headNumber.pipe(Effect.map((head) => block > head), Effect.orElseSucceed(() => false))
              : Effect.succeed(false)
          return Effect.flatMap(beyondHead, (beyond): Effect.Effect<unknown, SendAtError> => {
            if (beyond) return Effect.fail(blockNotFound())
            const others = endpoints.flatMap((endpoint, i) =>
              endpoint.label === error.endpoint ? [] : [attemptOn(i, { method, params })]
            )
            if (others.length === 0) return Effect.fail(unavailable)
            return Effect.firstSuccessOf(others).pipe(Effect.mapError(() => unavailable))
          })
        })
      )

    /**
     * One batch on one endpoint: each element's answer, or `undefined` when the server refused the batch. A batch
     * takes longer than one request: its time-out grows with its size. One that times out makes later ones smaller.
     */
    const batchOn = (index: number, calls: ReadonlyArray<RpcCall>) => {
      const timeoutMs = Math.round(config.timeoutMs * (1 + calls.length / 50))
      return attempt(
        index,
        calls[0]!.method,
        timeoutMs,
        (endpoint): Promise<ReadonlyArray<BatchAnswer> | undefined> =>
          endpoint.batch !== undefined
            ? endpoint.batch(calls, timeoutMs)
            : Promise.all(calls.map((call) => endpoint.request(call).then((result) => ({ result }))))
      ).pipe(
        Effect.tapError((error) =>
          Effect.sync(() => {
            if (error._tag === "RpcTimeout") {
              batchLimit = Math.max(1, Math.min(batchLimit, Math.floor(calls.length / 2)))
            }
          })
        )
      )
    }

    const sendChunk = (
      method: string,
      chunk: ReadonlyArray<ReadonlyArray<unknown>>
    ): Effect.Effect<ReadonlyArray<unknown>, SendError> => {
      const one = (params: ReadonlyArray<unknown>) => send(method, params)
      const calls = chunk.map((params) => ({ method, params }))
      return withRetries(method, (index) => batchOn(index, calls)).pipe(
        // One JSON-RPC error for the whole batch (e.g. batches not allowed): treated as a refused batch.
        Effect.catchTag("RpcError", () => Effect.succeed(undefined)),
        Effect.flatMap((answers) => {
          if (answers === undefined) {
            // Refused as a batch (too large, or batches not served): smaller batches from now on, these one by one.
            batchLimit = Math.max(1, Math.floor(chunk.length / 2))
            return Effect.forEach(chunk, one, { concurrency: config.concurrency })
          }
          if (answers.every((answer) => "result" in answer)) {
            return Effect.succeed(answers.map((answer) => (answer as { readonly result: unknown }).result))
          }
          // An element's own error (a node's error for it alone, or an element-level rate limit): sent again on its
          // own, so it ends as a single request would (retried, or the node's error).
          return Effect.forEach(
            answers,
            (answer, i) => "result" in answer ? Effect.succeed(answer.result) : one(chunk[i]!),
            { concurrency: config.concurrency }
          )
        })
      )
    }

    const sendAll = (method: string, params: ReadonlyArray<ReadonlyArray<unknown>>) =>
      Effect.suspend(() => {
        if (params.length <= 1 || batchLimit <= 1 || endpoints[active]!.batch === undefined) {
          return Effect.forEach(params, (p) => send(method, p), { concurrency: config.concurrency })
        }
        // Few batches in flight: each already carries many requests, and servers work through them one by one.
        return Effect.forEach(Arr.chunksOf(params, batchLimit), (chunk) => sendChunk(method, chunk), {
          concurrency: Math.min(config.concurrency, 2)
        }).pipe(Effect.map((answers) => answers.flat()))
      })

    return {
      endpoints,
      knownHead: () => knownHead,
      noteHead,
      send,
      sendAt,
      sendAll,
      headNumber
    } satisfies Transport
  })
