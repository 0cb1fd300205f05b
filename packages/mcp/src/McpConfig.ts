import { Config } from "effect"

/** The MCP server's settings, read once by the composition root and handed to its layers. */
export interface McpSettings {
  /** Exact origins a browser-borne request may come from; loopback origins when unset. */
  readonly allowedOrigins: ReadonlyArray<string> | undefined
  /** The chain whose record the tools read (the workers' `CHAIN_ID`). */
  readonly chainId: number
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
    chainId: Config.integer("CHAIN_ID").pipe(Config.withDefault(defaultChainId))
  })
