import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import { McpConfig } from "@scaledger/mcp/McpConfig"
import { ROBINHOOD_CHAIN_ID } from "@scaledger/workers/chain/ChainConfig"
import { checkContractList } from "@scaledger/workers/classify/ContractListLive"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { WorkersConfig } from "@scaledger/workers/WorkersConfig"
import { layer as WorkersLayer } from "@scaledger/workers/WorkersLive"
import { Cause, Console, Effect, Exit, Layer, Option } from "effect"
import { AdminServerLive } from "./admin/AdminServer.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { KeyHashSecretLive } from "./auth/KeyHashSecret.js"
import { FirstStartKey } from "./Bootstrap.js"
import { HttpConfig, LogConfig } from "./Config.js"
import { beginDrain, makeNodeServer } from "./http/NodeServer.js"
import { RateLimiterLive } from "./http/RateLimit.js"
import { RestServer } from "./http/RestServer.js"
import { LoggingLive } from "./Logging.js"
import { McpServerLive } from "./mcp/McpServerLive.js"
import { describeFailure } from "./StartupFailure.js"
import { TelemetryLive } from "./Telemetry.js"

const PARTS = ["--api", "--mcp", "--workers"]

/** Which parts this process runs: all by default; `--api`, `--mcp`, `--workers` pick some (to scale out). */
const roles = (argv: ReadonlyArray<string>) => {
  const picked = new Set(argv.filter((arg) => PARTS.includes(arg)))
  const all = picked.size === 0
  return { api: all || picked.has("--api"), mcp: all || picked.has("--mcp"), workers: all || picked.has("--workers") }
}

// A Node server that answers parser errors and requests during shutdown in the error envelope.
const restServer = (options: { readonly port: number; readonly host: string; readonly publicOrigin?: string }) =>
  RestServer.pipe(
    Layer.provide(NodeHttpServer.layer(makeNodeServer({ publicOrigin: options.publicOrigin }), options))
  )

const program = Effect.gen(function*() {
  const run = roles(process.argv.slice(2))
  // Configuration is read and checked before anything opens, so a mistake stops the start at once.
  const http = yield* HttpConfig
  yield* LogConfig
  const target = Database.targetOf(yield* Database.DatabaseConfig)
  yield* Effect.logInfo(
    `Scaledger starting on ${Database.describeTarget(target)} (${
      [
        run.api ? "REST API" : undefined,
        run.mcp ? `MCP server on port ${http.mcpPort}` : undefined,
        run.workers ? "workers" : undefined
      ].filter((r) => r !== undefined).join(", ")
    })`
  )
  if (run.workers) yield* checkContractList
  const workers = run.workers ? Option.some(yield* WorkersConfig) : Option.none()
  const mcp = yield* McpConfig(ROBINHOOD_CHAIN_ID)
  const app = Layer.mergeAll(
    run.api
      ? restServer({
        port: http.port,
        host: http.host,
        ...(http.publicBaseUrl._tag === "Some" ? { publicOrigin: http.publicBaseUrl.value.origin } : {})
      })
      : Layer.empty,
    run.mcp ? McpServerLive(mcp, { port: http.mcpPort, host: http.host }) : Layer.empty,
    Option.match(workers, { onNone: () => Layer.empty, onSome: WorkersLayer }),
    // The embedded database is this process's alone: the CLI reaches the keys through a loopback admin endpoint.
    target._tag === "Pglite" ? AdminServerLive : Layer.empty,
    FirstStartKey
  ).pipe(
    // One limiter for REST and MCP: a key's tool calls and REST requests share its budget.
    Layer.provide(RateLimiterLive),
    Layer.provide(ApiKeys.Default),
    Layer.provide(KeyHashSecretLive),
    Layer.provide(WebhookSecretBox.Live),
    Layer.provide(AccountsRepo.Default),
    Layer.provide(Database.layerWith(target))
  )
  return yield* Layer.launch(app)
})

// On SIGTERM/SIGINT new requests are refused at once (503, Connection: close) while in-flight ones finish (within
// DRAIN_DEADLINE_MS).
//
// Ctrl-C on `npm start` signals node twice: the terminal's SIGINT and the copy npm forwards, milliseconds apart.
// `runMain` stops listening at the first signal, and a signal nobody listens to kills Node at once: the copy would
// cut the shutdown short (in-flight requests reset, the database not closed). So this listener stays: a signal
// within REPEAT_SIGNAL_GRACE_MS of the first is that copy and ignored; a later one stops the process at once.
const REPEAT_SIGNAL_GRACE_MS = 2_000
let stoppingSince: number | undefined
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stoppingSince === undefined) {
      stoppingSince = Date.now()
      return beginDrain()
    }
    if (Date.now() - stoppingSince < REPEAT_SIGNAL_GRACE_MS) return
    process.stderr.write(`scaledger: ${signal} again during shutdown: stopping at once\n`)
    process.exit(signal === "SIGINT" ? 130 : 143)
  })
}

// Anything else on the command line (`--port 9090`, a misspelt part) is a usage error, not a start of every part.
const unknownArgs = process.argv.slice(2).filter((arg) => !PARTS.includes(arg))

if (unknownArgs.length > 0) {
  process.stderr.write(
    `scaledger: unknown argument ${JSON.stringify(unknownArgs[0])}: the arguments pick the parts to run (${
      PARTS.join(", ")
    }; none: all of them); settings are environment variables, e.g. PORT=9090\n`
  )
  process.exitCode = 2
} else {
  run()
}

function run() {
  program.pipe(
    Effect.provide(TelemetryLive),
    Effect.provide(LoggingLive),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : Effect.zipRight(
          Console.error(`scaledger: ${describeFailure(cause)}`),
          Effect.sync(() => {
            process.exitCode = 1
          })
        )
    ),
    // A start that failed after the database opened leaves handles behind: exit rather than wait on them.
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) =>
        onExit((Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) || process.exitCode === 1 ? 1 : 0)
    })
  )
}
