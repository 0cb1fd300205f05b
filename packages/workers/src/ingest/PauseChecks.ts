import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { type PauseRead, PauseReads } from "@scaledger/db/chain/PauseReads"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { Duration, Effect, Layer, Option, Schedule } from "effect"
import { ReadHealth } from "../chain/ReadHealth.js"
import { asSingleton } from "../Singleton.js"
import { IngestConfig } from "./IngestConfig.js"
import { TokenCatalog } from "./TokenCatalog.js"

/** The recorder's cursor name (kept here too so the two modules do not import each other). */
const RECORDER = "recorder"

/**
 * `paused()` reads of stock tokens, so that a pause the events do not show (one in force before watching began, or
 * the issuer-wide switch, which emits nothing) is on record with the block it was read at. The recorder reads at its
 * first block and at the block of every Paused/Unpaused log, a backfill at its end for the tokens the wallet touched,
 * and every `PAUSE_CHECK_MINUTES` every known token is read at the recorder's cursor. What a read stores, and the
 * state it gives, is `PauseReads`'; a read the node cannot answer (pruned state, a revert) is skipped.
 */
export class PauseChecks extends Effect.Service<PauseChecks>()("@scaledger/workers/ingest/PauseChecks", {
  effect: Effect.gen(function*() {
    const chain = yield* ChainClient
    const reads = yield* PauseReads
    const health = yield* ReadHealth
    const store = yield* ChainStore
    const catalog = yield* TokenCatalog
    const chainId = chain.chainId
    const warned = new Set<string>()

    /** Reads `paused()` of `tokens` at `block` (whose time is `time`); answers the reads that changed the record. */
    const check = (tokens: ReadonlyArray<string>, block: number, time: Date) =>
      Effect.gen(function*() {
        if (tokens.length === 0) return []
        let unreachable = false
        const answers = yield* Effect.forEach(tokens, (token) =>
          chain.paused(token, block).pipe(
            Effect.map((paused): Option.Option<PauseRead> => Option.some({ token, block, time, paused })),
            Effect.catchAll((error) =>
              Effect.gen(function*() {
                if (yield* health.failed("pauses", error)) {
                  unreachable = true
                } else if (!warned.has(token)) {
                  warned.add(token)
                  yield* Effect.logWarning(
                    `pauses: paused() of ${token} at block ${block} unreadable: ${error.message}`
                  )
                }
                return Option.none<PauseRead>()
              })
            )
          ), { concurrency: 4 })
        if (!unreachable) yield* health.succeeded("pauses")
        const read = answers.flatMap(Option.toArray)
        const stored = yield* reads.record(chainId, read)
        for (const change of stored) {
          yield* Effect.logInfo(
            `pauses: ${change.token} reads paused() = ${change.paused} at block ${change.block}, unlike its events`
          )
        }
        return stored
      })

    /** Every known stock token, at the recorder's cursor (nothing before the recorder has one). */
    const checkAll = Effect.gen(function*() {
      const cursor = yield* store.cursor(chainId, RECORDER)
      if (Option.isNone(cursor)) return []
      const block = yield* store.storedBlock(chainId, cursor.value.block)
      const time = Option.isSome(block)
        ? block.value.time
        : new Date((yield* chain.blockTimestamp(cursor.value.block)) * 1000)
      return yield* check(yield* catalog.stockTokens, cursor.value.block, time)
    })

    return { check, checkAll } as const
  })
}) {}

/** `checkAll` every `PAUSE_CHECK_MINUTES`, as a fiber owned by the layer's scope, in one worker process at a time. */
export const PauseChecksLive = Layer.scopedDiscard(Effect.gen(function*() {
  const checks = yield* PauseChecks
  const config = yield* IngestConfig
  yield* Effect.forkScoped(
    checks.checkAll.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("pauses: periodic check failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.minutes(config.pauseCheckMinutes))),
      Effect.delay(Duration.minutes(config.pauseCheckMinutes)),
      asSingleton("pause checks")
    )
  )
}))
