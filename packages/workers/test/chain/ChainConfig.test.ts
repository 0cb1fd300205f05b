import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { chainConfig } from "../../src/chain/ChainConfig.js"
import { endpointLabel } from "../../src/chain/ViemChainClient.js"

const load = (env: Record<string, string>) =>
  Effect.withConfigProvider(chainConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("ChainConfig", () => {
  it.effect("defaults to Robinhood Chain's public RPC, chain 4663, finality depth 240", () =>
    Effect.gen(function*() {
      const config = yield* load({})
      expect(config.rpcUrls.map(Redacted.value)).toEqual(["https://rpc.mainnet.chain.robinhood.com"])
      expect([config.chainId, config.finalityDepth]).toEqual([4663, 240])
    }))

  it.effect("reads comma-separated fallback URLs and the numeric settings", () =>
    Effect.gen(function*() {
      const config = yield* load({
        RPC_URL: " https://a.example/v2/key , wss://b.example/ws ",
        CHAIN_ID: "31337",
        FINALITY_DEPTH: "0",
        RPC_CONCURRENCY: "16",
        RPC_TIMEOUT_MS: "2500"
      })
      expect(config.rpcUrls.map(Redacted.value)).toEqual(["https://a.example/v2/key", "wss://b.example/ws"])
      expect(String(config.rpcUrls[0])).not.toContain("key")
      expect([config.chainId, config.finalityDepth, config.concurrency, config.timeoutMs]).toEqual([31337, 0, 16, 2500])
    }))

  it.effect("rejects URLs that are not http(s) or ws(s), and non-positive numbers", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(load({ RPC_URL: "ftp://x" }))).toString()).toMatch(/RPC_URL/)
      expect((yield* Effect.flip(load({ RPC_CONCURRENCY: "0" }))).toString()).toMatch(/RPC_CONCURRENCY/)
    }))

  it("labels endpoints without their path or query (API keys)", () => {
    expect(endpointLabel("https://eth-mainnet.g.alchemy.com/v2/SECRET?x=1")).toBe("https://eth-mainnet.g.alchemy.com")
  })
})
