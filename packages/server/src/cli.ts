import { Args, Command, Options, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import { lockHolder } from "@scaledger/db/DataDirLock"
import { AccountName } from "@scaledger/domain/Auth"
import { SafeText } from "@scaledger/domain/Basic"
import { Cause, Console, Context, Effect, Layer, Logger, LogLevel, Option } from "effect"
import * as Path from "node:path"
import { readAdminFile } from "./admin/AdminFile.js"
import { ApiKeys, type CreatedKey, type KeyInfo, type RevokedKey } from "./auth/ApiKeys.js"
import { KeyHashSecretLive } from "./auth/KeyHashSecret.js"
import { DataDir } from "./Config.js"
import { describeFailure } from "./StartupFailure.js"

class CliFailure extends Error {}

/** The key operations, either on the database directly or through a running server's admin endpoint. */
class Keys extends Context.Tag("@scaledger/server/cli/Keys")<Keys, {
  readonly create: (account: string) => Effect.Effect<CreatedKey, unknown>
  readonly list: (account: string) => Effect.Effect<Option.Option<ReadonlyArray<KeyInfo>>, unknown>
  readonly revoke: (keyId: string) => Effect.Effect<Option.Option<RevokedKey>, unknown>
}>() {}

const direct = (target: Database.DatabaseTarget) =>
  Layer.effect(Keys, ApiKeys).pipe(
    Layer.provide(ApiKeys.Default),
    Layer.provide(KeyHashSecretLive),
    Layer.provide(AccountsRepo.Default),
    Layer.provide(Database.layerWith(target))
  )

const viaAdmin = (admin: { readonly url: string; readonly token: string }) =>
  Layer.effect(
    Keys,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(HttpClientRequest.prependUrl(admin.url)),
        HttpClient.mapRequest(HttpClientRequest.bearerToken(admin.token))
      )
      const call = <A>(request: HttpClientRequest.HttpClientRequest) =>
        Effect.gen(function*() {
          const response = yield* client.execute(request)
          if (response.status === 404) return Option.none<A>()
          if (response.status >= 300) {
            return yield* Effect.fail(
              new CliFailure(`the running server answered ${response.status}: ${yield* response.text}`)
            )
          }
          return Option.some((yield* response.json) as A)
        }).pipe(Effect.scoped)
      return {
        create: (account) =>
          Effect.flatMap(
            call<CreatedKey>(HttpClientRequest.post("/admin/keys").pipe(HttpClientRequest.bodyUnsafeJson({ account }))),
            Effect.orElseFail(() => new CliFailure("the running server refused to create the key"))
          ),
        list: (account) =>
          call<ReadonlyArray<KeyInfo>>(HttpClientRequest.get("/admin/keys", { urlParams: { account } })),
        revoke: (keyId) => call<RevokedKey>(HttpClientRequest.post(`/admin/keys/${encodeURIComponent(keyId)}/revoke`))
      }
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * PostgreSQL: the database directly. The embedded database: through the running server when one holds it,
 * otherwise opened here (the data folder's lock keeps a server from opening it at the same time).
 */
const KeysLive = Layer.unwrapEffect(Effect.gen(function*() {
  const target = Database.targetOf(yield* Database.DatabaseConfig)
  if (target._tag === "Postgres") return direct(target)
  const dataDir = Path.resolve(yield* DataDir)
  const admin = readAdminFile(dataDir)
  const holder = lockHolder(dataDir)
  if (admin !== undefined && holder !== undefined && admin.pid === holder) return viaAdmin(admin)
  return direct(target)
}))

// Checked here, before any database is opened: the direct path refused nothing (an empty name made an account).
const account = Options.text("account").pipe(
  Options.withSchema(AccountName),
  Options.withDescription("The account's name, 1 to 200 characters (created by `keys create` if new).")
)
const json = Options.boolean("json").pipe(Options.withDescription("Print JSON only, nothing else on stdout."))

const create = Command.make("create", { account, json }, ({ account, json }) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    const key = yield* keys.create(account)
    if (json) return yield* Console.log(JSON.stringify(key))
    yield* Console.log(
      `Account:  ${key.account}\nKey id:   ${key.keyId}\nAPI key:  ${key.key}\n\nThe key is shown only now; store it safely.`
    )
  })).pipe(Command.withDescription("Create an API key (and the account, if new). The key is printed once."))

const list = Command.make("list", { account, json }, ({ account, json }) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    const found = yield* keys.list(account)
    if (Option.isNone(found)) return yield* Effect.fail(new CliFailure(`no account named ${account}`))
    if (json) return yield* Console.log(JSON.stringify(found.value))
    if (found.value.length === 0) return yield* Console.log(`Account ${account} has no keys.`)
    for (const key of found.value) {
      const state = key.revokedAt === null ? "active" : `revoked ${key.revokedAt}`
      yield* Console.log(
        `${key.keyId}  ${key.prefix}…  created ${key.createdAt}  last used ${key.lastUsedAt ?? "never"}  ${state}`
      )
    }
  })).pipe(Command.withDescription("List an account's keys (ids and prefixes; keys themselves are never shown again)."))

// A control character is a usage error here too (the admin endpoint would refuse it with a 400 envelope).
const keyId = Args.text({ name: "keyId" }).pipe(
  Args.withSchema(SafeText),
  Args.withDescription("The key's id (key_…), as `keys list` shows it.")
)

const revoke = Command.make("revoke", { keyId }, ({ keyId }) =>
  Effect.gen(function*() {
    const keys = yield* Keys
    const revoked = yield* keys.revoke(keyId)
    if (Option.isNone(revoked)) return yield* Effect.fail(new CliFailure(`no key ${keyId}`))
    const { account, alreadyRevoked, keyId: id, revokedAt } = revoked.value
    yield* Console.log(
      alreadyRevoked
        ? `${id} of account ${account} was already revoked (at ${revokedAt}); nothing changed.`
        : `Revoked ${id} of account ${account}.`
    )
  })).pipe(Command.withDescription("Revoke one key; requests with it get 401 from now on."))

const keys = Command.make("keys").pipe(
  Command.withDescription("Manage API keys (the Developers page, on the command line)."),
  Command.withSubcommands([create, list, revoke]),
  // Opened only when a key command runs, so `--help` and `--version` touch no database.
  Command.provide(KeysLive)
)

const scaledger = Command.make("scaledger").pipe(Command.withSubcommands([keys]))

const cli = Command.run(scaledger, { name: "scaledger", version: "0.1.0" })

// Logs go to stderr so that stdout carries only the command's answer (`--json` prints one JSON value).
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

cli(process.argv).pipe(
  Effect.catchAllCause((cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.void
      // The CLI library has already printed what was wrong with the command line.
      : Option.exists(Cause.failureOption(cause), ValidationError.isValidationError)
      ? Effect.sync(() => {
        process.exitCode = 2
      })
      : Effect.zipRight(
        Console.error(`scaledger: ${describeFailure(cause)}`),
        Effect.sync(() => {
          process.exitCode = 1
        })
      )
  ),
  Effect.provide(StderrLogger),
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
