import { describe, expect, it } from "@effect/vitest"
import { ChainClient, type ChainClientService } from "@scaledger/domain/chain/ChainClient"
import { ChainConfig } from "@scaledger/workers/chain/ChainConfig"
import {
  defaultFeedListFor,
  defaultTokenListFor,
  TokenRegistry,
  tokenRegistryLayer,
  TokenRegistryLive
} from "@scaledger/workers/chain/TokenRegistry"
import { ViemChainClientLayer } from "@scaledger/workers/chain/ViemChainClient"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { getAddress } from "viem"
import { afterAll, beforeAll } from "vitest"
import {
  type FaultProxy,
  type SeedManifest,
  startFaultProxy,
  startSeededNode,
  type TestNode,
  toJson
} from "../support/ChainHarness.js"

let node: TestNode
let manifest: SeedManifest
let counter: FaultProxy
let dir: string
let tokenListPath: string
let server: Server
let serverUrl: string

beforeAll(async () => {
  const seeded = await startSeededNode()
  node = seeded.node
  manifest = seeded.manifest
  counter = await startFaultProxy({ target: node.httpUrl })
  dir = mkdtempSync(join(tmpdir(), "scaledger-tokens-"))
  tokenListPath = join(dir, "tokens.json")
  writeFileSync(tokenListPath, toJson(seeded.tokenList))
  server = createServer((req, res) => {
    if (req.url === "/tokens.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(toJson(seeded.tokenList))
    } else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await counter?.close()
  await node?.close()
  await new Promise((resolve) => server?.close(resolve))
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const chainLayer = () =>
  ViemChainClientLayer.pipe(Layer.provide(ChainConfig.layer({ rpcUrls: [counter.url], chainId: 31337 })))

/** For the bundled lists: a chain client that must not be called. */
const offlineChain = (chainId: number) => Layer.succeed(ChainClient, { chainId } as ChainClientService)

describe("TokenRegistry", () => {
  it.effect("loads the bundled Robinhood lists for chain 4663 by default: 194 tokens, 35 feeds", () =>
    Effect.gen(function*() {
      const registry = yield* TokenRegistry
      expect(registry.tokens).toHaveLength(194)
      expect(registry.tokens.filter((t) => t.feed !== undefined)).toHaveLength(35)
      const aapl = Option.getOrThrow(registry.bySymbol("aapl"))
      expect(aapl).toMatchObject({
        symbol: "AAPL",
        address: "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9",
        isin: "US0378331005",
        decimals: 18,
        feed: { address: "0x6B22A786bAa607d76728168703a39Ea9C99f2cD0", decimals: 8, heartbeat: 86_400 }
      })
      expect(Option.getOrThrow(registry.byAddress("0xaf3d76f1834a1d425780943c99ea8a608f8a93f9")).symbol).toBe("AAPL")
      expect(Option.isNone(registry.feedFor("CRWD"))).toBe(true)
      expect(Option.getOrThrow(registry.feedFor("0xAF3D76F1834A1D425780943C99EA8A608F8A93F9")).decimals).toBe(8)
      expect(defaultTokenListFor(31337)).toBeUndefined()
      expect(defaultFeedListFor(4663)).toMatch(/feeds-4663\.json$/)
    }).pipe(Effect.provide(TokenRegistryLive.pipe(Layer.provide(offlineChain(4663))))))

  it.live("reads TOKEN_LIST from a path, recognises unlisted stock tokens through the chain, once", () =>
    Effect.gen(function*() {
      const registry = yield* TokenRegistry
      expect(registry.tokens.map((t) => t.symbol)).toEqual(["AAPL", "CRWD", "SGOV", "MU", "TSLA", "F"])
      expect(Option.isNone(registry.feedFor("F"))).toBe(true)
      expect(Option.getOrThrow(registry.feedFor("mu")).address).toBe(
        manifest.tokens.find((t) => t.symbol === "MU")!.feedAddress
      )

      counter.resetCounts()
      const listed = yield* registry.resolve(manifest.tokens[0]!.address.toLowerCase())
      expect(Option.getOrThrow(listed)).toMatchObject({ listed: true, symbol: "AAPL" })
      expect(counter.total()).toBe(0)

      const unlisted = manifest.unlistedToken.address
      expect(Option.getOrThrow(yield* registry.resolve(unlisted.toLowerCase()))).toEqual({
        listed: false,
        address: unlisted
      })
      expect(Option.getOrThrow(yield* registry.resolve(unlisted))).toEqual({ listed: false, address: unlisted })
      expect(counter.counts().eth_call).toBe(1)

      expect(Option.isNone(yield* registry.resolve(manifest.holders[0]!.address))).toBe(true)
      expect(Option.isNone(yield* registry.resolve(manifest.tokens[0]!.feedAddress!.replace(/.$/, "0")))).toBe(true)
      expect(Option.isNone(yield* registry.resolve("not an address"))).toBe(true)
    }).pipe(
      Effect.provide(TokenRegistryLive.pipe(Layer.provide(chainLayer()))),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TOKEN_LIST", tokenListPath]])))
    ))

  it.live("reads a token list over http(s), and FEED_LIST overrides a listed feed by symbol, in any case", () =>
    Effect.gen(function*() {
      const feeds = join(dir, "feeds.json")
      const other = "0x000000000000000000000000000000000000fEEd"
      const tsla = "0x000000000000000000000000000000000000bEEF"
      // Symbols in any case, as tickers are written: `tsla` is TSLA's.
      writeFileSync(
        feeds,
        JSON.stringify({
          chainId: 31337,
          feeds: { AAPL: { feedAddress: other, decimals: 8 }, tsla: { feedAddress: tsla, decimals: 8 } }
        })
      )
      const registry = yield* Effect.provide(
        TokenRegistry,
        tokenRegistryLayer({ tokenList: `${serverUrl}/tokens.json`, feedList: feeds }).pipe(Layer.provide(chainLayer()))
      )
      expect(Option.getOrThrow(registry.feedFor("AAPL")).address).toBe(getAddress(other))
      expect(Option.getOrThrow(registry.feedFor("TSLA")).address).toBe(getAddress(tsla))
      expect(Option.getOrThrow(registry.feedFor("SGOV")).address).toBe(
        manifest.tokens.find((t) => t.symbol === "SGOV")!.feedAddress
      )
    }))

  it.live("refuses a list for another chain, an unreadable source and a malformed address", () =>
    Effect.gen(function*() {
      const wrongChain = yield* Effect.flip(
        Effect.provide(
          TokenRegistry,
          tokenRegistryLayer({ tokenList: defaultTokenListFor(4663)! }).pipe(Layer.provide(chainLayer()))
        )
      )
      expect(wrongChain._tag).toBe("TokenListError")
      expect(wrongChain.message).toMatch(/chain 4663.*chain 31337/)

      const missing = yield* Effect.flip(
        Effect.provide(
          TokenRegistry,
          tokenRegistryLayer({ tokenList: `${serverUrl}/missing.json` }).pipe(Layer.provide(chainLayer()))
        )
      )
      expect(missing.message).toMatch(/HTTP 404/)

      const bad = join(dir, "bad.json")
      writeFileSync(bad, JSON.stringify({ tokens: [{ symbol: "X", name: "X", address: "0x1234", decimals: 18 }] }))
      const malformed = yield* Effect.flip(
        Effect.provide(TokenRegistry, tokenRegistryLayer({ tokenList: bad }).pipe(Layer.provide(chainLayer())))
      )
      expect(malformed.message).toMatch(/not an address/)
    }))
})
