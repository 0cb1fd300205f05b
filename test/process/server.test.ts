import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, ready, runCli, runEntry } from "../support/Processes.js"

const tmpDirs: Array<string> = []
const tmpDataDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-test-"))
  tmpDirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of tmpDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const get = (port: number, path: string, key?: string) =>
  fetch(`http://127.0.0.1:${port}${path}`, key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } })

describe("the server process on the embedded database", () => {
  it(
    "starts with no setup, prints a first key once, lets the CLI manage keys while it runs, and stops cleanly",
    async () => {
      const dataDir = tmpDataDir()
      const port = await freePort()
      const env = { SCALEDGER_DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: "" }
      const server = runEntry("main", [], env)
      let firstKey = ""
      try {
        await ready(port)
        const printed = /API key (sk_live_[0-9A-Za-z]{32})/.exec(server.output())
        expect(printed, server.output()).not.toBeNull()
        firstKey = printed![1]!
        expect((await get(port, "/v1/wallets", firstKey)).status).toBe(200)

        // The CLI reaches the running server's keys through its loopback admin endpoint.
        const created = await runCli(["keys", "create", "--account", "ops", "--json"], env)
        expect(created.code).toBe(0)
        const key = JSON.parse(created.stdout)
        expect(Object.keys(key).sort()).toEqual(["account", "key", "keyId"])
        expect(key.account).toBe("ops")
        expect((await get(port, "/v1/settings", key.key)).status).toBe(200)

        const listed = await runCli(["keys", "list", "--account", "ops", "--json"], env)
        expect(JSON.parse(listed.stdout)).toEqual([
          expect.objectContaining({ keyId: key.keyId, account: "ops", revokedAt: null })
        ])
        expect(listed.stdout).not.toContain(key.key)

        const revoked = await runCli(["keys", "revoke", key.keyId], env)
        expect(revoked.code).toBe(0)
        expect(revoked.stdout).toContain(`Revoked ${key.keyId} of account ops.`)
        expect((await get(port, "/v1/settings", key.key)).status).toBe(401)
        expect((await get(port, "/v1/settings", firstKey)).status).toBe(200)

        const again = await runCli(["keys", "revoke", key.keyId], env)
        expect(again.code).toBe(0)
        expect(again.stdout).toContain(`${key.keyId} of account ops was already revoked`)

        const unknown = await runCli(["keys", "revoke", "key_doesnotexist"], env)
        expect(unknown.code).toBe(1)
        expect(unknown.stderr).toContain("no key key_doesnotexist")

        server.child.kill("SIGTERM")
        expect(await server.exited).toBe(0)
        expect(Fs.existsSync(Path.join(dataDir, "pglite.lock"))).toBe(false)
        expect(Fs.existsSync(Path.join(dataDir, "admin.json"))).toBe(false)
      } finally {
        server.child.kill("SIGKILL")
      }

      // A second start keeps the keys (the hash secret persists) and prints no new key.
      const again = runEntry("main", [], env)
      try {
        await ready(port)
        expect(again.output()).not.toMatch(/API key sk_live_/)
        expect((await get(port, "/v1/wallets", firstKey)).status).toBe(200)
      } finally {
        again.child.kill("SIGTERM")
        await again.exited
      }

      // With no server holding the folder, the CLI opens the embedded database itself.
      const offline = await runCli(["keys", "list", "--account", "ops", "--json"], env)
      expect(offline.code).toBe(0)
      expect(JSON.parse(offline.stdout)[0].revokedAt).not.toBeNull()
    },
    180_000
  )

  it("refuses a bad configuration in one line, without a stack trace", async () => {
    const run = runEntry("main", [], { SCALEDGER_DATA_DIR: tmpDataDir(), PORT: "not-a-port", DATABASE_URL: "" })
    expect(await run.exited).toBe(1)
    const lines = run.output().trim().split("\n").filter((line) => line.startsWith("scaledger:"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain("configuration error")
    expect(lines[0]).toContain("PORT")
    expect(run.output()).not.toMatch(/\n\s+at /)
  }, 60_000)
})

describe("the CLI on PostgreSQL", () => {
  it("creates, lists and revokes keys directly in the database", async () => {
    const url = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const url = yield* TestDatabase.postgresUrl
      const env = { DATABASE_URL: url, KEY_HASH_SECRET: "cli-test-secret", SCALEDGER_DATA_DIR: tmpDataDir() }
      const created = yield* Effect.promise(() => runCli(["keys", "create", "--account", "pg-ops", "--json"], env))
      expect(created.code, created.stderr).toBe(0)
      const key = JSON.parse(created.stdout)
      expect(key.key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/)
      const human = yield* Effect.promise(() => runCli(["keys", "create", "--account", "pg-ops"], env))
      expect(human.stdout).toMatch(/API key: +sk_live_/)
      const listed = yield* Effect.promise(() => runCli(["keys", "list", "--account", "pg-ops", "--json"], env))
      expect(JSON.parse(listed.stdout)).toHaveLength(2)
      const missing = yield* Effect.promise(() => runCli(["keys", "list", "--account", "nobody"], env))
      expect(missing.code).toBe(1)
      expect(missing.stderr).toContain("no account named nobody")
      const usage = yield* Effect.promise(() => runCli(["keys", "create"], env))
      expect(usage.code).toBe(2)

      // A server sharing the database trusts a checked key from memory; the CLI's revocation reaches it at once.
      const port = yield* Effect.promise(() => freePort())
      const server = runEntry("main", ["--api"], { ...env, PORT: String(port) })
      yield* Effect.promise(async () => {
        try {
          await ready(port)
          expect((await get(port, "/v1/settings", key.key)).status).toBe(200)
          const revoked = await runCli(["keys", "revoke", key.keyId], env)
          expect(revoked.code, revoked.stderr).toBe(0)
          const revokedAt = Date.now()
          let status = 200
          while (status === 200 && Date.now() - revokedAt < 1_000) {
            status = (await get(port, "/v1/settings", key.key)).status
          }
          expect(status).toBe(401)
        } finally {
          server.child.kill("SIGKILL")
        }
      })
      return url
    })))
    expect(url).toMatch(/^postgres/)
  }, 120_000)
  it(
    "refuses an empty account name or one with control characters, as the running server's admin endpoint does",
    async () => {
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const url = yield* TestDatabase.postgresUrl
        const env = { DATABASE_URL: url, KEY_HASH_SECRET: "cli-test-secret", SCALEDGER_DATA_DIR: tmpDataDir() }
        for (const name of ["", "ops\tteam", "x".repeat(201)]) {
          const created = yield* Effect.promise(() => runCli(["keys", "create", "--account", name, "--json"], env))
          expect(created.code, created.stdout).toBe(2)
          expect(created.stdout).not.toMatch(/sk_live_/)
        }
        // A key id with a control character is a usage error as well, before any database is asked.
        const revoked = yield* Effect.promise(() => runCli(["keys", "revoke", "key_\u0001"], env))
        expect(revoked.code, revoked.stderr).toBe(2)
        // Nothing was created: no account of that name lists.
        const listed = yield* Effect.promise(() => runCli(["keys", "list", "--account", "", "--json"], env))
        expect(listed.code).toBe(2)
        expect(listed.stdout).toBe("")
      })))
    },
    120_000
  )
})
