import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Exit, Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startSeededNode, toJson } from "../chain/seed.js"
import { issuerCall } from "../support/ChainHarness.js"
import { freePort, ready, runCli, runEntry, waitFor } from "../support/Processes.js"
import { type Received, startReceiver, TEST_CA_PATH, verifyWithStripe } from "./Receiver.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

const api = (port: number, key: string) => async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

describe("alerts on the local chain, delivered by the service process", () => {
  it(
    "an announcement → pending-multiplier; its activation → accrued-income and the pending alert resolved; a pause → token-paused; each signed and verified by Stripe",
    async () => {
      const seeded = await startSeededNode()
      cleanups.push(() => seeded.node.close())
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-alerts-"))
      cleanups.push(async () => Fs.rmSync(dir, { recursive: true, force: true }))
      const tokenListPath = Path.join(dir, "tokens.json")
      Fs.writeFileSync(tokenListPath, toJson(seeded.tokenList))
      const scope = await Effect.runPromise(Scope.make())
      cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
      const databaseUrl = await Effect.runPromise(Scope.extend(TestDatabase.postgresUrl, scope))
      const receiver = await startReceiver()
      cleanups.push(receiver.close)

      const port = await freePort()
      const server = runEntry("main", [], {
        DATABASE_URL: databaseUrl,
        SCALEDGER_DATA_DIR: Path.join(dir, "data"),
        PORT: String(port),
        HOST: "127.0.0.1",
        RPC_URL: seeded.node.httpUrl,
        CHAIN_ID: String(seeded.node.chainId),
        TOKEN_LIST: tokenListPath,
        FINALITY_DEPTH: "2",
        FX_REFRESH: "off",
        RPC_POLL_INTERVAL_MS: "100",
        RECORDER_BATCH_MS: "50",
        BACKFILL_POLL_MS: "100",
        LEDGER_POLL_MS: "200",
        ALERT_POLL_MS: "300",
        WEBHOOK_POLL_MS: "50",
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
        // The receiver's certificate is trusted only through the test CA, as an operator would do it.
        NODE_EXTRA_CA_CERTS: TEST_CA_PATH
      })
      cleanups.push(async () => {
        server.child.kill("SIGKILL")
        await server.exited
      })
      await ready(port)
      const created = await runCli(["keys", "create", "--account", "alice", "--json"], {
        DATABASE_URL: databaseUrl,
        SCALEDGER_DATA_DIR: Path.join(dir, "data")
      })
      expect(created.code, created.stderr).toBe(0)
      const call = api(port, JSON.parse(created.stdout).key)
      expect(server.output()).toContain("WEBHOOK_ALLOW_PRIVATE_TARGETS=true")

      const hook = await call("POST", "/v1/webhooks", { url: receiver.url("/scaledger"), description: "test receiver" })
      expect(hook.status).toBe(201)
      const secret: string = hook.body.secret
      expect((await call("POST", "/v1/wallets", { address: ALICE, label: "alice" })).status).toBe(201)
      await waitFor("the backfill", async () => {
        const wallet = await call("GET", `/v1/wallets/${ALICE}`)
        return wallet.body.backfill.status === "complete" ? true : undefined
      }, 60_000)

      const kindOf = (request: Received) => JSON.parse(request.body).data.kind as string
      const delivered = (kind: string, timeoutMs = 30_000) =>
        waitFor(`a ${kind} delivery`, async () => receiver.received.find((r) => kindOf(r) === kind), timeoutMs)

      const aapl = seeded.manifest.tokens.find((t) => t.symbol === "AAPL")!.address
      const head = await seeded.node.request<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false])
      const effectiveAt = Number(BigInt(head.timestamp)) + 3_600
      const from = seeded.manifest.finalMultipliers.AAPL!
      const to = from + 10n ** 15n

      // An announced future change of a held token.
      let started = Date.now()
      await issuerCall(seeded.node, aapl, "updateMultiplier", [to, BigInt(effectiveAt)])
      const pending = await delivered("pending-multiplier")
      expect(pending.at - started).toBeLessThan(10_000)
      const pendingBody = verifyWithStripe(pending, secret)
      expect(pendingBody).toMatchObject({
        type: "alert",
        data: { kind: "pending-multiplier", severity: "info", symbol: "AAPL" }
      })
      expect(pendingBody.data.detail).toContain(new Date(effectiveAt * 1000).toISOString())
      expect(pending.headers["scaledger-event-id"]).toBe(pendingBody.id)

      // Its activation: the first block at or after effectiveAt.
      started = Date.now()
      await seeded.node.setNextBlockTimestamp(effectiveAt + 1)
      await seeded.node.request("evm_mine", [])
      const income = await delivered("accrued-income")
      expect(income.at - started).toBeLessThan(10_000)
      expect(verifyWithStripe(income, secret).data).toMatchObject({
        kind: "accrued-income",
        severity: "info",
        symbol: "AAPL",
        at: effectiveAt * 1000
      })
      const pendingAlerts = await waitFor("the pending alert resolved", async () => {
        const reply = await call("GET", "/v1/alerts?kind=pending-multiplier")
        return reply.body.alerts.every((a: any) => a.resolvedAt !== null) ? reply.body.alerts : undefined
      })
      expect(pendingAlerts).toHaveLength(1)

      // A pause of a held token.
      started = Date.now()
      await issuerCall(seeded.node, aapl, "pause", [])
      const paused = await delivered("token-paused")
      expect(paused.at - started).toBeLessThan(10_000)
      expect(verifyWithStripe(paused, secret).data).toMatchObject({ kind: "token-paused", severity: "critical" })
      await issuerCall(seeded.node, aapl, "unpause", [])
      await waitFor("the pause alert resolved", async () => {
        const reply = await call("GET", "/v1/alerts?kind=token-paused&open=false")
        return reply.body.alerts.length === 1 ? true : undefined
      })

      // Every delivery verifies with Stripe's library; each alert came under one event id only.
      const ids = new Map<string, Set<string>>()
      for (const request of receiver.received) {
        const body = verifyWithStripe(request, secret)
        expect(request.headers["scaledger-event-id"]).toBe(body.id)
        ids.set(body.data.kind, (ids.get(body.data.kind) ?? new Set()).add(body.id))
      }
      for (const kind of ["pending-multiplier", "accrued-income", "token-paused"]) expect(ids.get(kind)?.size).toBe(1)
      // Only raising is delivered: the resolutions sent nothing more.
      expect(receiver.received.filter((r) => kindOf(r) === "token-paused")).toHaveLength(1)

      const open = await call("GET", "/v1/alerts?open=true")
      expect(open.body.alerts.map((a: any) => a.kind)).toContain("accrued-income")
      const portfolio = await waitFor("the portfolio", async () => {
        const reply = await call("GET", "/v1/portfolio")
        return reply.status === 200 ? reply.body : undefined
      })
      expect(portfolio.alerts.map((a: any) => a.kind)).toContain("accrued-income")

      server.child.kill("SIGTERM")
      expect(await server.exited).toBe(0)
    },
    180_000
  )
})
