import { SqlClient, type Statement } from "@effect/sql"
import { storableText } from "@scaledger/domain/Basic"
import type { MovementType, Relationship } from "@scaledger/domain/ledger/LedgerInput"
import { Effect } from "effect"

/** A transfer the worker leased to classify, with what the rules need of it. */
export interface ClaimedTransfer {
  readonly accountId: string
  readonly chainId: number
  readonly txHash: string
  readonly logIndex: number
  readonly tokenKey: string
  readonly fromKey: string
  readonly toKey: string
  readonly raw: string
  readonly block: number
}

/** A queued classification joined with its transfer, as the queries return it. */
interface TransferRow {
  readonly account_id: string
  readonly tx_hash: string
  readonly log_index: number
  readonly token_key: string
  readonly from_key: string
  readonly to_key: string
  readonly raw: string
  readonly block: string
}

const claimedTransfer = (chainId: number, row: TransferRow): ClaimedTransfer => ({
  accountId: row.account_id,
  chainId,
  txHash: row.tx_hash,
  logIndex: row.log_index,
  tokenKey: row.token_key,
  fromKey: row.from_key,
  toKey: row.to_key,
  raw: row.raw,
  block: Number(row.block)
})

/** A remote model's free text (or an error), as `storableText`; null stays null. */
const storable = (text: string | null): string | null => text === null ? null : storableText(text)

/** What the worker decided for one transfer. */
export interface ClassificationResult {
  readonly accountId: string
  readonly chainId: number
  readonly txHash: string
  readonly logIndex: number
  /** Null when neither end is own (nothing to classify for this account). */
  readonly type: MovementType | null
  readonly relationship: Relationship | null
  readonly classifiedBy: "rule" | "ai_labeled"
  readonly confirmed: boolean
  readonly rule: string | null
  readonly counterpartyKey: string | null
  readonly model: string | null
  readonly confidence: number | null
  readonly rationale: string | null
  readonly error: string | null
}

/** Where learning got to: the last confirmation handed to the model, in the order `confirmedSince` reads them. */
export interface LearnedPosition {
  /** The confirmation's `updated_at`, as the database writes it. */
  readonly at: string
  readonly accountId: string
  readonly txHash: string
  readonly logIndex: number
}

/** Before every confirmation. */
export const LEARNED_NOTHING: LearnedPosition = {
  at: "1970-01-01 00:00:00+00",
  accountId: "",
  txHash: "",
  logIndex: -1
}

/** A transaction's sender, target (lowercase) and method selector, as the model sees them. */
export interface TxFacts {
  readonly from: string | null
  readonly to: string | null
  readonly selector: string | null
}

export interface TxLegRow {
  readonly txHash: string
  readonly token: string
  readonly from: string
  readonly to: string
  readonly logIndex: number
  readonly raw: string
}

/**
 * The durable queue of classifications: every transfer of an account's addresses gets a `pending` row, the worker
 * leases rows (`FOR UPDATE SKIP LOCKED`, a lease that expires after a crash) and writes each decision once, only
 * over a row still pending and leased by it.
 */
export class ClassificationStore extends Effect.Service<ClassificationStore>()(
  "@scaledger/db/classification/ClassificationStore",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /**
       * Queues the transfers of watched addresses that have no row yet. Returns how many were queued and the pass's
       * snapshot: given back as `since`, the next pass looks only at transfers recorded and wallets added by
       * transactions that snapshot did not see (`recorded_xid`), not at every transfer of the chain again. Without
       * `since` (after a start), a full pass. A pass queues all it finds: one cut short could not hand on a snapshot.
       */
      const enqueue = (chainId: number, since?: string) => {
        const unseen = (column: Statement.Fragment, snapshot: string) =>
          sql`${column} >= split_part(${snapshot}, ':', 1)::bigint
              AND NOT pg_visible_in_snapshot(${column}::text::xid8, ${snapshot}::pg_snapshot)`
        const candidates = since === undefined
          ? sql`SELECT w.account_id, t.tx_hash, t.log_index, t.block
                FROM token_transfers t
                JOIN wallets w ON w.address_key = t.from_key OR w.address_key = t.to_key
                WHERE t.chain_id = ${chainId}`
          : sql`SELECT w.account_id, t.tx_hash, t.log_index, t.block
                FROM token_transfers t
                JOIN wallets w ON w.address_key = t.from_key OR w.address_key = t.to_key
                WHERE t.chain_id = ${chainId} AND ${unseen(sql`t.recorded_xid`, since)}
                UNION
                SELECT w.account_id, t.tx_hash, t.log_index, t.block
                FROM wallets w
                JOIN token_transfers t ON t.chain_id = ${chainId}
                  AND (t.from_key = w.address_key OR t.to_key = w.address_key)
                WHERE ${unseen(sql`w.recorded_xid`, since)}`
        return Effect.map(
          sql<{ n: string; snapshot: string }>`
            WITH fresh AS (
              SELECT DISTINCT n.account_id, n.tx_hash, n.log_index, n.block
              FROM (${candidates}) n
              WHERE NOT EXISTS (
                SELECT 1 FROM transfer_classifications c
                WHERE c.account_id = n.account_id AND c.chain_id = ${chainId} AND c.tx_hash = n.tx_hash
                  AND c.log_index = n.log_index)
            ), inserted AS (
              INSERT INTO transfer_classifications (account_id, chain_id, tx_hash, log_index, block)
              SELECT account_id, ${chainId}, tx_hash, log_index, block FROM fresh
              ON CONFLICT DO NOTHING
              RETURNING 1
            )
            SELECT count(*) AS n, pg_current_snapshot()::text AS snapshot FROM inserted`,
          (rows) => ({ queued: Number(rows[0]?.n ?? 0), since: rows[0]!.snapshot })
        )
      }

      /**
       * Leases up to `limit` pending rows whose transfer still exists (a re-org may have removed it): the oldest
       * queued first and, of those queued together, an account's in chain order, one account after another, so a
       * batch moves the account's first queued transfer forward (its ledger checkpoint waits behind it) and asks
       * for a build of few accounts.
       */
      const claim = (chainId: number, owner: string, limit: number, leaseSeconds: number) =>
        Effect.map(
          sql<TransferRow>`
            WITH due AS (
              SELECT c.account_id, c.chain_id, c.tx_hash, c.log_index FROM transfer_classifications c
              WHERE c.status = 'pending' AND c.chain_id = ${chainId}
                AND (c.lease_until IS NULL OR c.lease_until < now())
              ORDER BY c.created_at, c.account_id, c.block, c.log_index
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ), leased AS (
              UPDATE transfer_classifications c
              SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseSeconds}),
                attempts = c.attempts + 1, updated_at = now()
              FROM due
              WHERE c.account_id = due.account_id AND c.chain_id = due.chain_id AND c.tx_hash = due.tx_hash
                AND c.log_index = due.log_index
              RETURNING c.account_id, c.chain_id, c.tx_hash, c.log_index
            )
            SELECT l.account_id, l.tx_hash, l.log_index, t.token_key, t.from_key, t.to_key, t.raw::text AS raw,
              t.block
            FROM leased l
            JOIN token_transfers t ON t.chain_id = l.chain_id AND t.tx_hash = l.tx_hash AND t.log_index = l.log_index`,
          (rows) => rows.map((row) => claimedTransfer(chainId, row))
        )

      /** Pending rows whose transfer a re-org removed: nothing to classify any more. */
      const dropOrphans = (chainId: number) =>
        sql`
          DELETE FROM transfer_classifications c
          WHERE c.chain_id = ${chainId} AND c.status = 'pending' AND c.lease_until IS NOT NULL
            AND c.lease_until < now() AND NOT EXISTS (
              SELECT 1 FROM token_transfers t
              WHERE t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash AND t.log_index = c.log_index)`

      /** The account's own addresses (wallets marked own, and counterparties it confirmed as `self`). */
      const ownAddresses = (accountId: string) =>
        Effect.map(
          sql<{ address_key: string }>`
            SELECT address_key FROM wallets WHERE account_id = ${accountId} AND self
            UNION
            SELECT address_key FROM counterparty_labels
            WHERE account_id = ${accountId} AND relationship = 'self' AND confirmed`,
          (rows) => new Set(rows.map((row) => row.address_key))
        )

      /**
       * The legs of the given transfers' transactions that the rules and the model look at: each given transfer,
       * and every transfer of those transactions from or to one of `own` (the swap rule's sent and received tokens,
       * the model's token flows). A transaction's other transfers (an airdrop's or a batch's thousand) are not read.
       */
      const legs = (
        chainId: number,
        transfers: ReadonlyArray<{ readonly txHash: string; readonly logIndex: number }>,
        own: Iterable<string>
      ) =>
        transfers.length === 0 ? Effect.succeed([] as Array<TxLegRow>) : Effect.map(
          sql<{ tx_hash: string; token: string; from_key: string; to_key: string; log_index: number; raw: string }>`
            WITH own AS (SELECT json_array_elements_text(${JSON.stringify([...new Set(own)])}::json) AS key)
            SELECT t.tx_hash, coalesce(ct.symbol, t.token_key) AS token, t.from_key, t.to_key, t.log_index,
              t.raw::text AS raw
            FROM token_transfers t
            LEFT JOIN chain_tokens ct ON ct.chain_id = t.chain_id AND ct.address_key = t.token_key
            WHERE t.chain_id = ${chainId} AND t.tx_hash IN ${sql.in([...new Set(transfers.map((c) => c.txHash))])}
              AND (t.from_key IN (SELECT key FROM own) OR t.to_key IN (SELECT key FROM own)
                OR (t.tx_hash, t.log_index) IN (SELECT g.h, g.i FROM json_to_recordset(${
            JSON.stringify(transfers.map((c) => ({ h: c.txHash, i: c.logIndex })))
          }::json) AS g(h text, i integer)))
            ORDER BY t.tx_hash, t.log_index`,
          (rows) =>
            rows.map((row): TxLegRow => ({
              txHash: row.tx_hash,
              token: row.token,
              from: row.from_key,
              to: row.to_key,
              logIndex: row.log_index,
              raw: row.raw
            }))
        )

      const knownCode = (chainId: number, addresses: ReadonlyArray<string>) =>
        addresses.length === 0 ? Effect.succeed(new Map<string, boolean>()) : Effect.map(
          sql<{ address_key: string; has_code: boolean }>`
            SELECT address_key, has_code FROM address_code
            WHERE chain_id = ${chainId} AND address_key IN ${sql.in([...new Set(addresses)])}`,
          (rows) => new Map(rows.map((row) => [row.address_key, row.has_code]))
        )

      const storeCode = (chainId: number, entries: ReadonlyArray<readonly [string, boolean]>) =>
        entries.length === 0 ? Effect.void : sql`
          INSERT INTO address_code ${
          sql.insert(
            entries.map(([address, hasCode]) => ({ chain_id: chainId, address_key: address, has_code: hasCode }))
          )
        }
          ON CONFLICT (chain_id, address_key) DO UPDATE SET has_code = EXCLUDED.has_code, checked_at = now()`.pipe(
          Effect.asVoid
        )

      /**
       * The stored facts of these transactions (sender, target, method selector), by hash; a hash not stored is
       * absent, one the node did not know has nulls. Sender and target of rows stored before migration 0019 come
       * from the receipt ingestion kept then.
       */
      const txFacts = (chainId: number, txHashes: ReadonlyArray<string>) =>
        txHashes.length === 0 ? Effect.succeed(new Map<string, TxFacts>()) : Effect.map(
          sql<{ tx_hash: string; tx_from: string | null; tx_to: string | null; selector: string | null }>`
            SELECT m.tx_hash, coalesce(m.tx_from, r.tx_from) AS tx_from,
              CASE WHEN m.tx_from IS NULL THEN r.tx_to ELSE m.tx_to END AS tx_to, m.selector
            FROM tx_methods m
            LEFT JOIN tx_receipts r ON r.chain_id = m.chain_id AND r.tx_hash = m.tx_hash
            WHERE m.chain_id = ${chainId} AND m.tx_hash IN ${sql.in([...new Set(txHashes)])}`,
          (rows) =>
            new Map(rows.map((row) => [row.tx_hash, {
              from: row.tx_from?.toLowerCase() ?? null,
              to: row.tx_to?.toLowerCase() ?? null,
              selector: row.selector
            }]))
        )

      const storeTxFacts = (chainId: number, facts: ReadonlyMap<string, TxFacts>) =>
        facts.size === 0 ? Effect.void : sql`
          INSERT INTO tx_methods ${
          sql.insert([...facts].map(([txHash, f]) => ({
            chain_id: chainId,
            tx_hash: txHash,
            selector: f.selector,
            tx_from: f.from,
            tx_to: f.to
          })))
        }
          ON CONFLICT (chain_id, tx_hash) DO NOTHING`.pipe(Effect.asVoid)

      /** The account's history with a counterparty before a block, and the relationship it confirmed, if any. */
      const history = (accountId: string, chainId: number, counterparty: string, beforeBlock: number) =>
        Effect.gen(function*() {
          const [counts] = yield* sql<{ prior_in: string; prior_out: string }>`
            SELECT
              count(*) FILTER (WHERE t.from_key = ${counterparty}) AS prior_in,
              count(*) FILTER (WHERE t.to_key = ${counterparty}) AS prior_out
            FROM token_transfers t
            WHERE t.chain_id = ${chainId} AND t.block < ${beforeBlock}
              AND ((t.from_key = ${counterparty} AND t.to_key IN (
                  SELECT address_key FROM wallets WHERE account_id = ${accountId}))
                OR (t.to_key = ${counterparty} AND t.from_key IN (
                  SELECT address_key FROM wallets WHERE account_id = ${accountId})))`
          const [label] = yield* sql<{ relationship: Relationship }>`
            SELECT relationship FROM counterparty_labels
            WHERE account_id = ${accountId} AND address_key = ${counterparty} AND confirmed`
          return {
            priorIn: Number(counts?.prior_in ?? 0),
            priorOut: Number(counts?.prior_out ?? 0),
            confirmedRelationship: label?.relationship ?? null
          }
        })

      /**
       * Writes decisions, each only over a row still pending and leased by `owner`, and asks for new ledger builds
       * of the accounts concerned, in one transaction.
       */
      const complete = (owner: string, results: ReadonlyArray<ClassificationResult>) =>
        results.length === 0 ? Effect.succeed(0) : sql.withTransaction(Effect.gen(function*() {
          // One statement for the batch: a round trip per row cost more than the batch's decisions on a busy
          // server. JSON carries the nulls and any text as it is, but for what PostgreSQL text cannot hold (`storable`):
          // a remote model's rationale or model id with a NUL would fail the batch, and the round again each time.
          const decisions = JSON.stringify(results.map((r) => ({
            account_id: r.accountId,
            chain_id: r.chainId,
            tx_hash: r.txHash,
            log_index: r.logIndex,
            type: r.type,
            relationship: r.relationship,
            classified_by: r.type === null ? null : r.classifiedBy,
            confirmed: r.confirmed,
            rule: r.rule,
            counterparty_key: r.counterpartyKey,
            model: storable(r.model),
            confidence: r.confidence,
            rationale: storable(r.rationale),
            error: storable(r.error)
          })))
          const updated = yield* sql<{ account_id: string }>`
            UPDATE transfer_classifications c SET
              status = 'done', type = d.type, relationship = d.relationship, classified_by = d.classified_by,
              confirmed = d.confirmed, rule = d.rule, counterparty_key = d.counterparty_key, model = d.model,
              confidence = d.confidence, rationale = d.rationale, error = d.error,
              lease_owner = NULL, lease_until = NULL, updated_at = now()
            FROM json_to_recordset(${decisions}::json) AS d(
              account_id text, chain_id integer, tx_hash text, log_index integer, type text, relationship text,
              classified_by text, confirmed boolean, rule text, counterparty_key text, model text,
              confidence double precision, rationale text, error text)
            WHERE c.account_id = d.account_id AND c.chain_id = d.chain_id AND c.tx_hash = d.tx_hash
              AND c.log_index = d.log_index AND c.status = 'pending' AND c.lease_owner = ${owner}
            RETURNING c.account_id`
          const accounts = [...new Set(updated.map((row) => row.account_id))]
          if (accounts.length > 0) {
            yield* sql`
              INSERT INTO ledger_builds (account_id)
              SELECT id FROM accounts WHERE id IN ${sql.in(accounts)}
              ON CONFLICT (account_id) DO UPDATE SET
                requested_version = ledger_builds.requested_version + 1, requested_at = now()`
          }
          return updated.length
        }))

      /**
       * Queues again the movements the model could not answer (an outage, a time-out) once they are `afterSeconds`
       * old, up to `maxAttempts` tries; until then they stay `unknown`, needing review.
       */
      const retryModelFailures = (chainId: number, afterSeconds: number, maxAttempts: number) =>
        Effect.map(
          sql<{ n: string }>`
            WITH retried AS (
              UPDATE transfer_classifications SET status = 'pending', updated_at = now()
              WHERE chain_id = ${chainId} AND status = 'done' AND rule = 'unlisted_contract' AND error IS NOT NULL
                AND classified_by = 'rule' AND attempts < ${maxAttempts}
                AND updated_at <= now() - make_interval(secs => ${afterSeconds})
              RETURNING 1
            )
            SELECT count(*) AS n FROM retried`,
          (rows) => Number(rows[0]?.n ?? 0)
        )

      /** `rows` as a relation `d` to join `transfer_classifications c` with, and the condition that matches them. */
      const claimedRows = (rows: ReadonlyArray<ClaimedTransfer>) => ({
        from: sql`json_to_recordset(${
          JSON.stringify(rows.map((row) => ({
            account_id: row.accountId,
            chain_id: row.chainId,
            tx_hash: row.txHash,
            log_index: row.logIndex
          })))
        }::json) AS d(account_id text, chain_id integer, tx_hash text, log_index integer)`,
        match: sql`c.account_id = d.account_id AND c.chain_id = d.chain_id AND c.tx_hash = d.tx_hash
          AND c.log_index = d.log_index`
      })

      /** Clears the leases `owner` holds on `rows` (still pending), in one statement; `uncount`: the claim was no attempt. */
      const unlease = (owner: string, rows: ReadonlyArray<ClaimedTransfer>, uncount: boolean) => {
        if (rows.length === 0) return Effect.void
        const claimed = claimedRows(rows)
        return sql`
          UPDATE transfer_classifications c SET lease_owner = NULL, lease_until = NULL,
            attempts = c.attempts - ${uncount ? 1 : 0}
          FROM ${claimed.from}
          WHERE ${claimed.match} AND c.status = 'pending' AND c.lease_owner = ${owner}`.pipe(Effect.asVoid)
      }

      /**
       * Extends the leases `owner` holds on `rows` (still pending) to `leaseSeconds` from now, while a round waits on
       * the model. Returns whether it still held any of them.
       */
      const renew = (owner: string, rows: ReadonlyArray<ClaimedTransfer>, leaseSeconds: number) => {
        if (rows.length === 0) return Effect.succeed(false)
        const claimed = claimedRows(rows)
        return Effect.map(
          sql<{ n: string }>`
            WITH renewed AS (
              UPDATE transfer_classifications c SET lease_until = now() + make_interval(secs => ${leaseSeconds})
              FROM ${claimed.from}
              WHERE ${claimed.match} AND c.status = 'pending' AND c.lease_owner = ${owner}
              RETURNING 1
            )
            SELECT count(*) AS n FROM renewed`,
          (result) => Number(result[0]?.n ?? 0) > 0
        )
      }

      /** Gives leases back after a round failed before deciding: the rows are due again at once. */
      const release = (owner: string, rows: ReadonlyArray<ClaimedTransfer>) => unlease(owner, rows, false)

      /**
       * Gives leased rows back untried (a round that leaves them for the next one): due again at once, and the claim
       * not counted as an attempt.
       */
      const giveBack = (owner: string, rows: ReadonlyArray<ClaimedTransfer>) => unlease(owner, rows, true)

      /**
       * Classifications a user confirmed after `since` (oldest first): what the model may learn from. The position is
       * the last row handed over, not only its time: one review settles every movement of a counterparty in one
       * statement, all with one `updated_at`, and a page ending inside them must not skip the rest. `at` is the
       * database's own timestamp as text (microseconds, which a `Date` would lose).
       */
      const confirmedSince = (chainId: number, since: LearnedPosition, limit: number) =>
        Effect.map(
          sql<
            TransferRow & {
              type: MovementType
              relationship: Relationship
              at: string
            }
          >`
            SELECT c.account_id, c.tx_hash, c.log_index, t.token_key, t.from_key, t.to_key, t.raw::text AS raw, t.block,
              c.type, c.relationship, c.updated_at::text AS at
            FROM transfer_classifications c
            JOIN token_transfers t ON t.chain_id = c.chain_id AND t.tx_hash = c.tx_hash AND t.log_index = c.log_index
            WHERE c.chain_id = ${chainId} AND c.classified_by = 'user' AND c.confirmed
              AND (c.updated_at, c.account_id, c.tx_hash, c.log_index)
                > (${since.at}::timestamptz, ${since.accountId}::text, ${since.txHash}::text, ${since.logIndex}::integer)
              AND c.relationship IS NOT NULL
            ORDER BY c.updated_at, c.account_id, c.tx_hash, c.log_index
            LIMIT ${limit}`,
          (rows) =>
            rows.map((row) => ({
              transfer: claimedTransfer(chainId, row),
              type: row.type,
              relationship: row.relationship,
              at: row.at
            }))
        )

      /** How many rows wait, and how many are done (for logs and tests). */
      const counts = (chainId: number) =>
        Effect.map(
          sql<{ pending: string; done: string }>`
            SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
              count(*) FILTER (WHERE status = 'done') AS done
            FROM transfer_classifications WHERE chain_id = ${chainId}`,
          (rows) => ({ pending: Number(rows[0]?.pending ?? 0), done: Number(rows[0]?.done ?? 0) })
        )

      return {
        enqueue,
        claim,
        dropOrphans,
        ownAddresses,
        legs,
        knownCode,
        storeCode,
        txFacts,
        storeTxFacts,
        history,
        complete,
        release,
        renew,
        giveBack,
        confirmedSince,
        retryModelFailures,
        counts
      } as const
    })
  }
) {}
