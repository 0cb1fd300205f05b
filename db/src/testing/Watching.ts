import { Effect } from "effect"
import { AccountsRepo } from "../Accounts.js"
import { WalletsRepo } from "../Wallets.js"

/** The account named `name` (made if new) watching `address` as its own, not reached by the recorder yet; its id. */
export const accountWatching = (name: string, address: string, chainId: number) =>
  Effect.gen(function*() {
    const { account } = yield* (yield* AccountsRepo).findOrCreate(name)
    yield* (yield* WalletsRepo).insert({
      accountId: account.id,
      address,
      label: "",
      self: true,
      watchingFromBlock: null,
      watchingFromAt: null,
      chainId
    })
    return account.id
  })
