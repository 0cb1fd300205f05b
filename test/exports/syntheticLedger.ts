import { SqlClient } from "@effect/sql"
import { PAGE_ROWS } from "@scaledger/db/ledger/RowPages"
import { PAGE_FORMAT } from "@scaledger/domain/ledger/StoredPage"
import { Effect } from "effect"

export const SYNTHETIC_TOKEN = "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"
export const SYNTHETIC_COUNTERPARTY = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"

/**
 * A settled ledger build of `count` movements (transfer.in of 1.5 AAPL each, valued at 318.66 USD) for the account,
 * written straight into the ledger's tables the way the ledger worker stores them (pages of PAGE_ROWS, each row stored
 * whole with its keys: `StoredPage`), in batches inside the database
 * (generate_series): for exports of a size no chain scenario reaches.
 */
export const seedSyntheticLedger = (accountId: string, wallet: string, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO ledger_builds (account_id, requested_version, replay_version, built_version, built_at, status, report)
      VALUES (${accountId}, 1, 1, 1, now(), 'ready', ${
      JSON.stringify({ currency: "USD", tokens: [{ token: "AAPL", tokenAddress: SYNTHETIC_TOKEN }] })
    })
      ON CONFLICT (account_id) DO UPDATE SET built_version = 1, replay_version = 1, requested_version = 1,
        status = 'ready', report = excluded.report`
    yield* sql`DELETE FROM ledger_event_pages WHERE account_id = ${accountId}`
    const batch = 100_000
    for (let start = 0; start < count; start += batch) {
      const end = Math.min(count, start + batch) - 1
      yield* sql`
        INSERT INTO ledger_event_pages (account_id, first_ord, count, first_day, last_day, tokens, types, review_count,
                                        review, lines)
        SELECT ${accountId}, min(g), count(*), min(day), max(day), ARRAY['AAPL'], ARRAY['transfer.in'], 0, '[]'::json,
          string_agg(
            json_build_object('r', row, 'k', json_build_array('evt_' || g, 'transfer.in', 'AAPL',
              to_char(day, 'YYYY-MM-DD'), 0))::text || E'\n',
            '' ORDER BY g) || ${`{"f":${PAGE_FORMAT},"d":[]}`}
        FROM (SELECT g, date '2026-01-01' + (g / 5000) AS day, json_build_object(
            'id', 'evt_' || g, 'type', 'transfer.in', 'relationship', 'exchange', 'classifiedBy', 'rule',
            'confirmed', true, 'needsReview', false, 'taxable', true, 'treatment', 'acquisition', 'direction', 'in',
            'token', 'AAPL', 'tokenAddress', ${SYNTHETIC_TOKEN}::text, 'wallet', ${wallet}::text,
            'counterparty', ${SYNTHETIC_COUNTERPARTY}::text, 'raw', '1500000000000000000', 'qty', '1.5',
            'shares', '1.500849120091638654', 'date', to_char(date '2026-01-01' + (g / 5000), 'YYYY-MM-DD'),
            'timestamp', 1767225600 + g * 17, 'currency', 'USD', 'valueUsd', '318.66',
            'value', json_build_object('currency', 'USD', 'amount', '318.66', 'rate', '1',
              'rateDate', to_char(date '2026-01-01' + (g / 5000), 'YYYY-MM-DD'), 'source', 'identity',
              'carriedForward', false),
            'price', null, 'lotIds', json_build_array(), 'disposalIds', json_build_array(),
            'nullReasons', json_build_array(),
            'walletTransaction', json_build_object('txHash', '0x' || lpad(to_hex(g), 64, '0'), 'block', 1000000 + g,
              'logIndex', g % 7)) AS row
          FROM generate_series(${start}::int, ${end}::int) AS g) s
        GROUP BY g / ${PAGE_ROWS}`
    }
  })
