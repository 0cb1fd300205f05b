import { readOrCreateSecretFile } from "@scaledger/db/DataDirSecret"
import { randomBase62 } from "@scaledger/db/Ids"
import { DataDir, optionalSecret } from "@scaledger/domain/ConfigValues"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto"
import * as Path from "node:path"

export interface SecretBoxShape {
  /** AES-256-GCM: `v1.` + base64url(iv ‖ tag ‖ ciphertext). */
  readonly seal: (plain: string) => string
  readonly open: (sealed: string) => string
}

const makeBox = (key: Redacted.Redacted<string>): SecretBoxShape => {
  const aesKey = createHash("sha256").update(Redacted.value(key), "utf8").digest()
  return {
    seal: (plain) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", aesKey, iv)
      const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return `v1.${Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64url")}`
    },
    open: (sealed) => {
      if (!sealed.startsWith("v1.")) throw new Error("unknown secret format")
      const raw = Buffer.from(sealed.slice(3), "base64url")
      const decipher = createDecipheriv("aes-256-gcm", aesKey, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
    }
  }
}

/** Encrypts webhook signing secrets at rest, under `WEBHOOK_SECRET_KEY`. */
export class WebhookSecretBox extends Context.Tag("@scaledger/workers/WebhookSecretBox")<
  WebhookSecretBox,
  SecretBoxShape
>() {
  static readonly fromKey = (key: Redacted.Redacted<string>) => Layer.succeed(WebhookSecretBox, makeBox(key))

  /**
   * `WEBHOOK_SECRET_KEY` when set; otherwise a key generated once into the data folder (`SCALEDGER_DATA_DIR`,
   * mode 0600), like `KEY_HASH_SECRET`. Instances sharing one PostgreSQL must share it.
   */
  static readonly Live = Layer.effect(
    WebhookSecretBox,
    Effect.gen(function*() {
      const configured = yield* optionalSecret("WEBHOOK_SECRET_KEY")
      if (Option.isSome(configured)) return makeBox(configured.value)
      const dataDir = Path.resolve(yield* DataDir)
      return makeBox(Redacted.make(yield* Effect.sync(() => readOrCreateSecretFile(dataDir, "webhook-secret-key"))))
    })
  )
}

/** A new endpoint secret: `whsec_` + 32 base62 characters. */
export const newWebhookSecret = (): string => `whsec_${randomBase62(32)}`

/** `Scaledger-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<rawBody>" keyed with the secret>`. */
export const signatureHeader = (secret: string, body: string, unixSeconds: number): string => {
  const v1 = createHmac("sha256", secret).update(`${unixSeconds}.${body}`, "utf8").digest("hex")
  return `t=${unixSeconds},v1=${v1}`
}
