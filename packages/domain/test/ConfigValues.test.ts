import { describe, expect, it } from "@effect/vitest"
import { durationSetting, nonNegativeInteger, optionalHttpUrl, positiveInteger } from "@scaledger/domain/ConfigValues"
import { type Config, ConfigProvider, Duration, Effect, Either, Option } from "effect"

const load = <A>(config: Config.Config<A>, env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))))

const errorText = <A>(config: Config.Config<A>, env: Record<string, string>): string => {
  const result = load(config, env)
  if (Either.isRight(result)) throw new Error(`expected a configuration error, got ${String(result.right)}`)
  return String(result.left)
}

describe("ConfigValues", () => {
  it("integers: the default when unset, the value when valid, a message naming the variable otherwise", () => {
    expect(load(positiveInteger("N", 2), {})).toEqual(Either.right(2))
    expect(load(positiveInteger("N", 2), { N: "7" })).toEqual(Either.right(7))
    expect(errorText(positiveInteger("N", 2), { N: "0" })).toContain("N must be a positive integer")
    expect(errorText(positiveInteger("N", 2), { N: "two" })).toContain("N")
    expect(load(nonNegativeInteger("N", 2), { N: "0" })).toEqual(Either.right(0))
    expect(errorText(nonNegativeInteger("N", 2), { N: "-1" })).toContain("N must be zero or more")
  })

  it("durations: a whole number in the variable's unit, or an Effect duration", () => {
    const poll = durationSetting("POLL_MS", "millis", 500, { positive: true })
    const lease = durationSetting("LEASE_SECONDS", "seconds", 300)
    const ms = (config: Config.Config<Duration.Duration>, env: Record<string, string>) =>
      Either.map(load(config, env), Duration.toMillis)
    expect(ms(poll, {})).toEqual(Either.right(500))
    expect(ms(poll, { POLL_MS: "100" })).toEqual(Either.right(100))
    expect(ms(poll, { POLL_MS: "2 seconds" })).toEqual(Either.right(2_000))
    expect(ms(lease, {})).toEqual(Either.right(300_000))
    expect(ms(lease, { LEASE_SECONDS: "0" })).toEqual(Either.right(0))
  })

  it("durations: refuses negatives, garbage, infinity, and zero where an interval must not spin", () => {
    const poll = durationSetting("POLL_MS", "millis", 500, { positive: true })
    expect(errorText(poll, { POLL_MS: "0" })).toContain("POLL_MS must be more than zero")
    for (const bad of ["-5", "fast", "1.5.2", "Infinity", ""]) {
      expect(errorText(poll, { POLL_MS: bad }), bad).toContain("POLL_MS must be a whole number of millis")
    }
  })

  it("base URLs: none when unset, http(s) only", () => {
    expect(load(optionalHttpUrl("BASE"), {})).toEqual(Either.right(Option.none()))
    expect(load(optionalHttpUrl("BASE"), { BASE: "https://mirror.example/fx" })).toEqual(
      Either.right(Option.some("https://mirror.example/fx"))
    )
    for (const bad of ["mirror.example", "ftp://mirror.example", "file:///etc/passwd"]) {
      expect(errorText(optionalHttpUrl("BASE"), { BASE: bad }), bad).toContain("BASE must be an http(s) URL")
    }
  })
})
