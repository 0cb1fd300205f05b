import { Config, ConfigError, Either } from "effect"
import { isIP } from "node:net"

/** The origin an entry names (scheme, host and port, as a browser's `Origin` header has it), if it is one. */
const originOf = (entry: string): string | undefined => {
  try {
    const url = new URL(entry)
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" &&
      url.password === ""
    return bare && (url.protocol === "http:" || url.protocol === "https:") ? url.origin : undefined
  } catch {
    return undefined
  }
}

/**
 * The host name a `Host` header or an entry of `MCP_ALLOWED_HOSTS` names, any port (lower case; an IPv6 address in
 * brackets), if it is one.
 */
const hostNameOf = (entry: string): string | undefined => {
  try {
    const url = new URL(`http://${entry}`)
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" &&
      url.password === ""
    return bare && url.hostname.length > 0 ? url.hostname : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a request's `Host` header names this server, against DNS rebinding (a browser page whose own host name
 * an attacker points at this machine): a `localhost` name, a name of one label, an IP address (a rebinding page's
 * `Host` is always its domain name), the host of `PUBLIC_BASE_URL`, or one listed in `MCP_ALLOWED_HOSTS`. Any port. No header (a
 * non-browser HTTP/1.0 client) is allowed; a header that is no host is not.
 */
export const hostAllowed = (settings: McpSettings, host: string | undefined): boolean => {
  if (host === undefined) return true
  const name = hostNameOf(host)
  if (name === undefined) return false
  // A name of one label (a container's or a machine's name on its network) is never a rebinding page's: that needs a
  // domain the attacker's DNS answers for.
  if (name === "localhost" || name.endsWith(".localhost") || !name.includes(".")) return true
  if (isIP(name.startsWith("[") ? name.slice(1, -1) : name) !== 0) return true
  if (settings.publicBaseUrl !== undefined && new URL(settings.publicBaseUrl).hostname === name) return true
  return settings.allowedHosts?.includes(name) ?? false
}

/** The MCP server's settings, read once by the composition root and handed to its layers. */
export interface McpSettings {
  /** Exact origins a browser-borne request may come from; loopback origins when unset. */
  readonly allowedOrigins: ReadonlyArray<string> | undefined
  /** Host names (lower case) a request's `Host` may name besides those `hostAllowed` takes without a list. */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
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
      Config.mapOrFail((value) => {
        if (value._tag === "None") return Either.right(undefined)
        const entries = value.value.split(",").map((origin) => origin.trim()).filter((origin) => origin.length > 0)
        // Each entry as the origin a browser sends (`https://app.example.com/` is `https://app.example.com`).
        const origins: Array<string> = []
        for (const entry of entries) {
          const origin = originOf(entry)
          if (origin === undefined) {
            return Either.left(
              ConfigError.InvalidData(
                [],
                `MCP_ALLOWED_ORIGINS must list origins such as https://app.example.com, not ${JSON.stringify(entry)}`
              )
            )
          }
          origins.push(origin)
        }
        return Either.right(origins)
      })
    ),
    allowedHosts: Config.option(Config.string("MCP_ALLOWED_HOSTS")).pipe(
      Config.mapOrFail((value) => {
        if (value._tag === "None") return Either.right(undefined)
        const hosts: Array<string> = []
        for (const entry of value.value.split(",").map((host) => host.trim()).filter((host) => host.length > 0)) {
          const host = hostNameOf(entry)
          if (host === undefined) {
            return Either.left(
              ConfigError.InvalidData(
                [],
                `MCP_ALLOWED_HOSTS must list host names such as mcp.example.com, not ${JSON.stringify(entry)}`
              )
            )
          }
          hosts.push(host)
        }
        return Either.right(hosts)
      })
    ),
    chainId: Config.integer("CHAIN_ID").pipe(Config.withDefault(defaultChainId)),
    publicBaseUrl: Config.option(Config.url("PUBLIC_BASE_URL")).pipe(
      Config.map((url) => url._tag === "Some" ? url.value.origin : undefined)
    ),
    restPort: Config.port("PORT").pipe(Config.withDefault(8080))
  })
