import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** How a stored classification explains itself on an event (`classification { by, rule, model, ... }`). */
/** What a person wrote of a counterparty in review. */
export interface CounterpartyLabel {
  readonly label: string | null
  readonly note: string | null
}

export interface ClassificationDetail {
  readonly rule: string | null
  readonly model: string | null
  readonly confidence: number | null
  readonly rationale: string | null
  readonly classifiedBy: string | null
}

/** The stored classifications of events, by event id (`<txHash>:<logIndex>`). */
export class EventClassifications extends Effect.Service<EventClassifications>()(
  "@scaledger/db/classification/EventClassifications",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const details = (accountId: string, eventIds: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const keys = eventIds.flatMap((id) => {
            const [hash, log] = id.split(":")
            return hash !== undefined && /^\d+$/.test(log ?? "") && id.startsWith("0x") ? [`${hash}:${log}`] : []
          })
          if (keys.length === 0) return new Map<string, ClassificationDetail>()
          const rows = yield* sql<{
            tx_hash: string
            log_index: number
            rule: string | null
            model: string | null
            confidence: number | null
            rationale: string | null
            classified_by: string | null
          }>`
            SELECT tx_hash, log_index, rule, model, confidence, rationale, classified_by
            FROM transfer_classifications
            WHERE account_id = ${accountId} AND status = 'done'
              AND tx_hash IN ${sql.in([...new Set(keys.map((key) => key.split(":")[0]!))])}`
          const wanted = new Set(keys)
          return new Map(
            rows.filter((row) => wanted.has(`${row.tx_hash}:${row.log_index}`)).map((
              row
            ) => [`${row.tx_hash}:${row.log_index}`, {
              rule: row.rule,
              model: row.model,
              confidence: row.confidence === null ? null : Number(row.confidence),
              rationale: row.rationale,
              classifiedBy: row.classified_by
            }])
          )
        })
      /** The label and note the account gave each of `addresses` in review (`PATCH /v1/events`), by lowercase address. */
      const counterpartyLabels = (accountId: string, addresses: ReadonlyArray<string>) =>
        addresses.length === 0
          ? Effect.succeed(new Map<string, CounterpartyLabel>())
          : Effect.map(
            sql<{ address_key: string; label: string | null; note: string | null }>`
              SELECT address_key, label, note FROM counterparty_labels
              WHERE account_id = ${accountId} AND address_key IN ${
              sql.in([...new Set(addresses.map((a) => a.toLowerCase()))])
            } AND (label IS NOT NULL OR note IS NOT NULL)`,
            (rows) => new Map(rows.map((row) => [row.address_key, { label: row.label, note: row.note }]))
          )
      return { details, counterpartyLabels } as const
    })
  }
) {}
