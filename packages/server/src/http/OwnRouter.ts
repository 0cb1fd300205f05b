import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Layer } from "effect"

/**
 * Path parameters of any length reach their route, whose schema answers 400 for one too long (event ids exceed the
 * default 100; Node refuses a request line over 16 KiB with 431 before it gets here). A trailing slash is not
 * ignored: `/v1/wallets/` is not `/v1/wallets` (it would answer a list where one wallet is asked for with an empty
 * address) but a 404.
 */
export const ROUTER_OPTIONS = { maxParamLength: 65_536, ignoreTrailingSlash: false } as const

export const ROUTER_CONFIG = Layer.succeed(HttpLayerRouter.RouterConfig, ROUTER_OPTIONS)

/**
 * `HttpLayerRouter.serve` with a router of its own. `serve` provides the module-level `HttpLayerRouter.layer`, which
 * the layer memo map shares between every `serve` in one layer graph: two listeners would then serve one router,
 * each answering the other's routes. `Layer.fresh` builds a separate router for this listener. No framework request
 * log: the edge middleware logs one line per request, with its request id.
 */
export const serveWithOwnRouter = <A, E, R>(
  appLayer: Layer.Layer<A, E, R>,
  options: { readonly logAddress?: boolean } = {}
): Layer.Layer<
  A,
  HttpLayerRouter.Request.Without<E>,
  HttpServer.HttpServer | Exclude<HttpLayerRouter.Request.Without<R>, HttpLayerRouter.HttpRouter>
> => {
  const served = Effect.map(HttpLayerRouter.HttpRouter, (router) => HttpServer.serve(router.asHttpEffect())).pipe(
    Layer.unwrapEffect,
    Layer.provideMerge(appLayer),
    Layer.provide(Layer.fresh(HttpLayerRouter.layer).pipe(Layer.provide(ROUTER_CONFIG)))
  )
  // The routes' per-request requirements (`Request` markers) are met by the server's request context, as in `serve`.
  return (options.logAddress === true ? HttpServer.withLogAddress(served) : served) as any
}
