import { describe, expect, it } from "@effect/vitest"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { MultiplierReads } from "@scaledger/db/reads/MultiplierReads"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"
import { ingestServices, issuerCall, recordToHead, type SeededChain, seededChain } from "../support/ChainHarness.js"

const token = (chain: SeededChain, symbol: string) => chain.manifest.tokens.find((t) => t.symbol === symbol)!.address
const key = (address: string) => address.toLowerCase()

const withIngest = <A, E, R>(chain: SeededChain, body: Effect.Effect<A, E, R>) =>
  body.pipe(
    Effect.provide(
      Layer.mergeAll(MultiplierReads.Default).pipe(
        Layer.provideMerge(ingestServices({
          rpcUrl: chain.node.httpUrl,
          chainId: chain.node.chainId,
          tokenListPath: chain.tokenListPath
        })),
        Layer.provideMerge(TestDatabase.postgres)
      )
    )
  )

describe("multiplier announcements", () => {
  it.live(
    "a change announced again for the same effectiveAt with another value stands at the later value",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const tsla = token(chain, "TSLA")
        yield* withIngest(
          chain,
          Effect.gen(function*() {
            yield* recordToHead
            const head = yield* Effect.promise(() => node.block("latest"))
            const effectiveAt = head.timestamp + 600
            yield* Effect.promise(() =>
              issuerCall(
                node,
                tsla,
                "updateMultiplier",
                [1005000000000000000n, BigInt(effectiveAt)],
                head.timestamp + 10
              )
            )
            yield* recordToHead
            const fork = yield* Effect.promise(() => node.snapshot())
            // The issuer corrects the figure: same effectiveAt, another value.
            yield* Effect.promise(() =>
              issuerCall(
                node,
                tsla,
                "updateMultiplier",
                [1000900000000000000n, BigInt(effectiveAt)],
                head.timestamp + 20
              )
            )
            yield* recordToHead
            const store = yield* ChainStore
            const pending = yield* store.pendingChanges(node.chainId)
            expect(pending.map((c) => [c.token, c.newMultiplier])).toEqual([[key(tsla), 1000900000000000000n]])
            const reads = yield* MultiplierReads
            const later = new Date((effectiveAt + 86_400 * 2) * 1000).toISOString().slice(0, 10)
            const history = yield* reads.history(node.chainId, { token: "TSLA", at: later })
            expect(history.pending.map((c) => c.to)).toEqual(["1.0009"])
            expect(history.at?.multiplier).toBe("1.0009")

            // A re-org drops the correction: the first figure is staged again, as on chain.
            yield* Effect.promise(() => node.reorg(fork, { blocks: 2 }))
            yield* recordToHead
            const staged = yield* store.pendingChanges(node.chainId)
            expect(staged.map((c) => [c.token, c.newMultiplier])).toEqual([[key(tsla), 1005000000000000000n]])
          })
        )
      }).pipe(Effect.scoped),
    60_000
  )
})
