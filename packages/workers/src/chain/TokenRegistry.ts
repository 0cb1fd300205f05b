/**
 * The stock tokens the service knows: a token list (`TOKEN_LIST`, a path or an http(s) URL in the format of
 * `assets/robinhood/tokens-4663.json`; the bundled snapshot for chain 4663 by default) plus price feeds (an entry's
 * own `feedAddress`, overridden by symbol from `FEED_LIST`, format of `assets/robinhood/feeds-4663.json`; the
 * bundled one for 4663 by default). A token that is not listed but answers `supportsInterface(0xa60bf13d)` counts
 * as a stock token too.
 */
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import type { BlockNotFound, RequestError, StateUnavailable } from "@scaledger/domain/chain/ChainErrors"
import { Config, type ConfigError, Context, Effect, Layer, Option, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { getAddress, isAddress } from "viem"

export class TokenListError extends Schema.TaggedError<TokenListError>()("TokenListError", {
  source: Schema.String,
  message: Schema.String
}) {}

const TokenListEntry = Schema.Struct({
  symbol: Schema.String,
  name: Schema.String,
  address: Schema.String,
  isin: Schema.optional(Schema.String),
  decimals: Schema.optionalWith(Schema.Number, { default: () => 18 }),
  currentMultiplier: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  feedAddress: Schema.optional(Schema.String)
})

export const TokenListFile = Schema.Struct({
  chainId: Schema.optional(Schema.Number),
  tokens: Schema.Array(TokenListEntry)
})
export type TokenListFile = typeof TokenListFile.Encoded

const FeedEntry = Schema.Struct({
  feedAddress: Schema.String,
  tokenAddress: Schema.optional(Schema.String),
  feedName: Schema.optional(Schema.String),
  decimals: Schema.optionalWith(Schema.Number, { default: () => 8 }),
  heartbeat: Schema.optional(Schema.Number)
})

export const FeedListFile = Schema.Struct({
  chainId: Schema.optional(Schema.Number),
  feeds: Schema.Record({ key: Schema.String, value: FeedEntry })
})
export type FeedListFile = typeof FeedListFile.Encoded

export interface FeedInfo {
  readonly address: string
  readonly decimals: number
  readonly name?: string
  readonly heartbeat?: number
}

export interface TokenInfo {
  readonly listed: true
  readonly symbol: string
  readonly name: string
  /** Checksummed. */
  readonly address: string
  readonly decimals: number
  readonly isin?: string
  /** The list's snapshot of the multiplier, as a decimal string; informative only. */
  readonly currentMultiplier?: string
  readonly status?: string
  readonly feed?: FeedInfo
}

export interface UnlistedStockToken {
  readonly listed: false
  readonly address: string
}

export interface TokenRegistryService {
  readonly chainId: number
  readonly tokens: ReadonlyArray<TokenInfo>
  readonly bySymbol: (symbol: string) => Option.Option<TokenInfo>
  readonly byAddress: (address: string) => Option.Option<TokenInfo>
  readonly feedFor: (symbolOrAddress: string) => Option.Option<FeedInfo>
  /** A listed token, or an unlisted one that reports the ERC-8056 interface; none otherwise. */
  readonly resolve: (
    address: string,
    block?: number
  ) => Effect.Effect<Option.Option<TokenInfo | UnlistedStockToken>, RequestError | StateUnavailable | BlockNotFound>
}

export class TokenRegistry extends Context.Tag("@scaledger/workers/chain/TokenRegistry")<
  TokenRegistry,
  TokenRegistryService
>() {}

const bundled = (file: string): string => fileURLToPath(new URL(`../../assets/robinhood/${file}`, import.meta.url))

/** The bundled lists, by chain id. */
export const defaultTokenListFor = (chainId: number): string | undefined =>
  chainId === 4663 ? bundled("tokens-4663.json") : undefined
export const defaultFeedListFor = (chainId: number): string | undefined =>
  chainId === 4663 ? bundled("feeds-4663.json") : undefined

const readSource = (source: string): Effect.Effect<unknown, TokenListError> =>
  Effect.tryPromise({
    try: async (signal) => {
      if (/^https?:\/\//i.test(source)) {
        const response = await fetch(source, { signal, redirect: "follow" })
        if (!response.ok) throw new Error(`HTTP ${response.status}`)
        return (await response.json()) as unknown
      }
      return JSON.parse(await readFile(source, "utf8")) as unknown
    },
    catch: (error) => new TokenListError({ source, message: error instanceof Error ? error.message : String(error) })
  })

const decode = <A, I>(schema: Schema.Schema<A, I>, source: string, input: unknown) =>
  Schema.decodeUnknown(schema)(input).pipe(
    Effect.mapError((error) => new TokenListError({ source, message: error.message }))
  )

const checksum = (source: string, address: string): Effect.Effect<string, TokenListError> =>
  isAddress(address, { strict: false })
    ? Effect.succeed(getAddress(address))
    : Effect.fail(new TokenListError({ source, message: `not an address: ${address}` }))

/** Builds the registry from already-read lists (no I/O). */
export const buildRegistry = (args: {
  readonly chainId: number
  readonly tokenList: unknown
  readonly feedList?: unknown
  readonly tokenSource?: string
  readonly feedSource?: string
}) =>
  Effect.gen(function*() {
    const tokenSource = args.tokenSource ?? "token list"
    const feedSource = args.feedSource ?? "feed list"
    const list = yield* decode(TokenListFile, tokenSource, args.tokenList)
    if (list.chainId !== undefined && list.chainId !== args.chainId) {
      return yield* new TokenListError({
        source: tokenSource,
        message: `the list is for chain ${list.chainId}, the service watches chain ${args.chainId}`
      })
    }
    const feeds = args.feedList === undefined ? undefined : yield* decode(FeedListFile, feedSource, args.feedList)
    if (feeds?.chainId !== undefined && feeds.chainId !== args.chainId) {
      return yield* new TokenListError({
        source: feedSource,
        message: `the feed list is for chain ${feeds.chainId}, the service watches chain ${args.chainId}`
      })
    }
    // By symbol in any case: a key written `aapl` is AAPL's, not silently no one's.
    const overrides = new Map(Object.entries(feeds?.feeds ?? {}).map(([symbol, feed]) => [symbol.toUpperCase(), feed]))
    const tokens: Array<TokenInfo> = []
    for (const entry of list.tokens) {
      const address = yield* checksum(tokenSource, entry.address)
      const override = overrides.get(entry.symbol.toUpperCase())
      let feed: FeedInfo | undefined
      if (override !== undefined) {
        feed = {
          address: yield* checksum(feedSource, override.feedAddress),
          decimals: override.decimals,
          ...(override.feedName === undefined ? {} : { name: override.feedName }),
          ...(override.heartbeat === undefined ? {} : { heartbeat: override.heartbeat })
        }
      } else if (entry.feedAddress !== undefined) {
        feed = { address: yield* checksum(tokenSource, entry.feedAddress), decimals: 8 }
      }
      tokens.push({
        listed: true,
        symbol: entry.symbol,
        name: entry.name,
        address,
        decimals: entry.decimals,
        ...(entry.isin === undefined ? {} : { isin: entry.isin }),
        ...(entry.currentMultiplier === undefined ? {} : { currentMultiplier: entry.currentMultiplier }),
        ...(entry.status === undefined ? {} : { status: entry.status }),
        ...(feed === undefined ? {} : { feed })
      })
    }
    return tokens
  })

const makeService = (chainId: number, tokens: ReadonlyArray<TokenInfo>) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    const bySymbol = new Map(tokens.map((t) => [t.symbol.toUpperCase(), t]))
    const byAddress = new Map(tokens.map((t) => [t.address.toLowerCase(), t]))
    const knownStock = new Set<string>()

    const lookupAddress = (address: string) => Option.fromNullable(byAddress.get(address.toLowerCase()))

    const service: TokenRegistryService = {
      chainId,
      tokens,
      bySymbol: (symbol) => Option.fromNullable(bySymbol.get(symbol.toUpperCase())),
      byAddress: lookupAddress,
      feedFor: (key) =>
        Option.fromNullable((bySymbol.get(key.toUpperCase()) ?? byAddress.get(key.toLowerCase()))?.feed),
      resolve: (address, block) =>
        Effect.suspend(() => {
          const listed = lookupAddress(address)
          if (Option.isSome(listed)) return Effect.succeed(listed)
          if (!isAddress(address, { strict: false })) return Effect.succeed(Option.none())
          const normalized = getAddress(address)
          if (knownStock.has(normalized)) {
            return Effect.succeed(Option.some({ listed: false as const, address: normalized }))
          }
          return chain.isStockToken(normalized, block).pipe(
            Effect.map((isStock) => {
              if (!isStock) return Option.none()
              knownStock.add(normalized)
              return Option.some<TokenInfo | UnlistedStockToken>({ listed: false, address: normalized })
            })
          )
        })
    }
    return service
  })

/** Lists from `TOKEN_LIST` / `FEED_LIST`, or the bundled ones for the client's chain. */
export const TokenRegistryLive: Layer.Layer<TokenRegistry, TokenListError | ConfigError.ConfigError, ChainClient> =
  Layer.effect(
    TokenRegistry,
    Effect.gen(function*() {
      const chain = yield* ChainClient
      const tokenListSetting = yield* Config.option(Config.string("TOKEN_LIST"))
      const feedListSetting = yield* Config.option(Config.string("FEED_LIST"))
      const tokenSource = Option.getOrUndefined(tokenListSetting) ?? defaultTokenListFor(chain.chainId)
      const feedSource = Option.getOrUndefined(feedListSetting) ?? defaultFeedListFor(chain.chainId)
      return yield* fromSources({ chainId: chain.chainId, tokenList: tokenSource, feedList: feedSource })
    })
  )

/** Reads the lists from the given paths or URLs; no token list means only unlisted tokens are recognised. */
export const fromSources = (args: {
  readonly chainId: number
  readonly tokenList?: string | undefined
  readonly feedList?: string | undefined
}) =>
  Effect.gen(function*() {
    const tokenList = args.tokenList === undefined ? { tokens: [] } : yield* readSource(args.tokenList)
    const feedList = args.feedList === undefined ? undefined : yield* readSource(args.feedList)
    const tokens = yield* buildRegistry({
      chainId: args.chainId,
      tokenList,
      ...(feedList === undefined ? {} : { feedList }),
      ...(args.tokenList === undefined ? {} : { tokenSource: args.tokenList }),
      ...(args.feedList === undefined ? {} : { feedSource: args.feedList })
    })
    return yield* makeService(args.chainId, tokens)
  })

/** Explicit sources (tests, the demo). */
export const tokenRegistryLayer = (args: {
  readonly tokenList?: string
  readonly feedList?: string
}): Layer.Layer<TokenRegistry, TokenListError, ChainClient> =>
  Layer.effect(
    TokenRegistry,
    Effect.flatMap(ChainClient, (chain) => fromSources({ chainId: chain.chainId, ...args }))
  )
