import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { SqlClient } from "@effect/sql"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import { requestReplay } from "@scaledger/db/ledger/LedgerBuilds"
import { retryOnConflict } from "@scaledger/db/SqlErrors"
import { type WalletRow, WalletsRepo } from "@scaledger/db/Wallets"
import * as Address from "@scaledger/domain/Address"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { CurrentAccount } from "@scaledger/domain/Auth"
import { DEFAULT_PAGE_LIMIT } from "@scaledger/domain/Common"
import { InvalidAddress, NotFound } from "@scaledger/domain/Errors"
import { Wallet } from "@scaledger/domain/Wallet"
import { Effect, Either, Option, Schema } from "effect"
import { ChainId } from "../Config.js"
import { PageCursorSeal } from "./PageCursorSeal.js"
import { orUnavailable } from "./Unavailable.js"
import { walletView } from "./WalletView.js"

const validAddress = (input: string) =>
  Either.match(Address.parseAddress(input), {
    onLeft: (problem) => Effect.fail(Address.invalidAddress(input, problem)),
    onRight: Effect.succeed
  })

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

/** An address to watch: public, and not the zero address (where tokens are minted from and burned to: no holder). */
const watchableAddress = (input: string) =>
  Effect.flatMap(validAddress(input), (address) =>
    address === ZERO_ADDRESS
      ? Effect.fail(
        new InvalidAddress({
          message: "The zero address cannot be watched: tokens are minted from it and burned to it; nobody holds it.",
          details: { address: input, reason: "zero_address" }
        })
      )
      : Effect.succeed(address))

const notFound = (address: string) => new NotFound({ message: `No watched wallet ${address}.` })

const encodeWallet = Schema.encode(Wallet)

export const WalletsHandlers = HttpApiBuilder.group(ScaledgerApi, "wallets", (handlers) =>
  Effect.gen(function*() {
    const wallets = yield* WalletsRepo
    const chain = yield* ChainStore
    const cursors = yield* PageCursorSeal
    const chainId = yield* ChainId
    const sql = yield* SqlClient.SqlClient
    const view = (row: WalletRow) => Effect.map(chain.gapsOfWallet(row.id), (gaps) => walletView(row, gaps))

    /**
     * The next block the recorder will look at: live recording of a wallet added now starts there. Its date is that
     * block's own, known once the block is stored (usually not yet: the recorder fills it in when it records it).
     */
    const nextRecordedBlock = Effect.gen(function*() {
      const cursor = yield* chain.cursor(chainId, "recorder")
      if (Option.isNone(cursor)) return { block: null, at: null }
      const next = cursor.value.block + 1
      const block = yield* chain.storedBlock(chainId, next)
      return { block: next, at: Option.match(block, { onNone: () => null, onSome: (b) => b.time }) }
    })

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const afterId = yield* cursors.open(account.id, "wallets", urlParams.cursor)
          const limit = urlParams.limit ?? DEFAULT_PAGE_LIMIT
          const page = yield* wallets.list(account.id, { afterId, limit })
          const last = page.wallets[page.wallets.length - 1]
          return {
            wallets: yield* Effect.forEach(page.wallets, view),
            nextCursor: page.hasMore && last !== undefined ? cursors.seal(account.id, "wallets", last.id) : null
          }
        }).pipe(orUnavailable))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const address = yield* watchableAddress(payload.address)
          const watchingFrom = yield* nextRecordedBlock
          // A new address changes whose transfers are own: the account's history is rebuilt (a replay).
          const { created, wallet } = yield* sql.withTransaction(Effect.tap(
            wallets.insert({
              accountId: account.id,
              address,
              label: payload.label ?? "",
              self: payload.self ?? true,
              watchingFromBlock: watchingFrom.block,
              watchingFromAt: watchingFrom.at,
              chainId
            }),
            ({ created }) => created ? requestReplay(account.id) : Effect.void
          ))
          const shown = yield* view(wallet)
          if (created) return shown
          // Already watched: the existing wallet, 200 rather than the 201 of a creation.
          return yield* Effect.flatMap(encodeWallet(shown), (body) => HttpServerResponse.json(body, { status: 200 }))
            .pipe(Effect.orDie)
        }).pipe(orUnavailable))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const address = yield* validAddress(path.address)
          const row = yield* wallets.find(account.id, address)
          if (Option.isNone(row)) return yield* notFound(address)
          return yield* view(row.value)
        }).pipe(orUnavailable))
      .handle("update", ({ path, payload }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const address = yield* validAddress(path.address)
          const row = yield* sql.withTransaction(Effect.gen(function*() {
            // Locked: a concurrent change of `self` committing meanwhile is what this one is compared with.
            const before = yield* wallets.findForUpdate(account.id, address)
            const after = yield* wallets.update(account.id, address, payload)
            // Marking an address own (or not) turns its transfers into movements (or disposals): a replay.
            if (Option.isSome(before) && Option.isSome(after) && before.value.self !== after.value.self) {
              yield* requestReplay(account.id)
            }
            return after
          }))
          if (Option.isNone(row)) return yield* notFound(address)
          return yield* view(row.value)
        }).pipe(orUnavailable))
      .handle("remove", ({ path }) =>
        Effect.gen(function*() {
          const account = yield* CurrentAccount
          const address = yield* validAddress(path.address)
          // A backfill holds the wallet's row and then asks for the wallet-set lock the removal holds: the database
          // breaks that deadlock by failing one side; the removal runs again rather than answering 503.
          const removed = yield* retryOnConflict(sql.withTransaction(Effect.tap(
            wallets.remove(account.id, address),
            (removed) => removed ? requestReplay(account.id) : Effect.void
          )))
          if (!removed) return yield* notFound(address)
        }).pipe(orUnavailable))
  }))
