import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import { WalletsRepo } from "@scaledger/db/Wallets"
import type { PriceTable } from "@scaledger/domain/ledger/LedgerInput"
import { LedgerBuilderSettings, LedgerPrices, makeLedgerBuilder } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Effect } from "effect"

export const BENCH_CHAIN = 31337
const TOKENS = ["AAPL", "CRWD", "SGOV", "MU", "TSLA"]
const BASE_TIME = Date.UTC(2025, 0, 2) / 1000
const hex40 = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const tokenAddress = (t: number) => hex40(0xa000 + t)
export const BENCH_WALLET = hex40(0x100001)

/** A price round per token every 50 blocks, up to the last block. */
const prices = (events: number): PriceTable =>
  Object.fromEntries(TOKENS.map((symbol, t) => [
    symbol,
    Array.from({ length: Math.ceil(events / 50) + 2 }, (_, r) => ({
      roundId: String(r + 1),
      answer: String((100 + t * 10 + (r % 50)) * 1e8),
      updatedAt: BASE_TIME + r * 50 - 1,
      feed: hex40(0xf000 + t)
    }))
  ]))

/**
 * One account with one wallet and a history of `events` transfers over five stock tokens (per token, three
 * purchases then a sale to an exchange, so lots stay open), a dividend step per token every 1,000 blocks, stored
 * in the chain record and built by the ledger worker's own step: the derived records the API reads.
 */
export const seedApiAccount = (name: string, events: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const exchange = hex40(0x100003)
    const zero = hex40(0)
    const { account } = yield* (yield* AccountsRepo).findOrCreate(name)
    yield* (yield* WalletsRepo).insert({
      accountId: account.id,
      address: BENCH_WALLET,
      label: "",
      self: true,
      watchingFromBlock: null,
      watchingFromAt: null,
      chainId: BENCH_CHAIN
    })
    for (const [t, symbol] of TOKENS.entries()) {
      yield* sql`INSERT INTO chain_tokens (chain_id, address_key, address, symbol, decimals, listed, is_stock)
                 VALUES (${BENCH_CHAIN}, ${tokenAddress(t)}, ${tokenAddress(t)}, ${symbol}, 18, true, true)
                 ON CONFLICT DO NOTHING`
    }
    yield* sql`
      INSERT INTO token_transfers (chain_id, tx_hash, log_index, block, block_hash, block_time, token_key, from_key,
                                   to_key, from_address, to_address, raw)
      SELECT ${BENCH_CHAIN}, '0x' || lpad(to_hex(i), 64, '0'), 0, i, '0x' || lpad(to_hex(i), 64, '0'),
             to_timestamp(${BASE_TIME} + i), '0x' || lpad(to_hex(${0xa000} + (i / 4) % 5), 40, '0'), f, t, f, t,
             1000000000000000000
      FROM (
        SELECT i,
          CASE WHEN i % 4 < 3 THEN ${zero} ELSE ${BENCH_WALLET} END AS f,
          CASE WHEN i % 4 < 3 THEN ${BENCH_WALLET} ELSE ${exchange} END AS t
        FROM generate_series(1, ${events}) AS s(i)
      ) g`
    yield* sql`
      INSERT INTO multiplier_changes (chain_id, token_key, effective_at, old_multiplier, new_multiplier, kind, status,
                                      source, block, block_time)
      SELECT ${BENCH_CHAIN}, '0x' || lpad(to_hex(${0xa000} + k % 5), 40, '0'), to_timestamp(${BASE_TIME} + k * 200),
             1000000000000000000 + (k / 5) * 100000000000000, 1000000000000000000 + (k / 5 + 1) * 100000000000000,
             'dividend', 'active', 'chain_storage', k * 200, to_timestamp(${BASE_TIME} + k * 200)
      FROM generate_series(1, ${Math.floor(events / 200)}) AS s(k)
      ON CONFLICT DO NOTHING`
    yield* requestReplay(account.id)
    const table = prices(events)
    const builder = yield* makeLedgerBuilder.pipe(
      Effect.provideService(LedgerPrices, { pricesFor: () => Effect.succeed(table) }),
      Effect.provide(LedgerBuilderSettings.Live)
    )
    yield* builder.poll.pipe(Effect.provideService(LedgerPrices, { pricesFor: () => Effect.succeed(table) }))
    const positions = yield* (yield* LedgerStore).positions(account.id)
    return { accountId: account.id, positions: positions.length }
  }).pipe(Effect.withConfigProvider(ConfigProvider.fromJson({ LEDGER_MIN_INTERVAL_MS: 0 })))
