import { SqlClient } from "@effect/sql"
import { invalidCursor, SealedCursors } from "@scaledger/domain/PageCursors"
import type { UnlabeledCounterparties } from "@scaledger/domain/ReviewApi"
import { Effect } from "effect"
import type { BuildState } from "../ledger/LedgerStore.js"
import { checkSettled } from "./SettledBuild.js"

/** A page of the list: `limit` (default 50) after the entry `cursor` names (a cursor this list gave the account). */
export interface CounterpartyPage {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const DEFAULT_LIMIT = 50
const KIND = "counterparties"

/** Where a page ends: its last entry's sort key, `<movements>:<lowercase address>`, sealed in the cursor. */
interface After {
  readonly movements: number
  readonly addressKey: string
}

const positionOf = (after: After) => `${after.movements}:${after.addressKey}`

const afterOf = (position: string) => {
  const parsed = /^([1-9]\d{0,14}):(.+)$/s.exec(position)
  return parsed === null
    ? Effect.fail(invalidCursor("position out of range"))
    : Effect.succeed<After>({ movements: Number(parsed[1]), addressKey: parsed[2]! })
}

/**
 * The addresses of unknown relationship that keep the account's movements in review, and how many each keeps:
 * what `GET /v1/counterparties/unlabeled` and the MCP tool `get_unlabeled_counterparties` answer. Pages follow the
 * last entry's sort key, so entries labelled or added before the cursor do not shift the next page (DECISIONS.md).
 */
export class CounterpartyReads extends Effect.Service<CounterpartyReads>()("@scaledger/db/reads/CounterpartyReads", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cursors = yield* SealedCursors

    const unlabeled = (accountId: string, page: CounterpartyPage = {}) =>
      Effect.gen(function*() {
        const position = yield* cursors.open(accountId, KIND, page.cursor)
        const after = position === undefined ? undefined : yield* afterOf(position)
        const limit = page.limit ?? DEFAULT_LIMIT
        // The rule of every read of the stored build: 409 while a replay runs, 503 when the build failed (its pages
        // are then an older build's, which the other reads no longer serve).
        const [build] = yield* sql<{
          requested_version: string
          replay_version: string
          built_version: string
          status: BuildState["status"]
          error: string | null
        }>`
          SELECT requested_version, replay_version, built_version, status, error
          FROM ledger_builds WHERE account_id = ${accountId}`
        if (build !== undefined) {
          yield* checkSettled({
            requestedVersion: Number(build.requested_version),
            replayVersion: Number(build.replay_version),
            builtVersion: Number(build.built_version),
            builtAt: null,
            status: build.status,
            error: build.error
          })
        }
        const found = yield* sql<{
          address_key: string
          address: string
          movements: string
          tokens: Array<string>
          first_seen: string
          last_seen: string
        }>`
          SELECT lower(r->>4) AS address_key, max(r->>4) AS address,
            count(*) AS movements, array_agg(DISTINCT r->>2 ORDER BY r->>2) AS tokens,
            min(r->>3) AS first_seen, max(r->>3) AS last_seen
          FROM ledger_event_pages p, json_array_elements(p.review) r
          WHERE p.account_id = ${accountId} AND p.review_count > 0 AND r->>4 IS NOT NULL
          GROUP BY lower(r->>4)
          ${
          after === undefined ? sql`` : sql`HAVING count(*) < ${after.movements}
            OR (count(*) = ${after.movements} AND lower(r->>4) > ${after.addressKey})`
        }
          ORDER BY count(*) DESC, lower(r->>4)
          LIMIT ${limit + 1}`
        const more = found.length > limit
        const rows = more ? found.slice(0, limit) : found
        const keys = rows.map((row) => row.address_key)
        const last = rows[rows.length - 1]
        const suggestions = keys.length === 0 ? [] : yield* sql<{
          counterparty_key: string
          type: string
          relationship: "self" | "exchange" | "counterparty" | "contract" | null
          model: string
          confidence: number
        }>`
          SELECT DISTINCT ON (counterparty_key) counterparty_key, type, relationship, model, confidence
          FROM transfer_classifications
          WHERE account_id = ${accountId} AND classified_by = 'ai_labeled' AND NOT confirmed
            AND counterparty_key IN ${sql.in(keys)}
          ORDER BY counterparty_key, updated_at DESC`
        const byKey = new Map(suggestions.map((s) => [s.counterparty_key, s]))
        return {
          counterparties: rows.map((row) => {
            const s = byKey.get(row.address_key)
            return {
              address: row.address,
              movements: Number(row.movements),
              tokens: row.tokens,
              firstSeen: row.first_seen,
              lastSeen: row.last_seen,
              suggestion: s === undefined
                ? null
                : { type: s.type, relationship: s.relationship, model: s.model, confidence: Number(s.confidence) }
            }
          }),
          nextCursor: more && last !== undefined
            ? cursors.seal(
              accountId,
              KIND,
              positionOf({ movements: Number(last.movements), addressKey: last.address_key })
            )
            : null
        } satisfies UnlabeledCounterparties
      })

    return { unlabeled } as const
  })
}) {}
