import { ROBINHOOD_CHAIN_ID } from "@scaledger/workers/chain/ChainConfig"
import { Config } from "effect"

/** Settings of the HTTP side. Database settings live with the database (`@scaledger/db` DatabaseConfig). */
export const HttpConfig = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  mcpPort: Config.port("MCP_PORT").pipe(Config.withDefault(8081)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  /** Origin that error `docUrl`s point at; derived from the request's Host header when unset. */
  publicBaseUrl: Config.option(Config.url("PUBLIC_BASE_URL"))
})

export const DataDir = Config.string("SCALEDGER_DATA_DIR").pipe(Config.withDefault("./data"))

export const KeyHashSecretConfig = Config.option(Config.redacted("KEY_HASH_SECRET"))

/** The chain whose record the REST side reads (the workers' `CHAIN_ID`). */
export const ChainId = Config.integer("CHAIN_ID").pipe(Config.withDefault(ROBINHOOD_CHAIN_ID))
