import { HttpApiScalar, HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { ErrorCatalog } from "@scaledger/domain/Errors"
import { Effect, Layer } from "effect"

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

/** `/docs` (the API reference, assets served by the service itself) and `/docs/errors` (one anchor per error code). */
export const DocsRoutes = Layer.mergeAll(
  HttpApiScalar.layerHttpLayerRouter({ api: ScaledgerApi, path: "/docs" }),
  HttpLayerRouter.add("GET", "/docs/errors", Effect.succeed(HttpServerResponse.html(errorsPage())))
)
