import { HttpLayerRouter } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { AccountsRepo, Database } from "@scaledger/db"
import { WebhookSecretBox } from "@scaledger/workers/webhooks/SecretBox"
import { WorkersLive } from "@scaledger/workers/WorkersLive"
import { Cause, Console, Effect, Layer, Logger, LogLevel } from "effect"
import { createServer } from "node:http"
import { AdminServerLive } from "./admin/AdminServer.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { KeyHashSecretLive } from "./auth/KeyHashSecret.js"
import { FirstStartKey } from "./Bootstrap.js"
import { HttpConfig } from "./Config.js"
import { RestRoutes } from "./http/RestApi.js"
import { describeFailure } from "./StartupFailure.js"

/** Which parts this process runs: all by default; `--api`, `--mcp`, `--workers` pick some (to scale out). */
const roles = (argv: ReadonlyArray<string>) => {
  const picked = new Set(argv.filter((arg) => ["--api", "--mcp", "--workers"].includes(arg)))
  const all = picked.size === 0
  return { api: all || picked.has("--api"), mcp: all || picked.has("--mcp"), workers: all || picked.has("--workers") }
}

const restServer = (options: { readonly port: number; readonly host: string }) =>
  HttpLayerRouter.serve(RestRoutes).pipe(Layer.provide(NodeHttpServer.layer(createServer, options)))

const program = Effect.gen(function*() {
  const run = roles(process.argv.slice(2))
  // Configuration is read and checked before anything opens, so a mistake stops the start at once.
  const http = yield* HttpConfig
  const target = Database.targetOf(yield* Database.DatabaseConfig)
  yield* Effect.logInfo(
    `Scaledger starting on ${Database.describeTarget(target)} (${
      [run.api ? "REST API" : undefined, run.workers ? "workers" : undefined].filter((r) => r !== undefined).join(", ")
    })`
  )
  if (run.mcp && process.argv.includes("--mcp")) {
    yield* Effect.logWarning("The MCP server is not part of this build yet: --mcp serves nothing.")
  }
  const app = Layer.mergeAll(
    run.api ? restServer({ port: http.port, host: http.host }) : Layer.empty,
    run.workers ? WorkersLive : Layer.empty,
    // The embedded database is this process's alone: the CLI reaches the keys through a loopback admin endpoint.
    target._tag === "Pglite" ? AdminServerLive : Layer.empty,
    FirstStartKey
  ).pipe(
    Layer.provide(ApiKeys.Default),
    Layer.provide(KeyHashSecretLive),
    Layer.provide(WebhookSecretBox.Live),
    Layer.provide(AccountsRepo.Default),
    Layer.provide(Database.layerWith(target))
  )
  return yield* Layer.launch(app)
})

program.pipe(
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
  Logger.withMinimumLogLevel(LogLevel.Info),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
