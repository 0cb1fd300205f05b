import { AccountsRepo } from "@scaledger/db/Accounts"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { Effect } from "effect"

/** An account watching one address of `chainId` since block 1 (1 November 2026), as the alert tests set them up. */
export const accountWatching = (name: string, address: string, chainId: number) =>
  Effect.gen(function*() {
    const { account } = yield* (yield* AccountsRepo).findOrCreate(name)
    const { wallet } = yield* (yield* WalletsRepo).insert({
      accountId: account.id,
      address,
      label: "",
      self: true,
      watchingFromBlock: 1,
      watchingFromAt: new Date("2026-11-01T00:00:00Z"),
      chainId
    })
    return { id: account.id, wallet: wallet.id, address: address.toLowerCase() }
  })
