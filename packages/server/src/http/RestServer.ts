import { serveWithOwnRouter } from "./OwnRouter.js"
import { RestRoutes } from "./RestApi.js"

/**
 * The REST router served on an `HttpServer`, with a router of its own (never the admin listener's), and the edge's
 * own request log line (with the request id) instead of the framework's.
 */
export const RestServer = serveWithOwnRouter(RestRoutes, { logAddress: true })
