import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { DataDir, KeyHashSecretConfig } from "../Config.js"

/** The server secret API keys are hashed with (HMAC-SHA256). */
export class KeyHashSecret
  extends Context.Tag("@scaledger/server/KeyHashSecret")<KeyHashSecret, Redacted.Redacted<string>>()
{}

/**
 * `KEY_HASH_SECRET` when set; otherwise a secret generated once and kept (mode 0600) in the data folder, so keys
 * survive restarts. Several servers sharing one PostgreSQL must share `KEY_HASH_SECRET`.
 */
export const KeyHashSecretLive = Layer.effect(
  KeyHashSecret,
  Effect.gen(function*() {
    const configured = yield* KeyHashSecretConfig
    if (Option.isSome(configured)) return configured.value
    const dataDir = Path.resolve(yield* DataDir)
    const file = Path.join(dataDir, "key-hash-secret")
    return yield* Effect.sync(() => {
      Fs.mkdirSync(dataDir, { recursive: true })
      try {
        Fs.writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      return Redacted.make(Fs.readFileSync(file, "utf8").trim())
    })
  })
)
