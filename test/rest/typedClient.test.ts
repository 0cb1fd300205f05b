import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { FxRates } from "@scaledger/db/FxRates"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { ensureBundledHistory } from "@scaledger/workers/fx/FxWorker"
import { Effect, Layer, TestClock } from "effect"
import { call, newKey, restServer } from "../support/RestHarness.js"

const withHistory = Layer.effectDiscard(ensureBundledHistory()).pipe(
  Layer.provide(FxRates.Default),
  Layer.provideMerge(TestDatabase.postgres),
  Layer.orDie
)

/** The client an embedding app derives from the contract, with the key on every request. */
const typedClient = (key: string) =>
  HttpApiClient.make(ScaledgerApi, {
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(key))
  })

layer(restServer(withHistory), { timeout: 60_000 })("a client derived from ScaledgerApi", (it) => {
  it.effect("decodes each error as the tagged error of its code, not the first of its status", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2025-05-12T10:00:00Z"))
      const { key } = yield* newKey("typed-client")
      const client = yield* typedClient(key)
      const quote = yield* client.fx.quote({ path: { currency: "GBP", date: "2025-05-09" } })
      expect(quote).toMatchObject({ quote: "GBP", date: "2025-05-09", carriedForward: false })

      // Three 400s of one operation, each its own error; a 404 and the API-wide invalid_request.
      const tagOf = <E extends { readonly _tag: string }>(effect: Effect.Effect<unknown, E>) =>
        Effect.map(Effect.flip(effect), (error) => error._tag)
      expect(yield* tagOf(client.fx.quote({ path: { currency: "XYZ", date: "2025-05-09" } }))).toBe(
        "UnsupportedCurrency"
      )
      expect(yield* tagOf(client.fx.quote({ path: { currency: "GBP", date: "2099-01-01" } }))).toBe("InvalidDate")
      expect(yield* tagOf(client.fx.quote({ path: { currency: "MXN", date: "2007-12-31" } }))).toBe("NotFound")
      expect(yield* tagOf(client.wallets.get({ path: { address: "not-an-address" } }))).toBe("InvalidAddress")
      const unknown = yield* Effect.flip(
        client.wallets.get({ path: { address: "0x00000000000000000000000000000000000000a1" } })
      )
      expect(unknown).toMatchObject({ _tag: "NotFound" })
      const caught = yield* client.fx.quote({ path: { currency: "GBP", date: "2099-01-01" } }).pipe(
        Effect.catchTag("InvalidDate", (error) => Effect.succeed(`caught: ${error.message}`))
      )
      expect(caught).toMatch(/^caught: /)
    }))

  it.effect("reads the 200 of a wallet already watched, and the edge's own errors as tagged errors", () =>
    Effect.gen(function*() {
      const { key } = yield* newKey("typed-client-edge")
      const client = yield* typedClient(key)
      const address = "0x00000000000000000000000000000000000000b2"
      const created = yield* client.wallets.create({ payload: { address, label: "cold" } })
      // Watching it again answers 200 with the wallet the account already has.
      const again = yield* client.wallets.create({ payload: { address, label: "other" } })
      expect(again).toEqual(created)
      const raw = yield* call("POST", "/v1/wallets", { key, body: { address } })
      expect(raw.status).toBe(200)
      // A body over 1 MiB is refused by the edge before any handler: still the contract's error.
      const tooLarge = yield* Effect.flip(client.exports.create({ payload: { format: "x".repeat(1_100_000) } }))
      expect(tooLarge._tag).toBe("PayloadTooLarge")
    }))
})
