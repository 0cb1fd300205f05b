import { optionalSecret } from "@scaledger/domain/ConfigValues"
import { ROBINHOOD_CHAIN_ID } from "@scaledger/workers/chain/ChainConfig"
import { Config, LogLevel } from "effect"

/** Settings of the HTTP side. Database settings live with the database (`@scaledger/db` DatabaseConfig). */
export const HttpConfig = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  mcpPort: Config.port("MCP_PORT").pipe(Config.withDefault(8081)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  /** Origin that error `docUrl`s point at; the listener's own address when unset (never the request's Host). */
  publicBaseUrl: Config.option(Config.url("PUBLIC_BASE_URL")),
  /** Behind a reverse proxy: believe `X-Forwarded-Proto` / `X-Forwarded-Host` for `docUrl`s. Off by default. */
  trustProxy: Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false))
})

/** Requests per minute per API key (0 turns the limit off), and the burst allowed above the steady rate. */
export const RateLimitConfig = Config.all({
  perMinute: Config.integer("RATE_LIMIT_PER_MINUTE").pipe(
    Config.withDefault(600),
    Config.validate({ message: "RATE_LIMIT_PER_MINUTE must be zero or more", validation: (n) => n >= 0 })
  )
})

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None,
  off: LogLevel.None
}

/** `LOG_LEVEL` (trace, debug, info, warning, error, fatal, none; any case) and `LOG_FORMAT` (json, logfmt, pretty). */
export const LogConfig = Config.all({
  level: Config.string("LOG_LEVEL").pipe(
    Config.withDefault("info"),
    Config.validate({
      message: `LOG_LEVEL must be one of ${Object.keys(logLevels).join(", ")}`,
      validation: (name) => logLevels[name.toLowerCase()] !== undefined
    }),
    Config.map((name) => logLevels[name.toLowerCase()]!)
  ),
  format: Config.literal("json", "logfmt", "pretty")("LOG_FORMAT").pipe(Config.withDefault("logfmt" as const))
})

export { DataDir } from "@scaledger/domain/ConfigValues"

export const KeyHashSecretConfig = optionalSecret("KEY_HASH_SECRET")

/** The chain whose record the REST side reads (the workers' `CHAIN_ID`). */
export const ChainId = Config.integer("CHAIN_ID").pipe(Config.withDefault(ROBINHOOD_CHAIN_ID))
