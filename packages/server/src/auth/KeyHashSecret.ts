import { readOrCreateSecretFile } from "@scaledger/db/DataDirSecret"
import { Context, Effect, Layer, Option, Redacted } from "effect"
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
    return Redacted.make(yield* Effect.sync(() => readOrCreateSecretFile(dataDir, "key-hash-secret")))
  })
)
