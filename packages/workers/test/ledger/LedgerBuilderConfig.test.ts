import { describe, expect, it } from "@effect/vitest"
import { LedgerBuilderConfig } from "@scaledger/workers/ledger/LedgerBuilder"
import { ConfigProvider, Duration, Effect, Either } from "effect"

const load = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(LedgerBuilderConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

describe("LedgerBuilderConfig", () => {
  it("keeps the documented defaults", () => {
    const config = Either.getOrThrow(load({}))
    expect(Duration.toMillis(config.poll)).toBe(500)
    expect(Duration.toMillis(config.minInterval)).toBe(2_000)
    expect(Duration.toSeconds(config.maxAge)).toBe(3_600)
    expect(Duration.toSeconds(config.lease)).toBe(60)
    expect(config.concurrency).toBe(2)
    expect(config.checkpoints).toBe(16)
    expect(config.checkpointEvents).toBe(2_000_000)
    expect(config.checkpointLots).toBe(40_000)
    expect(config.holdEvents).toBe(10_000)
  })

  it("reads the variables in their units, and 0 where 0 means off", () => {
    const config = Either.getOrThrow(
      load({ LEDGER_POLL_MS: "100", LEDGER_MIN_INTERVAL_MS: "0", LEDGER_CHECKPOINTS: "0" })
    )
    expect(Duration.toMillis(config.poll)).toBe(100)
    expect(Duration.toMillis(config.minInterval)).toBe(0)
    expect(config.checkpoints).toBe(0)
  })

  it.each([
    ["LEDGER_POLL_MS", "0", "LEDGER_POLL_MS must be more than zero"],
    ["LEDGER_MAX_AGE_SECONDS", "-1", "LEDGER_MAX_AGE_SECONDS must be a whole number of seconds"],
    ["LEDGER_CONCURRENCY", "0", "LEDGER_CONCURRENCY must be a positive integer"],
    ["LEDGER_LEASE_SECONDS", "0", "LEDGER_LEASE_SECONDS must be more than zero"],
    ["LEDGER_CHECKPOINTS", "-2", "LEDGER_CHECKPOINTS must be zero or more"],
    ["LEDGER_CHECKPOINT_EVENTS", "many", "LEDGER_CHECKPOINT_EVENTS"],
    ["LEDGER_CHECKPOINT_LOTS", "-1", "LEDGER_CHECKPOINT_LOTS must be zero or more"]
  ])("refuses %s=%s", (name, value, message) => {
    const result = load({ [name]: value })
    expect(Either.isLeft(result)).toBe(true)
    expect(String(Either.isLeft(result) ? result.left : "")).toContain(message)
  })
})
