/**
 * The stream of new heads: `eth_subscribe("newHeads")` on a WebSocket endpoint when there is one (resubscribing with
 * backoff, then polling if it keeps failing), polling `latest` otherwise (skipped numbers filled in).
 */
import type { BlockHeader } from "@scaledger/domain/chain/ChainClient"
import type { BlockNotFound, RequestError } from "@scaledger/domain/chain/ChainErrors"
import { RpcTransportError } from "@scaledger/domain/chain/ChainErrors"
import { Chunk, Duration, Effect, Option, Schedule, Stream } from "effect"
import type { ChainConfigShape } from "./ChainConfig.js"
import type { Endpoint } from "./rpc/Endpoint.js"
import { errorFacts } from "./rpc/Failures.js"
import { decodeAnswer, RpcBlock } from "./rpc/RpcSchemas.js"
import type { Transport } from "./rpc/Transport.js"

const MAX_POLL_BACKFILL = 256

const decodeHead = decodeAnswer(RpcBlock, "eth_subscription newHeads")

export const makeNewHeads = (options: {
  readonly config: ChainConfigShape
  readonly transport: Transport
  readonly head: Effect.Effect<BlockHeader, RequestError | BlockNotFound>
  readonly block: (n: number) => Effect.Effect<BlockHeader, RequestError | BlockNotFound>
}): Stream.Stream<BlockHeader, RequestError> => {
  const { block, config, head, transport } = options

  const pollHeads: Stream.Stream<BlockHeader, RequestError> = Stream.unfoldChunkEffect(
    { last: undefined as BlockHeader | undefined, first: true },
    (state) =>
      Effect.gen(function*() {
        if (!state.first) yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
        const latest = yield* head
        const last = state.last
        const out: Array<BlockHeader> = []
        if (last === undefined || latest.number < last.number) {
          out.push(latest)
        } else if (latest.number === last.number) {
          if (latest.hash !== last.hash) out.push(latest)
        } else {
          const from = Math.max(last.number + 1, latest.number - MAX_POLL_BACKFILL + 1)
          for (let n = from; n < latest.number; n++) out.push(yield* block(n))
          out.push(latest)
        }
        return Option.some([Chunk.fromIterable(out), { last: out.at(-1) ?? last, first: false }] as const)
      }).pipe(
        Effect.catchTag("BlockNotFound", () =>
          Effect.succeed(Option.some([Chunk.empty<BlockHeader>(), { ...state, first: false }] as const)))
      )
  )

  const subscriptionError = (endpoint: Endpoint, error: unknown) =>
    new RpcTransportError({ endpoint: endpoint.label, method: "eth_subscribe", message: errorFacts(error).message })

  const subscribedHeads = (endpoint: Endpoint): Stream.Stream<BlockHeader, RpcTransportError> =>
    Stream.asyncScoped<BlockHeader, RpcTransportError>((emit) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            endpoint.subscribe!({
              params: ["newHeads"],
              onData: (data) => {
                Effect.runSync(
                  decodeHead(data.result).pipe(
                    Effect.match({
                      onFailure: (error) => void emit.fail(subscriptionError(endpoint, error)),
                      onSuccess: (header) => {
                        transport.noteHead(header.number)
                        void emit.single(header)
                      }
                    })
                  )
                )
              },
              onError: (error) => void emit.fail(subscriptionError(endpoint, error))
            }),
          catch: (error) => subscriptionError(endpoint, error)
        }),
        (subscription) =>
          Effect.promise(() => subscription.unsubscribe()).pipe(Effect.timeout(Duration.seconds(1)), Effect.ignore)
      )
    )

  const wsEndpoint = transport.endpoints.find((e) => e.kind === "ws")
  return wsEndpoint === undefined
    ? pollHeads
    : subscribedHeads(wsEndpoint).pipe(
      Stream.retry(
        Schedule.exponential(Duration.millis(config.retryBaseDelayMs)).pipe(
          Schedule.jittered,
          Schedule.intersect(Schedule.recurs(config.maxRetries))
        )
      ),
      Stream.orElse(() => pollHeads)
    )
}
