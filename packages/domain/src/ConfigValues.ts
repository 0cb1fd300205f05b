import { Config, ConfigError, Duration, Either, Option, Redacted } from "effect"

/**
 * The checks every package's settings share, so that each variable is validated once and a bad value stops the
 * start with a message naming it (`LEDGER_CONCURRENCY must be a positive integer`).
 */

export const positiveInteger = (name: string, fallback: number): Config.Config<number> =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

export const nonNegativeInteger = (name: string, fallback: number): Config.Config<number> =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be zero or more`, validation: (n) => n >= 0 })
  )

type Unit = "millis" | "seconds" | "minutes" | "hours"

const ofUnit = (amount: number, unit: Unit): Duration.Duration => Duration.decode(`${amount} ${unit}`)

/**
 * A duration setting whose variable names its unit (`LEDGER_POLL_MS`, `LEDGER_LEASE_SECONDS`): a whole number in
 * that unit, as it always was, or an Effect duration such as `2 seconds` or `500 millis`. `min` is the smallest
 * value allowed (0 by default; 1 unit for intervals that must not spin).
 */
export const durationSetting = (
  name: string,
  unit: Unit,
  fallback: number,
  options: { readonly positive?: boolean } = {}
): Config.Config<Duration.Duration> =>
  Config.string(name).pipe(
    Config.withDefault(String(fallback)),
    Config.mapOrFail((text) => {
      const trimmed = text.trim()
      const parsed = /^\d+$/.test(trimmed)
        ? Option.some(ofUnit(Number(trimmed), unit))
        : Duration.decodeUnknown(trimmed)
      const bad = (why: string) =>
        Either.left(ConfigError.InvalidData([], `${name} ${why}, got ${JSON.stringify(text)}`))
      if (Option.isNone(parsed) || !Duration.isFinite(parsed.value)) {
        return bad(`must be a whole number of ${unit} or a duration such as "2 seconds"`)
      }
      if (options.positive === true && Duration.toMillis(parsed.value) <= 0) return bad("must be more than zero")
      return Either.right(parsed.value)
    })
  )

/** `SCALEDGER_DATA_DIR`: the data folder (embedded database, generated secrets, admin token), `./data` by default. */
export const DataDir: Config.Config<string> = Config.string("SCALEDGER_DATA_DIR").pipe(Config.withDefault("./data"))

const isHttpUrl = (text: string): boolean => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/** An optional base URL (a mirror, a test server): `http(s)://…` as written, or none when unset. */
export const optionalHttpUrl = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(
    Config.string(name).pipe(
      Config.validate({ message: `${name} must be an http(s) URL`, validation: isHttpUrl })
    )
  )

/** A secret that may be left unset: set but empty (`VAR=` in a shell or compose file) counts as unset, never as "". */
export const optionalSecret = (name: string) =>
  Config.option(Config.redacted(name)).pipe(Config.map(Option.filter((value) => Redacted.value(value).trim() !== "")))
