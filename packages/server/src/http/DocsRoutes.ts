import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { ErrorCatalog } from "@scaledger/domain/Errors"
import { Effect, Layer, Scope } from "effect"

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const inlineCode = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>")

const errorsPage = (): string => {
  const sections = Object.entries(ErrorCatalog).map(([code, entry]) => `
  <section id="${code}">
    <h2><a href="#${code}">${code}</a> <small>HTTP ${entry.status}</small></h2>
    <p><strong>${escapeHtml(entry.title)}.</strong> ${inlineCode(entry.description)}</p>
  </section>`).join("")
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Scaledger API errors</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
code{background:#f3f3f3;padding:0 .2em}small{color:#666;font-weight:normal}section{border-top:1px solid #ddd}</style>
</head><body>
<h1>Scaledger API errors</h1>
<p>Every failure answers with a matching HTTP status and the body
<code>{ "error": { "code", "message", "docUrl", "requestId", "details"? } }</code>. <code>docUrl</code> links to the
code's section below; <code>requestId</code> equals the response's <code>Request-Id</code> header.</p>
${sections}
</body></html>`
}

/**
 * `/docs`: Scalar's API reference page, its script served by the service itself. The module holds that script as a
 * 3.4 MB string and the page repeats it, so it is imported on the first request, not at start (about 15 MB of heap
 * that a service nobody reads the reference of does not keep). The page is then served by a router of its own, built
 * once with a memo map of its own: with the enclosing build's (which request fibers inherit), `HttpLayerRouter.layer`
 * would be the memoized outer router, where `GET /docs` is already taken.
 */
const ScalarRoute = Layer.scopedDiscard(Effect.gen(function*() {
  const router = yield* HttpLayerRouter.HttpRouter
  const scope = yield* Effect.scope
  const page = yield* Effect.cached(
    Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
      Effect.flatMap((Scalar) =>
        HttpLayerRouter.toHttpEffect(Scalar.layerHttpLayerRouter({ api: ScaledgerApi, path: "/docs" }))
      ),
      Effect.provideServiceEffect(Layer.CurrentMemoMap, Layer.makeMemoMap),
      Scope.extend(scope)
    )
  )
  yield* router.add("GET", "/docs", Effect.flatten(page))
}))

/** `/docs` (the API reference, assets served by the service itself) and `/docs/errors` (one anchor per error code). */
export const DocsRoutes = Layer.mergeAll(
  ScalarRoute,
  HttpLayerRouter.add("GET", "/docs/errors", Effect.succeed(HttpServerResponse.html(errorsPage())))
)
