import { Config } from "effect"

/** The MCP server's settings, read once by the composition root and handed to its layers. */
export interface McpSettings {
  /** Exact origins a browser-borne request may come from; loopback origins when unset. */
  readonly allowedOrigins: ReadonlyArray<string> | undefined
  /** The chain whose record the tools read (the workers' `CHAIN_ID`). */
  readonly chainId: number
  /**
   * Where error `docUrl`s point (`/docs/errors` is served by the REST listener, not this one): `PUBLIC_BASE_URL`'s
   * origin when set; else the REST port (`PORT`) on the address the client reached this listener on; else (tests) this
   * listener's own address.
   */
  readonly publicBaseUrl?: string | undefined
  readonly restPort?: number | undefined
}

export const McpConfig = (defaultChainId: number): Config.Config<McpSettings> =>
  Config.all({
    allowedOrigins: Config.option(Config.string("MCP_ALLOWED_ORIGINS")).pipe(
      Config.map((value) =>
        value._tag === "None"
          ? undefined
          : value.value.split(",").map((origin) => origin.trim()).filter((origin) => origin.length > 0)
      )
    ),
    chainId: Config.integer("CHAIN_ID").pipe(Config.withDefault(defaultChainId)),
    publicBaseUrl: Config.option(Config.url("PUBLIC_BASE_URL")).pipe(
      Config.map((url) => url._tag === "Some" ? url.value.origin : undefined)
    ),
    restPort: Config.port("PORT").pipe(Config.withDefault(8080))
  })
