import { Effect, Layer, Logger } from "effect"
import { LogConfig } from "./Config.js"

/**
 * The process logger from `LOG_FORMAT` (`logfmt` by default, `json` one object per line, `pretty` for a terminal)
 * and `LOG_LEVEL` (`info` by default). Request lines carry `requestId`; database errors their `sqlstate`.
 */
export const LoggingLive = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* LogConfig
  const logger = config.format === "json" ? Logger.json : config.format === "pretty" ? Logger.pretty : Logger.logFmt
  return Layer.merge(logger, Logger.minimumLogLevel(config.level))
}))
