import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { FxRates } from "@scaledger/db/FxRates"
import { MarketReads } from "@scaledger/db/market/MarketReads"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { monitorPass } from "@scaledger/workers/alerts/AlertMonitor"
import { PauseChecks } from "@scaledger/workers/ingest/PauseChecks"
import { makeRecorder } from "@scaledger/workers/ingest/Recorder"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { Effect, Layer } from "effect"
import { addAndBackfill, ingestServices, issuerCall, seededChain } from "../support/ChainHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
const key = (address: string) => address.toLowerCase()

describe("paused() reads on the local chain", () => {
  it.live(
    "a pause no event shows (issuer-wide, before watching) is read, alerted once per pause, and resolved when it ends",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const { node } = chain
        const aapl = chain.manifest.tokens.find((t) => t.symbol === "AAPL")!.address
        expect(chain.manifest.finalBalances["AAPL"]?.[ALICE] ?? 0n).toBeGreaterThan(0n)
        expect(chain.manifest.pauses.some((p) => p.symbol === "AAPL")).toBe(false)
        // Paused before the service ever watched, by the switch that emits no event.
        yield* Effect.promise(() => issuerCall(node, aapl, "setGlobalPause", [true]))

        const services = Layer.mergeAll(
          ingestServices({ rpcUrl: node.httpUrl, chainId: node.chainId, tokenListPath: chain.tokenListPath }),
          AlertSources.Default,
          AlertsStore.Default,
          FxRates.Default,
          MarketReads.Default,
          WebhookConfig.layer({})
        ).pipe(Layer.provideMerge(TestDatabase.postgres))

        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* AlertsStore
          const checks = yield* PauseChecks
          const reads = () =>
            sql<{ block: string; paused: boolean }>`
              SELECT block, paused FROM token_pause_reads WHERE token_key = ${key(aapl)} ORDER BY block`.pipe(
              Effect.map((rows) => rows.map((r) => [Number(r.block), r.paused]))
            )
          const alerts = (accountId: string) =>
            Effect.map(
              store.list(accountId, { kind: "token-paused" }, { beforeSeq: undefined, limit: 50 }),
              (page) => page.alerts.map((a) => ({ open: a.resolvedAt === null, cause: a.causeKey, detail: a.detail }))
            )

          // One recorder for the whole test (each new one reads every token at its start).
          const recorder = yield* makeRecorder
          const client = yield* ChainClient
          const recordToHead = Effect.flatMap(client.head, recorder.step)
          // The recorder's first run reads every token at the head: AAPL is paused, unlike its (absent) events.
          yield* recordToHead
          const head = yield* Effect.promise(() => node.blockNumber())
          expect(yield* reads()).toEqual([[head, true]])
          // Tokens nobody paused are not stored: a read that agrees with the record adds nothing.
          const others = yield* sql<{ n: string }>`SELECT count(*) AS n FROM token_pause_reads WHERE token_key <> ${
            key(aapl)
          }`
          expect(Number(others[0]!.n)).toBe(0)
          const market = yield* MarketReads
          expect((yield* market.pauses(node.chainId, aapl, new Date(Date.now() + 86_400_000))).token).toMatchObject({
            paused: true,
            block: head
          })

          const wallet = yield* addAndBackfill(ALICE, node.chainId, "pause-reads")
          const account = wallet.accountId
          yield* monitorPass
          const first = yield* alerts(account)
          expect(first).toHaveLength(1)
          expect(first[0]).toMatchObject({ open: true, cause: expect.stringContaining(":read:") })
          expect(first[0]!.detail).toContain("paused() read true")
          // Checked again with nothing changed: nothing stored, still one alert.
          expect(yield* checks.checkAll).toEqual([])
          yield* monitorPass
          expect(yield* alerts(account)).toHaveLength(1)

          // The issuer's own token pause on top, then its unpause while the issuer-wide pause stays: the Paused and
          // Unpaused logs are read at their blocks, and the pause goes on as the same cause (no second alert).
          const paused = yield* Effect.promise(() => issuerCall(node, aapl, "pause", []))
          yield* recordToHead
          const unpaused = yield* Effect.promise(() => issuerCall(node, aapl, "unpause", []))
          yield* recordToHead
          expect(yield* reads()).toEqual([[head, true], [unpaused.block, true]])
          expect(paused.block).toBeLessThan(unpaused.block)
          yield* monitorPass
          expect((yield* alerts(account)).filter((a) => a.open)).toHaveLength(1)
          expect(yield* alerts(account)).toHaveLength(1)

          // The issuer-wide pause ends without an event: the periodic read finds it, and the alert is resolved.
          const resumed = yield* Effect.promise(() => issuerCall(node, aapl, "setGlobalPause", [false]))
          yield* recordToHead
          const ended = yield* checks.checkAll
          expect(ended.map((r) => [r.block, r.paused])).toEqual([[resumed.block, false]])
          yield* monitorPass
          expect((yield* alerts(account)).map((a) => a.open)).toEqual([false])
          expect((yield* market.pauses(node.chainId, aapl, new Date(Date.now() + 86_400_000))).token.paused).toBe(
            false
          )

          // A later pause by event is a new cause: one new alert, named by its transaction.
          const again = yield* Effect.promise(() => issuerCall(node, aapl, "pause", []))
          yield* recordToHead
          yield* monitorPass
          const after = yield* alerts(account)
          expect(after.filter((a) => a.open)).toEqual([
            expect.objectContaining({ cause: expect.stringContaining(again.hash) })
          ])
          // ... and no read row for it: the read at its block agrees with the event.
          expect((yield* reads()).map(([block]) => block)).not.toContain(again.block)
        }).pipe(Effect.provide(services))
      }).pipe(Effect.scoped),
    120_000
  )
})
