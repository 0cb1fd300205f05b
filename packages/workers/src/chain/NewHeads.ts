/**
 * The stream of new heads: `eth_subscribe("newHeads")` on a WebSocket endpoint when there is one (its silence caught
 * by a slow head read, resubscribing with backoff, then polling if it keeps failing), polling `latest` otherwise
 * (skipped numbers filled in).
 */
import type { BlockHeader } from "@scaledger/domain/chain/ChainClient"
import type { BlockNotFound, RequestError } from "@scaledger/domain/chain/ChainErrors"
import { RpcTransportError } from "@scaledger/domain/chain/ChainErrors"
import { Chunk, Duration, Effect, Exit, Option, Schedule, Stream } from "effect"
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

  /**
   * One `newHeads` subscription. Its request is given `timeoutMs` for an answer (viem waits forever for one); a
   * subscription answered after that is dropped at once.
   */
  const subscribedHeads = (endpoint: Endpoint): Stream.Stream<BlockHeader, RpcTransportError> =>
    Stream.asyncScoped<BlockHeader, RpcTransportError>((emit) =>
      Effect.gen(function*() {
        const pending = endpoint.subscribe!({
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
        })
        const subscription = yield* Effect.tryPromise({
          try: () => pending,
          catch: (error) => subscriptionError(endpoint, error)
        }).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(config.timeoutMs),
            onTimeout: () => subscriptionError(endpoint, `no answer within ${config.timeoutMs} ms`)
          }),
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : Effect.sync(() => void pending.then((late) => late.unsubscribe(), () => undefined))
          )
        )
        yield* Effect.addFinalizer(() =>
          Effect.promise(() => subscription.unsubscribe()).pipe(Effect.timeout(Duration.seconds(1)), Effect.ignore)
        )
      })
    )

  /**
   * The subscription, with the head read when it starts and every `headCheckMs` beside it. A head it has not
   * delivered by a read is emitted from the read; a subscription still behind that head at the next read (dropped by
   * the server without a word, or its notifications lost) is made again, and one that stays silent through
   * `maxRetries` of those gives way to polling.
   */
  const checkedSubscription = (endpoint: Endpoint): Stream.Stream<BlockHeader, RpcTransportError> =>
    Stream.suspend(() => {
      /** The highest block the subscription delivered, or the head when it started; -1 until either is known. */
      let delivered = -1
      /** A head emitted from a read, not yet delivered by the subscription. */
      let undelivered: number | undefined
      /** Subscriptions made again in a row for their silence. */
      let silences = 0
      const check = Effect.gen(function*() {
        const latest = yield* Effect.option(head)
        if (Option.isNone(latest) || latest.value.number <= delivered) {
          undelivered = undefined
          return Option.none<BlockHeader>()
        }
        if (delivered < 0) {
          delivered = latest.value.number
          return Option.none<BlockHeader>()
        }
        if (undelivered !== undefined && undelivered > delivered) {
          silences++
          return yield* Effect.fail(
            new RpcTransportError({
              endpoint: endpoint.label,
              method: "eth_subscribe",
              message:
                `newHeads delivered nothing past block ${delivered} while the head moved to ${latest.value.number}`
            })
          )
        }
        undelivered = latest.value.number
        return latest
      })
      const checked = Stream.suspend(() => {
        undelivered = undefined
        return Stream.merge(
          subscribedHeads(endpoint).pipe(
            Stream.tap((header) =>
              Effect.sync(() => {
                delivered = Math.max(delivered, header.number)
                silences = 0
              })
            )
          ),
          Stream.repeatEffectWithSchedule(check, Schedule.spaced(Duration.millis(config.headCheckMs))).pipe(
            Stream.filterMap((header) => header)
          ),
          { haltStrategy: "either" }
        )
      })
      // A head emitted from a read just before a failure may be lost with it; the next subscription's first read
      // emits it again (`delivered` is kept).
      return checked.pipe(
        Stream.retry(
          Schedule.exponential(Duration.millis(config.retryBaseDelayMs)).pipe(
            Schedule.jittered,
            Schedule.intersect(Schedule.recurs(config.maxRetries)),
            Schedule.check(() => silences <= config.maxRetries)
          )
        )
      )
    })

  const wsEndpoint = transport.endpoints.find((e) => e.kind === "ws")
  return wsEndpoint === undefined
    ? pollHeads
    : checkedSubscription(wsEndpoint).pipe(Stream.orElse(() => pollHeads))
}
