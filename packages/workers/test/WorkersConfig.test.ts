import { describe, expect, it } from "@effect/vitest"
import { WorkersConfig } from "@scaledger/workers/WorkersConfig"
import { ConfigProvider, Duration, Effect, Either } from "effect"

const load = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(WorkersConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

describe("WorkersConfig", () => {
  it("reads every section into one record, with the documented defaults", () => {
    const config = Either.getOrThrow(load({}))
    expect(config.chain.chainId).toBe(4663)
    expect(config.ingest.backfillConcurrency).toBe(2)
    expect(Duration.toMillis(config.ledger.poll)).toBe(500)
    const classification = config.classification
    expect(Duration.toMillis(classification.poll)).toBe(1_000)
    expect(Duration.toMillis(classification.modelTimeout)).toBe(30_000)
    expect(Duration.toMillis(classification.scan)).toBe(2_000)
    expect([classification.batch, classification.modelBatch, classification.leaseSeconds]).toEqual([1_000, 200, 120])
    expect([classification.modelRetrySeconds, classification.modelAttempts]).toEqual([300, 5])
    expect(config.fx.refresh).toBe(true)
    expect(config.fx.provider.provider).toBe("ecb")
    expect(config.edgar.refreshHours).toBe(24)
    expect(config.webhooks.concurrency).toBe(16)
  })

  it("takes Effect durations where the variable names a unit", () => {
    const config = Either.getOrThrow(load({ CLASSIFY_POLL_MS: "2 seconds", CLASSIFY_SCAN_MS: "750" }))
    expect(Duration.toMillis(config.classification.poll)).toBe(2_000)
    expect(Duration.toMillis(config.classification.scan)).toBe(750)
  })

  it.each([
    ["CLASSIFY_POLL_MS", "0", "CLASSIFY_POLL_MS must be more than zero"],
    ["CLASSIFY_BATCH", "-5", "CLASSIFY_BATCH must be a positive integer"],
    ["CLASSIFY_MODEL_BATCH", "0", "CLASSIFY_MODEL_BATCH must be a positive integer"],
    ["CLASSIFY_LEASE_SECONDS", "0", "CLASSIFY_LEASE_SECONDS must be a positive integer"],
    ["CLASSIFY_MODEL_TIMEOUT_MS", "0", "CLASSIFY_MODEL_TIMEOUT_MS must be more than zero"],
    ["CLASSIFY_SCAN_MS", "-1", "CLASSIFY_SCAN_MS must be a whole number of millis"],
    ["CLASSIFY_MODEL_RETRY_SECONDS", "-1", "CLASSIFY_MODEL_RETRY_SECONDS must be zero or more"],
    ["CLASSIFY_MODEL_ATTEMPTS", "0", "CLASSIFY_MODEL_ATTEMPTS must be a positive integer"],
    ["FX_PROVIDER", "xe", "FX_PROVIDER"],
    ["CHAIN_ID", "0", "CHAIN_ID must be a positive integer"],
    ["EDGAR_REFRESH_HOURS", "-1", "EDGAR_REFRESH_HOURS must be zero or more"]
  ])("refuses %s=%s, naming the variable", (name, value, message) => {
    const result = load({ [name]: value })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(String(result.left)).toContain(message)
  })
})
