import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startSeededNode, writeSeedFiles } from "../chain/seed.js"
import { freePort, ready, runCli, runEntry, waitFor } from "../support/Processes.js"

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

const tmpDirs: Array<string> = []
const tmpDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-replay-"))
  tmpDirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of tmpDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const request = async (port: number, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json().catch(() => undefined) as any }
}

/** Every event, position and basis record of the account: the record two runs are compared on. */
const record = async (port: number, key: string) => {
  const events = await request(port, key, "GET", "/v1/events?limit=500")
  const positions = await request(port, key, "GET", "/v1/positions")
  const basis = await request(port, key, "GET", "/v1/basis")
  if (events.status !== 200 || positions.status !== 200 || basis.status !== 200) return undefined
  const { asOf: _a, ...positionsBody } = positions.body
  return { events: events.body, positions: positionsBody, basis: basis.body }
}

/**
 * Watches Alice on a fresh database, waits until every transfer is classified and built, confirms the first event
 * awaiting review as `self`, and (with `kill`) SIGKILLs the server right after the PATCH answered, while the replay it
 * started is due or running, then starts it again. Returns the settled record.
 */
const scenario = async (rpcUrl: string, chainId: number, tokenList: string, databaseUrl: string, kill: boolean) => {
  const port = await freePort()
  const env = {
    DATABASE_URL: databaseUrl,
    KEY_HASH_SECRET: "replay-kill-secret",
    SCALEDGER_DATA_DIR: tmpDir(),
    PORT: String(port),
    MCP_PORT: String(await freePort()),
    RPC_URL: rpcUrl,
    CHAIN_ID: String(chainId),
    TOKEN_LIST: tokenList,
    FINALITY_DEPTH: "10",
    FX_REFRESH: "off",
    MODEL_PROVIDER: "none",
    LEDGER_POLL_MS: "100",
    LEDGER_MIN_INTERVAL_MS: "100",
    LEDGER_LEASE_SECONDS: "2",
    CLASSIFY_POLL_MS: "100",
    LOG_LEVEL: "warning"
  }
  let server = runEntry("main", [], env)
  try {
    await ready(port)
    const created = await runCli(["keys", "create", "--account", "alice", "--json"], env)
    expect(created.code, created.stderr).toBe(0)
    const { key } = JSON.parse(created.stdout) as { key: string }
    expect((await request(port, key, "POST", "/v1/wallets", { address: ALICE, label: "alice" })).status).toBe(201)
    // Settled: the backfill done, every transfer classified by the worker, and the same record twice in a row.
    await waitFor("the backfill", async () => {
      const wallet = await request(port, key, "GET", `/v1/wallets/${ALICE}`)
      return wallet.body?.backfill?.status === "complete" ? true : undefined
    }, 90_000)
    let last = ""
    await waitFor("a classified, settled record", async () => {
      const now = await record(port, key)
      if (now === undefined) return undefined
      const movements = now.events.events.filter((e: any) => e.walletTransaction !== null)
      if (movements.length === 0 || movements.some((e: any) => e.classification?.rule === null)) return undefined
      const text = JSON.stringify(now)
      const same = text === last
      last = text
      return same ? true : undefined
    }, 90_000)
    const before = JSON.parse(last)
    const target = before.events.events.find((e: any) => e.needsReview && e.counterparty !== undefined)
    expect(target).toBeDefined()
    const resolved = await request(port, key, "PATCH", `/v1/events/${target.id}`, { relationship: "self" })
    expect(resolved.status).toBe(200)
    if (kill) {
      server.child.kill("SIGKILL")
      await server.exited
      server = runEntry("main", [], env)
      await ready(port)
    }
    await waitFor("the replay", async () => {
      const now = await record(port, key)
      const patched = now?.events.events.find((e: any) => e.id === target.id)
      return patched !== undefined && patched.relationship === "self" && !patched.needsReview ? now : undefined
    }, 90_000)
    // Once more after the worker has nothing left (no further build changes the record).
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const settled = await record(port, key)
    return { settled, target: target.id as string }
  } finally {
    server.child.kill("SIGTERM")
    await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
    server.child.kill("SIGKILL")
  }
}

describe("a label replay survives kill -9", () => {
  it("after a restart the replay finishes and the record equals an uninterrupted run's", async () => {
    const seeded = await startSeededNode()
    try {
      for (let i = 0; i < 12; i++) await seeded.node.request("evm_mine", [])
      const { tokens } = writeSeedFiles(tmpDir(), seeded)
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const killedDb = yield* TestDatabase.postgresUrl
        const calmDb = yield* TestDatabase.postgresUrl
        const killed = yield* Effect.promise(() =>
          scenario(seeded.node.httpUrl, seeded.node.chainId, tokens, killedDb, true)
        )
        const calm = yield* Effect.promise(() =>
          scenario(seeded.node.httpUrl, seeded.node.chainId, tokens, calmDb, false)
        )
        expect(killed.target).toBe(calm.target)
        expect(killed.settled).toEqual(calm.settled)
      })))
    } finally {
      await seeded.node.close()
    }
  }, 400_000)
})
