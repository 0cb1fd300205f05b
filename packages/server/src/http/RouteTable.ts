import * as HttpApi from "@effect/platform/HttpApi"
import type { HttpMethod } from "@effect/platform/HttpMethod"

/** A method and path pattern (`/v1/wallets/:address`) of a route some router serves. */
export interface RouteSpec {
  readonly method: HttpMethod
  readonly path: string
}

export interface RouteTable {
  /**
   * The methods served at `path` (HEAD where GET is), empty when no route matches the path at all. A parameter is
   * never empty here.
   */
  readonly allowed: (path: string) => ReadonlyArray<string>
  /**
   * The router would take `path` only with a parameter left empty (`/v1/wallets/`, `/v1/fx/SGD/`): such a path names
   * no resource and is answered 404 before any handler reads the empty parameter.
   */
  readonly onlyWithEmptyParameter: (path: string) => boolean
  /**
   * A path a route without parameters names (`/v1/webhooks/deliveries`, in any spelling the router takes), asked
   * with a method only a parameter route has (`PATCH /v1/webhooks/:id`): the methods the path allows, else
   * undefined. The router would take it as that route's id, but the path is the static resource.
   */
  readonly shadowedMethod: (path: string, method: string) => ReadonlyArray<string> | undefined
}

/** A route's path as a pattern; a parameter matches `[^/]+`, or with `emptyParameters` `[^/]*` as the router does. */
const toRegExp = (pattern: string, emptyParameters: boolean): RegExp =>
  new RegExp(
    "^" + pattern.split("/").map((segment) =>
      segment.startsWith(":")
        ? emptyParameters ? "[^/]*" : "[^/]+"
        : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    ).join("/") + "$"
  )

/**
 * A path as the router reads it: percent-escapes decoded, repeated slashes as one, any letter case (`/V1//webhooks/
 * %64eliveries` is the deliveries list).
 */
const spelling = (path: string): string => {
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // A malformed escape: the path as sent.
  }
  return decoded.replace(/\/{2,}/g, "/").toLowerCase()
}

/** A table of routes, used to answer 405 with `Allow` where a path exists but the method does not. */
export const makeRouteTable = (routes: ReadonlyArray<RouteSpec>): RouteTable => {
  const compiled = routes.map((route) => ({
    path: route.path,
    method: route.method,
    isStatic: !route.path.split("/").some((segment) => segment.startsWith(":")),
    pattern: toRegExp(route.path, false),
    lenient: toRegExp(route.path, true)
  }))
  /** A path a static route names is that route's resource: only static routes' methods are served there. */
  const matching = (path: string) => {
    const matched = compiled.filter((route) => route.pattern.test(path))
    return matched.some((route) => route.isStatic) ? matched.filter((route) => route.isStatic) : matched
  }
  const allowed = (path: string) => {
    const methods = new Set<string>(matching(path).map((route) => route.method))
    if (methods.has("GET")) methods.add("HEAD")
    return [...methods].sort()
  }
  /** The methods of each path a static route names (a static route's pattern matches its own path only). */
  const staticMethods = new Map<string, ReadonlyArray<string>>()
  for (const route of compiled) {
    if (route.isStatic) staticMethods.set(spelling(route.path), allowed(route.path))
  }
  return {
    allowed,
    shadowedMethod: (path, method) => {
      const methods = staticMethods.get(spelling(path))
      return methods !== undefined && !methods.includes(method) ? methods : undefined
    },
    onlyWithEmptyParameter: (path) =>
      compiled.some((route) => route.lenient.test(path)) && !compiled.some((route) => route.pattern.test(path))
  }
}

/** Every endpoint of an `HttpApi`, prefix included, so groups added later are covered without listing them. */
export const routesOfApi = (api: HttpApi.HttpApi.Any): ReadonlyArray<RouteSpec> => {
  const routes: Array<RouteSpec> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({ method: endpoint.method, path: endpoint.path })
    }
  })
  return routes
}
