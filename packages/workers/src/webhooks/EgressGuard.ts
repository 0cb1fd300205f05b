import { hasLoneSurrogate } from "@scaledger/domain/Basic"
import { Data, Effect } from "effect"
import ipaddr from "ipaddr.js"
import { promises as Dns } from "node:dns"
import * as Net from "node:net"

/** Why a webhook target is refused. */
export type TargetRefusal =
  | "malformed"
  | "not_https"
  | "credentials"
  | "forbidden_address"
  | "unresolvable"

export class TargetRefused extends Data.TaggedError("TargetRefused")<{
  readonly reason: TargetRefusal
  readonly message: string
  /** The refused address, for `forbidden_address`. */
  readonly address?: string
  /** Its range as the address library names it (`loopback`, `private`, `carrierGradeNat`, …). */
  readonly range?: string
}> {}

/** A checked target: the URL and the addresses a delivery may connect to, every one of them checked. */
export interface CheckedTarget {
  readonly url: URL
  /** The host name without IPv6 brackets. */
  readonly hostname: string
  /** The first address, tried first. */
  readonly address: string
  readonly family: 4 | 6
  /**
   * Every address the name resolved to, in the resolver's order (`address` first): when one does not answer, the
   * connection tries the next, as any client does. Absent: `address` only.
   */
  readonly addresses?: ReadonlyArray<{ readonly address: string; readonly family: 4 | 6 }>
}

const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR("::/96")

/**
 * The range of an IP address as `ipaddr.js` classifies it, with IPv4-mapped IPv6 (`::ffff:a.b.c.d`) judged as the
 * IPv4 address it carries. Only `unicast` (a public address) is allowed.
 */
export const addressRange = (address: string): string => {
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address()
    // Deprecated IPv4-compatible addresses (::a.b.c.d, ::1 aside): never a public webhook target.
    else if (v6.range() === "unicast" && v6.match(IPV4_COMPATIBLE)) return "ipv4Compatible"
  }
  return parsed.range()
}

export const isPublicAddress = (address: string): boolean => {
  try {
    return addressRange(address) === "unicast"
  } catch {
    return false
  }
}

const refuse = (reason: TargetRefusal, message: string, extra: { address?: string; range?: string } = {}) =>
  new TargetRefused({ reason, message, ...extra })

// eslint-disable-next-line no-control-regex
const SPACE_OR_CONTROL = /[\u0000-\u0020\u007f-\u009f]/

/** `https://` (any letter case) and the first character of a host: what the OpenAPI document's pattern admits. */
const WRITTEN_HTTPS_HOST = /^https:\/\/[^/?#]/i

/** A host name with an empty label (`...`, `a..b`, `.a`): no DNS name. A last dot (`example.com.`) is allowed. */
const emptyLabel = (hostname: string): boolean =>
  !hostname.startsWith("[") && hostname.replace(/\.$/, "").split(".").some((label) => label === "")

/**
 * Parses and checks the parts of a webhook URL that need no DNS: https, no credentials, a host. A space or a control
 * character is refused as written (a URL parser would drop tabs and line breaks, and the URL is stored as given).
 */
export const parseTargetUrl = (input: string): Effect.Effect<URL, TargetRefused> =>
  Effect.suspend(() => {
    if (SPACE_OR_CONTROL.test(input)) {
      return Effect.fail(
        refuse("malformed", "The URL holds a space or a control character; percent-encode them (RFC 3986).")
      )
    }
    // Stored, a lone UTF-16 surrogate would become U+FFFD: the endpoint would call another URL than the one sent.
    if (hasLoneSurrogate(input)) {
      return Effect.fail(refuse("malformed", "The URL holds a lone UTF-16 surrogate, which is not Unicode text."))
    }
    let url: URL
    try {
      url = new URL(input)
    } catch {
      return Effect.fail(refuse("malformed", "The URL does not parse."))
    }
    if (url.protocol !== "https:") return Effect.fail(refuse("not_https", "Webhook URLs must use https."))
    // The parser mends `https:host`, `https:/host`, `https:///host` and backslashes into `https://host`; the URL is
    // stored as given, so it must be written as the document's pattern says: the host right after `https://`.
    if (!WRITTEN_HTTPS_HOST.test(input)) {
      return Effect.fail(refuse("malformed", "Write the URL as https://<host>…: the host right after the two slashes."))
    }
    if (url.username !== "" || url.password !== "") {
      return Effect.fail(refuse("credentials", "Webhook URLs must not carry credentials."))
    }
    if (url.hostname === "") return Effect.fail(refuse("malformed", "The URL has no host."))
    if (emptyLabel(url.hostname)) return Effect.fail(refuse("malformed", "The URL's host has an empty label."))
    // Nothing listens on port 0: a delivery to it could only fail.
    if (url.port === "0") return Effect.fail(refuse("malformed", "The URL's port 0 is not a port a server listens on."))
    return Effect.succeed(url)
  })

const bare = (hostname: string) => hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname

const checkAddress = (address: string, allowPrivate: boolean) =>
  Effect.suspend(() => {
    if (allowPrivate || isPublicAddress(address)) return Effect.void
    let range = "invalid"
    try {
      range = addressRange(address)
    } catch {
      // unparsable: refused as invalid
    }
    return Effect.fail(
      refuse("forbidden_address", `The target address ${address} is not a public address (${range}).`, {
        address,
        range
      })
    )
  })

export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>

const systemResolver: Resolver = (hostname) => Dns.lookup(hostname, { all: true, verbatim: true })

export interface GuardOptions {
  /** `WEBHOOK_ALLOW_PRIVATE_TARGETS`: skip the address check (https and no credentials still hold). */
  readonly allowPrivate: boolean
  /** At creation an unresolvable name is accepted (checked again at every delivery); at delivery it fails. */
  readonly requireResolution: boolean
  readonly resolve?: Resolver
  /**
   * How long the name's resolution may take (default `RESOLVE_TIMEOUT_MS`): past it the name counts as not resolving.
   * The connection's own time-outs start after it, so a resolver that never answers would hold an attempt (and its
   * lease) or an endpoint's creation without end.
   */
  readonly resolveTimeoutMs?: number
}

/** The default limit of a name's resolution. */
export const RESOLVE_TIMEOUT_MS = 5_000

/**
 * The egress guard: an `https` URL without credentials whose host is a public address. An IP literal (in any
 * spelling the URL parser accepts: decimal, octal, hex and short IPv4 forms, bracketed IPv6, IPv4-mapped IPv6) is
 * checked as is; a name is resolved once and every address it resolves to must be public. The answer names the one
 * address to connect to, so the connection goes to the address that was checked.
 */
export const checkTarget = (
  input: string,
  options: GuardOptions
): Effect.Effect<CheckedTarget | undefined, TargetRefused> =>
  Effect.gen(function*() {
    const url = yield* parseTargetUrl(input)
    const hostname = bare(url.hostname)
    const literal = Net.isIP(hostname)
    if (literal !== 0) {
      yield* checkAddress(hostname, options.allowPrivate)
      return { url, hostname, address: hostname, family: literal as 4 | 6 }
    }
    const resolve = options.resolve ?? systemResolver
    // A fully qualified name (`localhost.`) is the same name: resolved without its root dot, which some resolvers
    // refuse, so that it is checked like the name itself rather than accepted as unresolvable.
    const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname
    // RFC 6761: `localhost` and every name under it are loopback, whatever a resolver says (one may not know them).
    if (!options.allowPrivate && (name === "localhost" || name.endsWith(".localhost"))) {
      return yield* refuse("forbidden_address", `The host ${hostname} is a loopback name (RFC 6761).`, {
        range: "loopback"
      })
    }
    const limitMs = options.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS
    const answers = yield* Effect.tryPromise(() => resolve(name)).pipe(
      Effect.timeout(limitMs),
      Effect.map((found): ReadonlyArray<{ address: string; family: number }> | "timeout" => found),
      Effect.catchTag("TimeoutException", () => Effect.succeed("timeout" as const)),
      Effect.orElseSucceed(() => [] as ReadonlyArray<{ address: string; family: number }>)
    )
    if (answers === "timeout" || answers.length === 0) {
      if (!options.requireResolution) return undefined
      return yield* refuse(
        "unresolvable",
        answers === "timeout"
          ? `The host ${hostname} did not resolve within ${limitMs} ms.`
          : `The host ${hostname} does not resolve.`
      )
    }
    for (const answer of answers) yield* checkAddress(answer.address, options.allowPrivate)
    const addresses = answers.map((
      answer
    ) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 } as const))
    const first = addresses[0]!
    return { url, hostname, address: first.address, family: first.family, addresses }
  })
