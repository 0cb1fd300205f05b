import { Effect, Layer, Logger } from "effect"
import { LogConfig } from "./Config.js"

/** Lines held before they are written even within one turn of the event loop. */
const MAX_LINES = 256

const ignore = () => {}

/** As `console.log` does: a write that fails later (standard output closed) is not an uncaught `error` event. */
const onWritten = (error: Error | null | undefined) => {
  if (error != null && process.stdout.listenerCount("error") === 0) process.stdout.once("error", ignore)
}

/**
 * Log lines to standard output, written together once the current turn of the event loop is over (or `MAX_LINES`
 * are waiting), and at once on `flush`. Under load a line per request written through `console.log` cost a
 * formatting pass and a system call each: about an eighth of the service's busy CPU (`npm run bench:api`). A line is
 * never held longer than that turn, so output still follows the work closely; a write that fails (standard output
 * closed) drops its lines, as `console.log` does.
 */
const makeStdoutLines = () => {
  let lines: Array<string> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (lines.length === 0) return
    const text = `${lines.join("\n")}\n`
    lines = []
    const stdout = process.stdout
    stdout.once("error", ignore)
    try {
      stdout.write(text, onWritten)
    } catch {
      // Standard output is gone: nowhere left to write the lines.
    } finally {
      stdout.removeListener("error", ignore)
    }
  }
  const add = (line: string) => {
    lines.push(line)
    if (lines.length >= MAX_LINES) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush).unref()
    }
  }
  return { add, flush }
}

/** `format`'s lines to standard output (`makeStdoutLines`); the lines still waiting are written when the layer ends. */
const stdoutLogger = (format: Logger.Logger<unknown, string>) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const out = makeStdoutLines()
    // An exit that skips the finalizers (`process.exit`) still writes them.
    process.on("exit", out.flush)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        process.removeListener("exit", out.flush)
        out.flush()
      })
    )
    return Logger.replace(Logger.defaultLogger, Logger.map(format, out.add))
  }))

/**
 * The process logger from `LOG_FORMAT` (`logfmt` by default, `json` one object per line, `pretty` for a terminal)
 * and `LOG_LEVEL` (`info` by default). Request lines carry `requestId`; database errors their `sqlstate`.
 */
export const LoggingLive = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* LogConfig
  const logger = config.format === "json"
    ? stdoutLogger(Logger.jsonLogger)
    : config.format === "pretty"
    ? Logger.pretty
    : stdoutLogger(Logger.logfmtLogger)
  return Layer.merge(logger, Logger.minimumLogLevel(config.level))
}))
