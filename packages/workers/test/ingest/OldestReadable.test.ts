import { describe, expect, it } from "@effect/vitest"
import { ChainClient, type ChainClientService } from "@scaledger/domain/chain/ChainClient"
import { ContractReverted, StateUnavailable } from "@scaledger/domain/chain/ChainErrors"
import { oldestReadableBlock } from "@scaledger/workers/ingest/Backfill"
import { Effect, Layer } from "effect"

const TOKEN = `0x${"aa".repeat(20)}`

/** A node that serves the token's state from `floor` on and fails older reads with `failure`. */
const nodeFrom = (floor: number, failure: (block: number) => StateUnavailable | ContractReverted) =>
  Layer.succeed(ChainClient, {
    uiMultiplier: (_token: string, block: number) =>
      block >= floor ? Effect.succeed(10n ** 18n) : Effect.fail(failure(block))
  } as unknown as ChainClientService)

describe("the oldest block whose multiplier state a backfill can read", () => {
  it.effect("a pruned node: the floor of its window, the blocks before it an archive gap", () =>
    Effect.gen(function*() {
      const found = yield* oldestReadableBlock(TOKEN, 100, 1_000)
      expect(found).toEqual({ floor: 700, reason: "archive_unavailable" })
    }).pipe(
      Effect.provide(
        nodeFrom(
          700,
          (block) =>
            new StateUnavailable({ method: "eth_call", block, endpoint: "local", message: "missing trie node" })
        )
      )
    ))

  it.effect("old reads that revert (no readable state there): the same floor, the gap an rpc_error, no failure", () =>
    Effect.gen(function*() {
      const found = yield* oldestReadableBlock(TOKEN, 100, 1_000)
      expect(found).toEqual({ floor: 700, reason: "rpc_error" })
    }).pipe(
      Effect.provide(
        nodeFrom(
          700,
          (block) =>
            new ContractReverted({ address: TOKEN, functionName: "uiMultiplier", block, message: "empty return data" })
        )
      )
    ))
})
