import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertSources } from "@scaledger/db/alerts/AlertSources"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { PriceRounds } from "@scaledger/db/chain/PriceRounds"
import { FxRates } from "@scaledger/db/FxRates"
import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { WalletsRepo } from "@scaledger/db/Wallets"
import { monitorPass } from "@scaledger/workers/alerts/AlertMonitor"
import { makeRecorder } from "@scaledger/workers/ingest/Recorder"
import { WebhookConfig } from "@scaledger/workers/webhooks/WebhookConfig"
import { Duration, Effect, Layer, Logger } from "effect"
import { ingestServices, issuerCall, seededChain, startFaultProxy } from "../support/ChainHarness.js"
import { call, newKey, restServer } from "../support/RestHarness.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

/** Polls `check` every 100 ms until it holds, for at most `seconds`. */
const waitFor = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, seconds = 20) =>
  Effect.gen(function*() {
    const deadline = Date.now() + seconds * 1000
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.dieMessage(`timed out waiting for ${what}`)
      yield* Effect.sleep(Duration.millis(100))
    }
  })

describe("degraded chain reads (fault proxy)", () => {
  it.live(
    "an unreachable, then rate-limiting RPC, then a range no split fetches: one line and one alert per cause, resolved when reads work",
    () =>
      Effect.gen(function*() {
        const chain = yield* seededChain
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => startFaultProxy({ target: chain.node.httpUrl })),
          (p) => Effect.promise(() => p.close())
        )
        const lines: Array<{ level: string; message: string; cause: boolean }> = []
        const capture = Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ cause, logLevel, message }) => {
            lines.push({
              level: logLevel.label,
              message: Array.isArray(message) ? message.map(String).join(" ") : String(message),
              cause: cause._tag !== "Empty"
            })
          })
        )
        const services = Layer.mergeAll(
          ingestServices({
            rpcUrl: proxy.url,
            chainId: chain.node.chainId,
            tokenListPath: chain.tokenListPath,
            chain: { maxRetries: 3, retryBaseDelayMs: 5, retryMaxDelayMs: 20, timeoutMs: 1_000 }
          }),
          AlertSources.Default,
          AlertsStore.Default,
          FxRates.Default,
          WebhookConfig.layer({}),
          restServer(TestDatabase.postgres).pipe(
            Layer.provideMerge(Layer.mergeAll(LedgerStore.Default, PriceRounds.Default))
          )
        ).pipe(Layer.provideMerge(TestDatabase.postgres))

        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const store = yield* AlertsStore
          const { account } = yield* (yield* AccountsRepo).findOrCreate("health")
          yield* (yield* WalletsRepo).insert({
            accountId: account.id,
            address: ALICE,
            label: "",
            self: true,
            watchingFromBlock: null,
            watchingFromAt: null,
            chainId: chain.node.chainId
          })
          const health = sql<{ status: string; cause: string | null }>`
            SELECT status, cause FROM chain_read_health WHERE reader = 'recorder'`
          const degradedAlerts = Effect.map(
            store.list(account.id, { kind: "degraded-read" }, { beforeSeq: undefined, limit: 50 }),
            (page) => page.alerts
          )
          const recorder = yield* makeRecorder
          yield* Effect.forkScoped(recorder.run)
          yield* waitFor(
            "the recorder's first step",
            Effect.map(sql`SELECT 1 FROM chain_cursors WHERE name = 'recorder'`, (rows) => rows.length > 0)
          )

          // The RPC goes away: every connection reset.
          proxy.setFaults({ down: true })
          yield* waitFor("the recorder degraded", Effect.map(health, (rows) => rows[0]?.status === "degraded"))
          expect((yield* health)[0]).toEqual({ status: "degraded", cause: "unreachable" })
          // Several retries later, still one line about it and no stack traces.
          const failedBefore = proxy.faultCounts().reset ?? 0
          yield* Effect.sleep(Duration.seconds(3))
          expect((proxy.faultCounts().reset ?? 0) - failedBefore).toBeGreaterThan(3)
          expect(lines.filter((l) => l.message.includes("chain reads degraded (recorder"))).toHaveLength(1)
          expect(lines.filter((l) => l.level === "WARN" && l.message.startsWith("recorder:"))).toEqual([])
          expect(lines.filter((l) => l.cause)).toEqual([])

          // The alert: raised once, however many passes; the record is still read from the database meanwhile.
          expect(yield* monitorPass).toBeGreaterThanOrEqual(1)
          expect(yield* monitorPass).toBe(0)
          // (The pause reads of the recorder's first step may have been cut off by the outage too.)
          expect((yield* store.open(account.id)).map((a) => a.causeKey)).toContain(
            `degraded-read:chain:${chain.node.chainId}:recorder:unreachable`
          )
          const alert = (yield* degradedAlerts).find((a) => a.causeKey.includes(":recorder:"))
          expect(alert).toMatchObject({ kind: "degraded-read", severity: "warning", resolvedAt: null })
          expect(alert!.detail).toContain("unreachable")
          // The REST reads answer from the database while the chain is unreachable, the alert among them.
          const { key } = yield* newKey("health")
          const alertsReply = yield* call("GET", "/v1/alerts?kind=degraded-read&open=true", { key })
          expect(alertsReply.status).toBe(200)
          expect(alertsReply.body.alerts.map((a: { kind: string }) => a.kind)).toContain("degraded-read")
          const walletsReply = yield* call("GET", "/v1/wallets", { key })
          expect(walletsReply.status).toBe(200)
          expect(walletsReply.text.toLowerCase()).toContain(ALICE.toLowerCase())

          // Reachable again but rate limiting every request: another cause, so the first alert ends and one more is
          // raised, with one more line.
          proxy.setFaults({ rateLimitRate: 1, retryAfterSeconds: 1 })
          yield* waitFor("the cause rate_limited", Effect.map(health, (rows) => rows[0]?.cause === "rate_limited"), 90)
          expect(lines.filter((l) => l.message.includes("chain reads degraded (recorder"))).toHaveLength(2)
          yield* monitorPass
          const open = (yield* store.open(account.id)).map((a) => a.causeKey)
          expect(open).toContain(`degraded-read:chain:${chain.node.chainId}:recorder:rate_limited`)
          expect(open).not.toContain(`degraded-read:chain:${chain.node.chainId}:recorder:unreachable`)

          // Back: the next step succeeds, one line says so, and the alert is resolved.
          proxy.setFaults({})
          yield* Effect.promise(() => chain.node.mine(1))
          yield* waitFor("the recorder recovered", Effect.map(health, (rows) => rows[0]?.status === "ok"), 90)
          expect(lines.filter((l) => l.message.includes("chain reads recovered (recorder)"))).toHaveLength(1)
          // The step after the outage reads every token's paused() again, so the pause reads are back too.
          yield* waitFor(
            "every reader ok",
            Effect.map(
              sql<{ n: string }>`
            SELECT count(*) AS n FROM chain_read_health WHERE status = 'degraded'`,
              (rows) => Number(rows[0]!.n) === 0
            )
          )
          yield* monitorPass
          expect((yield* degradedAlerts).every((a) => a.resolvedAt !== null)).toBe(true)
          expect(yield* store.open(account.id)).toEqual([])
          expect(lines.filter((l) => l.cause)).toEqual([])

          // A log no range split can fetch (a provider capping results below what one block holds): `range`.
          const aapl = chain.manifest.tokens.find((t) => t.symbol === "AAPL")!.address
          proxy.setFaults({ getLogsMaxResults: 0 })
          yield* Effect.promise(() => issuerCall(chain.node, aapl, "pause", []))
          yield* waitFor("the cause range", Effect.map(health, (rows) => rows[0]?.cause === "range"), 90)
          proxy.setFaults({})
          yield* Effect.promise(() => chain.node.mine(1))
          yield* waitFor("the recorder recovered", Effect.map(health, (rows) => rows[0]?.status === "ok"), 90)
          // The pause the capped logs hid is on record once they could be read.
          const pauses =
            yield* sql`SELECT 1 FROM token_pause_events WHERE kind = 'Paused' AND token_key = ${aapl.toLowerCase()} AND block > ${
              chain.manifest.pauses.reduce((max, p) => Math.max(max, p.block), 0)
            }`
          expect(pauses).toHaveLength(1)
        }).pipe(Effect.provide(services), Effect.provide(capture))
      }).pipe(Effect.scoped),
    150_000
  )
})
