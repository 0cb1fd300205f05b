import { type EndpointRow, WebhooksRepo } from "@scaledger/db/alerts/Webhooks"
import { newId } from "@scaledger/db/Ids"
import { retryOnConflict } from "@scaledger/db/SqlErrors"
import { ALERT_KINDS, isAlertKind } from "@scaledger/domain/alerts/Alert"
import { InvalidWebhookUrl, NotFound, UnknownAlertKind } from "@scaledger/domain/Errors"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Effect, Option } from "effect"
import { checkTarget } from "./EgressGuard.js"
import { newWebhookSecret, WebhookSecretBox } from "./SecretBox.js"
import { WebhookConfigFromEnv } from "./WebhookConfig.js"

export const endpointView = (row: EndpointRow) => ({
  id: row.id,
  url: row.url,
  description: row.description,
  kinds: [...row.kinds],
  enabled: row.enabled,
  consecutiveFailures: row.consecutiveFailures,
  createdAt: row.createdAt.toISOString()
})

/** How many unknown kinds an error names. */
const UNKNOWN_SHOWN = 10

const validKinds = (kinds: ReadonlyArray<string> | undefined) => {
  if (kinds === undefined) return Effect.succeed(undefined)
  // Each told once, the first few: the answer stays small whatever the request held.
  const unknown = [...new Set(kinds.filter((kind) => !isAlertKind(kind)))]
  const shown = unknown.slice(0, UNKNOWN_SHOWN).map((kind) => (kind.length <= 64 ? kind : `${kind.slice(0, 64)}…`))
  const more = unknown.length > UNKNOWN_SHOWN ? ` and ${unknown.length - UNKNOWN_SHOWN} more` : ""
  return unknown.length > 0
    ? Effect.fail(
      new UnknownAlertKind({
        message: `Unknown alert kind${unknown.length > 1 ? "s" : ""}: ${
          shown.join(", ")
        }${more}. Nothing was subscribed.`,
        details: { unknown: shown, supported: ALERT_KINDS }
      })
    )
    : Effect.succeed([...new Set(kinds)])
}

/** The webhook endpoints of an account, as the REST API (and later MCP) presents them. */
export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()("@scaledger/workers/WebhookEndpoints", {
  effect: Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const box = yield* WebhookSecretBox
    const { allowPrivateTargets } = yield* WebhookConfigFromEnv

    /** The egress guard at creation and change: an unresolvable name is let through (checked at each delivery). */
    const validUrl = (url: string) =>
      checkTarget(url, { allowPrivate: allowPrivateTargets, requireResolution: false }).pipe(
        Effect.mapError((refused) =>
          new InvalidWebhookUrl({
            message: refused.message,
            details: {
              reason: refused.reason,
              ...(refused.address === undefined ? {} : { address: refused.address }),
              ...(refused.range === undefined ? {} : { range: refused.range })
            }
          })
        ),
        Effect.as(url)
      )

    const notFound = (id: string) => new NotFound({ message: `No webhook endpoint ${shownValue(id)}.` })

    const create = (accountId: string, input: {
      readonly url: string
      readonly description?: string | undefined
      readonly kinds?: ReadonlyArray<string> | undefined
    }) =>
      Effect.gen(function*() {
        // Kinds first: an unknown kind subscribes nothing, whatever the URL.
        const kinds = (yield* validKinds(input.kinds)) ?? []
        const url = yield* validUrl(input.url)
        const secret = newWebhookSecret()
        const row = yield* repo.create({
          id: newId("we"),
          accountId,
          url,
          description: input.description ?? "",
          kinds,
          secretEnc: box.seal(secret)
        })
        return { ...endpointView(row), secret }
      })

    const list = (accountId: string, page: { readonly afterSeq: string | undefined; readonly limit: number }) =>
      Effect.map(repo.list(accountId, page), (result) => ({
        webhooks: result.webhooks.map(endpointView),
        last: result.webhooks[result.webhooks.length - 1]?.seq,
        hasMore: result.hasMore
      }))

    const update = (accountId: string, id: string, patch: {
      readonly url?: string | undefined
      readonly description?: string | undefined
      readonly kinds?: ReadonlyArray<string> | undefined
      readonly enabled?: boolean | undefined
    }) =>
      Effect.gen(function*() {
        // An endpoint that is not there is not found, whatever the change asked of it.
        if (Option.isNone(yield* repo.find(accountId, id))) return yield* notFound(id)
        const kinds = yield* validKinds(patch.kinds)
        if (patch.url !== undefined) yield* validUrl(patch.url)
        const row = yield* retryOnConflict(repo.update(accountId, id, { ...patch, kinds }))
        if (Option.isNone(row)) return yield* notFound(id)
        return endpointView(row.value)
      })

    const remove = (accountId: string, id: string) =>
      Effect.flatMap(
        retryOnConflict(repo.remove(accountId, id)),
        (removed) => removed ? Effect.void : Effect.fail(notFound(id))
      )

    const deliveries = (accountId: string) =>
      Effect.map(repo.attempts(accountId, 50), (rows) => ({
        deliveries: rows.map((row) => ({
          id: row.id,
          endpointId: row.endpointId,
          eventId: row.eventId,
          kind: row.kind,
          attempt: row.attempt,
          outcome: row.outcome,
          status: row.status,
          error: row.error,
          durationMs: row.durationMs,
          at: row.at.toISOString()
        }))
      }))

    return { create, list, update, remove, deliveries } as const
  }),
  dependencies: [WebhooksRepo.Default]
}) {}
