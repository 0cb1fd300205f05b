import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { Effect, Layer } from "effect"

/** What the alert monitor's passes read and write, on an in-memory PGlite database (the alert tests' services). */
export const MonitorServices = Layer.mergeAll(
  AlertSources.Default,
  AlertsStore.Default,
  FxRates.Default,
  AccountsRepo.Default,
  WalletsRepo.Default,
  WebhookConfig.layer({ oracleStaleMinutes: 60 })
).pipe(Layer.provideMerge(TestDatabase.pglite))

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
