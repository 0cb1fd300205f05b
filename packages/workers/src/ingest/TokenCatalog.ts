import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { Effect, Option, Ref } from "effect"
import { TokenRegistry } from "../chain/TokenRegistry.js"

/**
 * Which contracts are stock tokens, as the ingestion sees them: the registry's listed tokens (stored in
 * `chain_tokens` at start) and, for any other contract that shows up in a wallet's `Transfer` logs, the answer to
 * `supportsInterface(0xa60bf13d)`, remembered in `chain_tokens` (yes or no) so it is asked once.
 */
export class TokenCatalog extends Effect.Service<TokenCatalog>()("@scaledger/workers/ingest/TokenCatalog", {
  // Built with the registry's tokens already stored, so every user sees them.
  effect: Effect.gen(function*() {
    const chain = yield* ChainClient
    const registry = yield* TokenRegistry
    const store = yield* ChainStore
    const known = yield* Ref.make(new Map<string, boolean>())

    const sync = Effect.gen(function*() {
      yield* store.upsertTokens(
        chain.chainId,
        registry.tokens.map((token) => ({
          address: token.address,
          symbol: token.symbol,
          name: token.name,
          isin: token.isin ?? null,
          decimals: token.decimals,
          feedAddress: token.feed?.address ?? null,
          feedDecimals: token.feed?.decimals ?? null,
          listed: true,
          isStock: true
        }))
      )
      const rows = yield* store.tokens(chain.chainId)
      yield* Ref.set(known, new Map(rows.map((row) => [row.address.toLowerCase(), row.isStock])))
    })

    /**
     * Addresses of every known stock token, read from `chain_tokens`: a token that another worker process (a
     * backfill) recognised is watched here too from the next read on.
     */
    const stockTokens = Effect.gen(function*() {
      const rows = yield* store.stockTokens(chain.chainId)
      const addresses = rows.map((row) => row.address.toLowerCase())
      yield* Ref.update(known, (map) => {
        if (addresses.every((address) => map.get(address) === true)) return map
        const next = new Map(map)
        for (const address of addresses) next.set(address, true)
        return next
      })
      return addresses
    })

    /** Whether the contract is a stock token; asks the chain once for a contract no list names. */
    const isStock = (address: string) =>
      Effect.gen(function*() {
        const addressKey = address.toLowerCase()
        const cached = (yield* Ref.get(known)).get(addressKey)
        if (cached !== undefined) return cached
        const resolved = yield* registry.resolve(address)
        const stock = Option.isSome(resolved)
        const listed = Option.isSome(resolved) && resolved.value.listed ? resolved.value : undefined
        yield* store.upsertTokens(chain.chainId, [{
          address,
          symbol: listed?.symbol ?? null,
          name: listed?.name ?? null,
          isin: listed?.isin ?? null,
          decimals: listed?.decimals ?? 18,
          feedAddress: listed?.feed?.address ?? null,
          feedDecimals: listed?.feed?.decimals ?? null,
          listed: listed !== undefined,
          isStock: stock
        }])
        yield* Ref.update(known, (map) => new Map(map).set(addressKey, stock))
        return stock
      })

    yield* sync
    return { sync, stockTokens, isStock } as const
  })
}) {}
