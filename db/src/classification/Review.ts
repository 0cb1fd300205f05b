import { SqlClient, type Statement } from "@effect/sql"
import { NotFound, NotReviewable } from "@scaledger/domain/Errors"
import { countryRule, type LedgerCountry } from "@scaledger/domain/ledger/CountryRule"
import type { ReviewEvent } from "@scaledger/domain/ReviewApi"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Effect } from "effect"
import { requestReplay } from "../ledger/LedgerBuilds.js"
import { eventRecords } from "../ledger/RowPages.js"

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

/** A movement's id: its transfer's hash and log index. */
const TRANSFER_ID = /^(0x[0-9a-fA-F]{64}):(\d{1,9})$/

/** The event with the id among the rows of `pages`, with its type and counterparty. */
const eventIn = (pages: ReadonlyArray<{ readonly lines: string }>, eventId: string) => {
  for (const page of pages) {
    for (const record of eventRecords(page.lines)) {
      if (record.id !== eventId) continue
      const counterparty = (record.row as { counterparty?: unknown }).counterparty
      return { type: record.type, counterparty: typeof counterparty === "string" ? counterparty : null }
    }
  }
  return undefined
}

/**
 * PATCH /v1/events/{id}: the counterparty gets a confirmed user label, every classification of the account with it
 * that awaits review is settled with it (in one transaction), and a replay rebuilds the record.
 */
export class Review extends Effect.Service<Review>()("@scaledger/db/classification/Review", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The stored event with the id, with its counterparty: from the pages' lists of rows needing review (what is
     * labelled, as a rule), else from the pages' rows (`findStoredEvent`).
     */
    const findEvent = (accountId: string, chainId: number, eventId: string) =>
      Effect.flatMap(
        sql<{ type: string; counterparty: string | null }>`
          SELECT r->>1 AS type, r->>4 AS counterparty FROM ledger_event_pages p, json_array_elements(p.review) r
          WHERE p.account_id = ${accountId} AND p.review_count > 0 AND r->>0 = ${eventId}`,
        ([reviewed]) => reviewed !== undefined ? Effect.succeed(reviewed) : findStoredEvent(accountId, chainId, eventId)
      )

    /**
     * The event among the pages' rows. A page holding it holds its id as a JSON string, so only those pages are
     * read (and any other naming it: a lot's source, a disposal's event). A movement's
     * id names its transfer (`<tx hash>:<log index>`): only the pages of the transfer's day are searched first, then,
     * should the transfer's block have changed since the build, every page.
     */
    const findStoredEvent = (accountId: string, chainId: number, eventId: string) =>
      Effect.gen(function*() {
        const needle = JSON.stringify(eventId)
        const transfer = TRANSFER_ID.exec(eventId)
        const onDay = transfer === null ? [] : yield* sql<{ lines: string }>`
          SELECT p.lines FROM ledger_event_pages p, token_transfers t
          WHERE t.chain_id = ${chainId} AND t.tx_hash = ${transfer[1]!} AND t.log_index = ${Number(transfer[2])}
            AND p.account_id = ${accountId}
            AND (t.block_time AT TIME ZONE 'UTC')::date BETWEEN p.first_day AND p.last_day
            AND strpos(p.lines, ${needle}) > 0`
        const found = eventIn(onDay, eventId)
        if (found !== undefined) return found
        return eventIn(
          yield* sql<{ lines: string }>`
            SELECT lines FROM ledger_event_pages WHERE account_id = ${accountId} AND strpos(lines, ${needle}) > 0`,
          eventId
        )
      })

    /** `key` (an SQL expression) has a confirmed label in the account: its movements need no review once rebuilt. */
    const labelled = (key: Statement.Fragment) =>
      sql`EXISTS (SELECT 1 FROM counterparty_labels l WHERE l.account_id = p.account_id AND l.address_key = ${key}
        AND l.confirmed)`

    const resolve = (accountId: string, chainId: number, eventId: string, input: ReviewEvent) =>
      Effect.gen(function*() {
        const event = yield* findEvent(accountId, chainId, eventId)
        if (event === undefined) return yield* new NotFound({ message: `No event ${shownValue(eventId)}.` })
        if (event.counterparty === null || event.counterparty === undefined) {
          return yield* new NotReviewable({
            message: `Event ${eventId} (${event.type}) has no counterparty to label.`,
            details: { type: event.type }
          })
        }
        const counterparty = event.counterparty
        const key = counterparty.toLowerCase()
        // A mint's or burn's counterparty is the zero address, and a movement between own wallets is one whatever
        // label its other end gets: a label would be stored and reported as applied while the record stays as it is.
        if (key === ZERO_ADDRESS) {
          return yield* new NotReviewable({
            message: `Event ${eventId} (${event.type}) is a mint or burn: the zero address is not a counterparty.`,
            details: { type: event.type }
          })
        }
        const [watched] = yield* sql<{ address: string; self: boolean }>`
          SELECT address, self FROM wallets WHERE account_id = ${accountId} AND address_key = ${key}`
        const own = watched?.self === true ? watched : undefined
        if (watched !== undefined && !watched.self && input.relationship === "self") {
          return yield* new NotReviewable({
            message:
              `Event ${eventId} (${event.type}) goes to or from ${watched.address}, a watched wallet marked not ` +
              "own: mark it own (PATCH /v1/wallets with self true) instead.",
            details: { type: event.type, notOwnWallet: watched.address }
          })
        }
        if (own !== undefined) {
          return yield* new NotReviewable({
            message: `Event ${eventId} (${event.type}) is between the account's own wallets (${own.address} is ` +
              "one): it is a transfer between own addresses. Mark the wallet not own (PATCH /v1/wallets) instead.",
            details: { type: event.type, ownWallet: own.address }
          })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          // Counted from the stored build's review lists, less what confirmed labels settle that a replay has not
          // rebuilt yet (an earlier PATCH's counterparty).
          const [settled] = yield* sql<{ n: string }>`
            SELECT count(*) AS n FROM ledger_event_pages p, json_array_elements(p.review) r
            WHERE p.account_id = ${accountId} AND p.review_count > 0 AND r->>0 <> ${eventId}
              AND lower(r->>4) = ${key} AND NOT ${labelled(sql`${key}`)}`
          yield* sql`
            INSERT INTO counterparty_labels (account_id, address_key, address, relationship, label, note)
            VALUES (${accountId}, ${key}, ${counterparty}, ${input.relationship}, ${input.label ?? null},
              ${input.note ?? null})
            ON CONFLICT (account_id, address_key) DO UPDATE SET
              address = EXCLUDED.address, relationship = EXCLUDED.relationship,
              label = CASE WHEN ${
            input.label !== undefined
          }::boolean THEN EXCLUDED.label ELSE counterparty_labels.label END,
              note = CASE WHEN ${
            input.note !== undefined
          }::boolean THEN EXCLUDED.note ELSE counterparty_labels.note END,
              classified_by = 'user', confirmed = true, updated_at = now()`
          // What awaited review becomes the user's: a movement between own addresses for `self`, otherwise a
          // disposal or acquisition by direction; so does what an earlier label of the counterparty settled (one
          // label per address: a new one is followed by all its movements). Confirmed rule classifications (a swap,
          // collateral) keep their type; the label gives them the relationship.
          const [transferHash, transferLog] = eventId.split(":")
          const changed = yield* sql<{ tx_hash: string; log_index: number; type: string }>`
            UPDATE transfer_classifications c SET
              status = 'done', classified_by = 'user', confirmed = true, relationship = ${input.relationship},
              type = CASE
                WHEN ${input.relationship} = 'self' THEN 'transfer.self'
                WHEN t.from_key = ${key} THEN 'transfer.in'
                ELSE 'transfer.out' END,
              counterparty_key = ${key}, lease_owner = NULL, lease_until = NULL, updated_at = now()
            FROM token_transfers t
            WHERE c.account_id = ${accountId} AND c.chain_id = ${chainId}
              AND t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash AND t.log_index = c.log_index
              AND (t.from_key = ${key} OR t.to_key = ${key})
              AND (NOT c.confirmed OR c.type IS NULL OR c.type = 'unknown' OR c.status = 'pending'
                OR c.classified_by = 'user'
                OR (c.tx_hash = ${transferHash ?? ""} AND c.log_index::text = ${transferLog ?? ""}))
            RETURNING c.tx_hash, c.log_index, c.type`
          yield* requestReplay(accountId)
          const [left] = yield* sql<{ n: string }>`
            SELECT count(*) AS n FROM ledger_event_pages p, json_array_elements(p.review) r
            WHERE p.account_id = ${accountId} AND p.review_count > 0
              AND (r->>4 IS NULL OR NOT ${labelled(sql`lower(r->>4)`)})`
          const [settings] = yield* sql<{ country: string }>`
            SELECT country FROM account_settings WHERE account_id = ${accountId}`
          const country = (settings?.country ?? "US") as LedgerCountry
          // As the replay will have it: only a disposal is taxable, and only where the country taxes disposals. A
          // transfer with no classification row yet (built before the classifier queued it) takes the rule default
          // by direction, which the label settles the same way.
          const type = changed.find((row) => row.tx_hash === transferHash && String(row.log_index) === transferLog)
            ?.type ?? (yield* sql<{ type: string }>`
              SELECT CASE WHEN ${input.relationship} = 'self' THEN 'transfer.self'
                WHEN from_key = ${key} THEN 'transfer.in' ELSE 'transfer.out' END AS type
              FROM token_transfers WHERE chain_id = ${chainId} AND tx_hash = ${transferHash ?? ""}
                AND log_index::text = ${transferLog ?? ""}`)[0]?.type
          return {
            id: eventId,
            counterparty,
            relationship: input.relationship,
            taxable: type === "transfer.out" && countryRule(country).disposalsTaxable,
            needsReview: false,
            alsoSettled: Number(settled?.n ?? 0),
            stillNeedingReview: Number(left?.n ?? 0)
          }
        }))
      })

    return { resolve } as const
  })
}) {}
