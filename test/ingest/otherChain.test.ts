import { describe, expect, it } from "@effect/vitest"
import { ChainClient, type ChainClientService } from "@scaledger/domain/chain/ChainClient"
import { RpcTimeout } from "@scaledger/domain/chain/ChainErrors"
import { warnOnOtherChain } from "@scaledger/workers/ingest/Recorder"
import { Effect, Logger } from "effect"

/** The warnings `warnOnOtherChain` logs against a node that answers `eth_chainId` with `served`. */
const warningsAgainst = (configured: number, served: Effect.Effect<number, RpcTimeout>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const capture = Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${Array.isArray(message) ? message.map(String).join(" ") : String(message)}`)
      })
    )
    const client = { chainId: configured, nodeChainId: served } as unknown as ChainClientService
    yield* warnOnOtherChain.pipe(Effect.provideService(ChainClient, client), Effect.provide(capture))
    return lines
  })

describe("the recorder's check of the node's chain", () => {
  it.effect("warns, naming both ids and the setting to change, when the node serves another chain", () =>
    Effect.gen(function*() {
      const lines = yield* warningsAgainst(4663, Effect.succeed(31337))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^WARN recorder: the node serves chain 31337, but CHAIN_ID is 4663/)
      expect(lines[0]).toContain("CHAIN_ID=31337")
    }))

  it.effect("says nothing when the node serves the configured chain", () =>
    Effect.gen(function*() {
      expect(yield* warningsAgainst(4663, Effect.succeed(4663))).toEqual([])
    }))

  it.effect("says nothing when the node cannot be asked (the reads report an outage themselves)", () =>
    Effect.gen(function*() {
      const down = Effect.fail(
        new RpcTimeout({ endpoint: "http://127.0.0.1:1", method: "eth_chainId", timeoutMs: 10, message: "no answer" })
      )
      expect(yield* warningsAgainst(4663, down)).toEqual([])
    }))
})
