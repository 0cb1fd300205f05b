import { readOrCreateSecretFile } from "@scaledger/db/DataDirSecret"
import { KeyHashSecret, KeyHashSecretLive } from "@scaledger/server/auth/KeyHashSecret"
import { LogConfig, RateLimitConfig } from "@scaledger/server/Config"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { WebhookConfigFromEnv } from "@scaledger/workers/webhooks/WebhookConfig"
import { ConfigProvider, Effect, Either, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})
const withEnv = (env: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("secrets set but empty", () => {
  it("count as unset: a secret is generated into the data folder, never the empty string", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-secrets-"))
    dirs.push(dataDir)
    const env = withEnv({ KEY_HASH_SECRET: "", WEBHOOK_SECRET_KEY: "  ", SCALEDGER_DATA_DIR: dataDir })
    const secret = await Effect.runPromise(
      Effect.provide(KeyHashSecret, KeyHashSecretLive.pipe(Layer.provide(env)))
    )
    expect(Redacted.value(secret)).toBe(Fs.readFileSync(Path.join(dataDir, "key-hash-secret"), "utf8").trim())
    expect(Redacted.value(secret)).toMatch(/^[0-9a-f]{64}$/)
    const box = await Effect.runPromise(
      Effect.provide(WebhookSecretBox, WebhookSecretBox.Live.pipe(Layer.provide(env)))
    )
    expect(box).toBeDefined()
    expect(Fs.readFileSync(Path.join(dataDir, "webhook-secret-key"), "utf8").trim()).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe("a secret file in the data folder", () => {
  it("is never read half made: an empty file is refused at start, not taken as the empty secret", async () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-secrets-"))
    dirs.push(dataDir)
    // What a start cut off between creating the file and writing it left behind.
    Fs.writeFileSync(Path.join(dataDir, "key-hash-secret"), "")
    Fs.writeFileSync(Path.join(dataDir, "webhook-secret-key"), "\n")
    const env = withEnv({ SCALEDGER_DATA_DIR: dataDir })
    await expect(Effect.runPromise(Effect.provide(KeyHashSecret, KeyHashSecretLive.pipe(Layer.provide(env)))))
      .rejects.toThrow("key-hash-secret is empty")
    await expect(Effect.runPromise(Effect.provide(WebhookSecretBox, WebhookSecretBox.Live.pipe(Layer.provide(env)))))
      .rejects.toThrow("webhook-secret-key is empty")
  })

  it("is made once: every reader gets the first one written, and no draft is left beside it", () => {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-secrets-"))
    dirs.push(dataDir)
    const first = readOrCreateSecretFile(dataDir, "key-hash-secret")
    expect(first).toMatch(/^[0-9a-f]{64}$/)
    expect(readOrCreateSecretFile(dataDir, "key-hash-secret")).toBe(first)
    expect(Fs.readdirSync(dataDir)).toEqual(["key-hash-secret"])
    expect(Fs.statSync(Path.join(dataDir, "key-hash-secret")).mode & 0o777).toBe(0o600)
  })
})

describe("a bad setting", () => {
  it("is refused with a message naming its variable", async () => {
    const failed = async (config: Effect.Effect<unknown, unknown>, env: Record<string, string>) =>
      Either.getLeft(await Effect.runPromise(Effect.either(Effect.provide(config, withEnv(env)))))
    expect(String(await failed(RateLimitConfig, { RATE_LIMIT_PER_MINUTE: "-5" }))).toContain("RATE_LIMIT_PER_MINUTE")
    expect(String(await failed(LogConfig, { LOG_LEVEL: "verbose" }))).toContain("LOG_LEVEL")
  })
})

describe("the webhook lease", () => {
  it("must outlast an attempt's time-out, or the start is refused", async () => {
    const read = (env: Record<string, string>) =>
      Effect.runPromise(Effect.either(Effect.provide(WebhookConfigFromEnv, withEnv(env))))
    const short = await read({ WEBHOOK_LEASE_SECONDS: "10", WEBHOOK_TIMEOUT_MS: "15000" })
    expect(String(Either.getLeft(short))).toContain("WEBHOOK_LEASE_SECONDS")
    expect(Either.isRight(await read({ WEBHOOK_LEASE_SECONDS: "16", WEBHOOK_TIMEOUT_MS: "15000" }))).toBe(true)
    expect(Either.isRight(await read({}))).toBe(true)
  })
})
