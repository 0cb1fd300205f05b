import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import { AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { newWebhookSecret, WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startTestNode } from "../chain/node.js"
import { ROOT, waitFor } from "../support/Processes.js"
import { startReceiver, TEST_CA_PATH, verifyWithStripe } from "./Receiver.js"

const ALERTS = 300
const SECRET_KEY = "durability-test-webhook-secret-key"

/**
 * The service's entry point as one node process (tsx as an import hook, not its wrapper process), so that a
 * SIGKILL kills the process that holds the leases, as `kill -9` would.
 */
const runWorkers = (env: Record<string, string>) => {
  const child = spawn(process.execPath, [
    "--import",
    "tsx",
    Path.join(ROOT, "packages/server/src/main.ts"),
    "--workers"
  ], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? (signal === null ? null : -1)))
  )
  return { child, output: () => output, exited }
}

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

describe("webhook delivery durability", () => {
  it(
    "kill -9 with deliveries due: after a restart every alert is delivered, none lost, duplicates only under the same event id",
    async () => {
      const scope = await Effect.runPromise(Scope.make())
      cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
      const databaseUrl = await Effect.runPromise(Scope.extend(TestDatabase.postgresUrl, scope))
      const db = ManagedRuntime.make(
        Layer.mergeAll(AlertsStore.Default, WebhooksRepo.Default, AccountsRepo.Default).pipe(
          Layer.provideMerge(Database.layerWith({ _tag: "Postgres", url: Redacted.make(databaseUrl) })),
          Layer.merge(WebhookSecretBox.fromKey(Redacted.make(SECRET_KEY))),
          Layer.orDie
        )
      )
      cleanups.push(() => db.dispose())
      const node = await startTestNode()
      cleanups.push(() => node.close())
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-durability-"))
      cleanups.push(async () => Fs.rmSync(dir, { recursive: true, force: true }))
      const receiver = await startReceiver()
      cleanups.push(receiver.close)
      // Slow answers keep attempts in flight when the process dies; every 7th event fails its first attempt, so
      // some deliveries wait for a retry.
      const seen = new Map<string, number>()
      receiver.answer = (request) => {
        const id = request.headers["scaledger-event-id"] as string
        const n = (seen.get(id) ?? 0) + 1
        seen.set(id, n)
        return n === 1 && Number.parseInt(id.slice(-2), 36) % 7 === 0 ? { status: 503 } : { status: 200, delayMs: 60 }
      }

      // 300 alerts and their deliveries in the outbox, due now.
      const secret = newWebhookSecret()
      const eventIds = await db.runPromise(Effect.gen(function*() {
        const { account } = yield* (yield* AccountsRepo).findOrCreate("durable")
        const box = yield* WebhookSecretBox
        yield* (yield* WebhooksRepo).create({
          id: "we_durability",
          accountId: account.id,
          url: receiver.url("/durable"),
          description: "",
          kinds: [],
          secretEnc: box.seal(secret)
        })
        const store = yield* AlertsStore
        for (let i = 0; i < ALERTS; i++) {
          yield* store.raise(account.id, {
            key: `durability:${i}`,
            kind: "degraded-read",
            severity: "warning",
            title: `Alert ${i}`,
            detail: `The ${i}th alert of the durability test.`,
            symbol: "",
            at: new Date(Date.UTC(2026, 10, 23, 12, 0, i % 60)),
            oneShot: true
          })
        }
        const sql = yield* SqlClient.SqlClient
        return (yield* sql<{ event_id: string }>`SELECT event_id FROM webhook_deliveries`).map((r) => r.event_id)
      }))
      expect(eventIds).toHaveLength(ALERTS)

      const env = {
        DATABASE_URL: databaseUrl,
        SCALEDGER_DATA_DIR: Path.join(dir, "data"),
        WEBHOOK_SECRET_KEY: SECRET_KEY,
        RPC_URL: node.httpUrl,
        CHAIN_ID: String(node.chainId),
        FX_REFRESH: "off",
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
        WEBHOOK_RETRY_DELAYS: "500ms,1s",
        WEBHOOK_LEASE_SECONDS: "2",
        // The lease must outlast an attempt's time-out.
        WEBHOOK_TIMEOUT_MS: "1000",
        WEBHOOK_CONNECT_TIMEOUT_MS: "500",
        WEBHOOK_POLL_MS: "50",
        WEBHOOK_CONCURRENCY: "8",
        NODE_EXTRA_CA_CERTS: TEST_CA_PATH
      }
      const first = runWorkers(env)
      cleanups.push(async () => {
        first.child.kill("SIGKILL")
      })
      await waitFor("the first deliveries", async () => receiver.received.length >= 60 ? true : undefined, 60_000)
      first.child.kill("SIGKILL")
      expect(await first.exited).toBe(-1)
      const atKill = receiver.received.length

      const pending = await db.runPromise(Effect.flatMap(WebhooksRepo, (repo) => repo.pendingCount))
      expect(pending, `${atKill} received at the kill`).toBeGreaterThan(0)

      const second = runWorkers(env)
      cleanups.push(async () => {
        second.child.kill("SIGKILL")
      })
      const states = () =>
        db.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ status: string; n: string }>`SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status`)
        )
      await waitFor("every delivery done", async () => {
        const rows = await states()
        return rows.length === 1 && rows[0]!.status === "succeeded" ? true : undefined
      }, 90_000)
      expect(Number((await states())[0]!.n)).toBe(ALERTS)
      expect(receiver.received.length).toBeGreaterThan(atKill)

      // None lost: every event id arrived. Duplicates only under the same id, with the same body.
      const bodies = new Map<string, string>()
      for (const request of receiver.received) {
        const body = verifyWithStripe(request, secret)
        expect(request.headers["scaledger-event-id"]).toBe(body.id)
        const earlier = bodies.get(body.id)
        if (earlier !== undefined) expect(request.body).toBe(earlier)
        bodies.set(body.id, request.body)
      }
      expect([...bodies.keys()].sort()).toEqual([...eventIds].sort())
      const titles = new Set([...bodies.values()].map((b) => JSON.parse(b).data.title))
      expect(titles.size).toBe(ALERTS)

      second.child.kill("SIGTERM")
      expect(await second.exited, second.output().slice(-3000)).toBe(0)
    },
    240_000
  )
})
