import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { InvalidAddressError, NotFoundError } from "./Errors.js"
import { CreateWallet, UpdateWallet, Wallet, WalletList, WalletListParams, WalletPath } from "./Wallet.js"

export class WalletsGroup extends HttpApiGroup.make("wallets")
  .add(
    HttpApiEndpoint.get("list", "/wallets")
      .setUrlParams(WalletListParams)
      .addSuccess(WalletList)
      .annotate(OpenApi.Summary, "List watched wallets")
      .annotate(
        OpenApi.Description,
        "The watched addresses, in order of creation, paginated with `limit` and `cursor`."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/wallets")
      .setPayload(CreateWallet)
      .addSuccess(Wallet, { status: 201 })
      // The handler answers 200 (not 201) with the existing wallet when the address is already watched; declared
      // so that a client made from this contract reads that answer too. A value the handler returns is encoded as
      // the first success, 201.
      .addSuccess(Wallet, { status: 200 })
      .addError(InvalidAddressError)
      .annotate(OpenApi.Summary, "Watch a wallet")
      .annotate(OpenApi.Transform, (op) => {
        const responses = op.responses as Record<string, { description: string }>
        if (responses["200"] !== undefined) {
          responses["200"].description = "The address was already watched: the existing wallet."
        }
        return op
      })
      .annotate(
        OpenApi.Description,
        "Starts watching a public address: live multiplier recording from the next block, and a backfill of its " +
          "history. Answers 201 with the new wallet, or 200 with the existing one when the account already watches it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/wallets/:address")
      .setPath(WalletPath)
      .addSuccess(Wallet)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get a wallet")
  )
  .add(
    HttpApiEndpoint.patch("update", "/wallets/:address")
      .setPath(WalletPath)
      .setPayload(UpdateWallet)
      .addSuccess(Wallet)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Change a wallet's label or self flag")
      .annotate(
        OpenApi.Description,
        "Changes `label` and `self`. Marking an address as own rebuilds the account's history."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/wallets/:address")
      .setPath(WalletPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(InvalidAddressError)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Stop watching a wallet")
      .annotate(
        OpenApi.Description,
        "Stops the watch and deletes every record derived from the wallet. Generated exports are kept."
      )
  )
  .annotate(OpenApi.Title, "Wallets")
  .annotate(OpenApi.Description, "The public addresses the account watches (never keys: nothing here signs).")
{}
