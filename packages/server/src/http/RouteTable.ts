import * as HttpApi from "@effect/platform/HttpApi"
import type { HttpMethod } from "@effect/platform/HttpMethod"

/** A method and path pattern (`/v1/wallets/:address`) of a route some router serves. */
export interface RouteSpec {
  readonly method: HttpMethod
  readonly path: string
}

export interface RouteTable {
  /** The methods served at `path` (HEAD where GET is), empty when no route matches the path at all. */
  readonly allowed: (path: string) => ReadonlyArray<string>
}

/** A route's path as a pattern; a parameter may be empty, as the router matches it (`/v1/wallets/`). */
const toRegExp = (pattern: string): RegExp =>
  new RegExp(
    "^" + pattern.split("/").map((segment) =>
      segment.startsWith(":") ? "[^/]*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    ).join("/") + "$"
  )

/** A table of routes, used to answer 405 with `Allow` where a path exists but the method does not. */
export const makeRouteTable = (routes: ReadonlyArray<RouteSpec>): RouteTable => {
  const compiled = routes.map((route) => ({ method: route.method, pattern: toRegExp(route.path) }))
  return {
    allowed: (path) => {
      const methods = new Set<string>()
      for (const route of compiled) {
        if (route.pattern.test(path)) methods.add(route.method)
      }
      if (methods.has("GET")) methods.add("HEAD")
      return [...methods].sort()
    }
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
