import { SqlClient } from "@effect/sql"
import { insertPage } from "@scaledger/db/ledger/LedgerStore"
import { PAGE_ROWS, PageBuilder } from "@scaledger/db/ledger/RowPages"
import { utcDate } from "@scaledger/domain/ledger/Fixed"
import { PAGE_FORMAT } from "@scaledger/domain/ledger/StoredPage"
import { Effect } from "effect"

export const SYNTHETIC_TOKEN = "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9"
export const SYNTHETIC_COUNTERPARTY = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
const SYNTHETIC_FEED = "0x8d0CC5f38f9E802475f2CFf4F9fc7000C2E1557c"

/** The account's build marked stored and ready (a USD report naming AAPL), its event pages gone. */
const settledBuild = (accountId: string) =>
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
  })

/**
 * A settled ledger build of `count` movements (transfer.in of 1.5 AAPL each, valued at 318.66 USD) for the account,
 * written straight into the ledger's tables (pages of PAGE_ROWS, each row stored whole with its keys: `StoredPage`),
 * in batches inside the database (generate_series): for exports of a size no chain scenario reaches.
 */
export const seedSyntheticLedger = (accountId: string, wallet: string, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* settledBuild(accountId)
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

const hex64 = (n: number) => `0x${n.toString(16).padStart(64, "0")}`

/**
 * The same account as `seedSyntheticLedger` (a transfer.in of 1.5 AAPL valued at 318.66 USD per movement), stored as
 * a build of the ledger worker stores it: each movement a compact row (`Ledger.storedMovement`'s form: its figures
 * and the dictionary of its page, `StoredPage`), written by the worker's own page writer (`PageBuilder`,
 * `insertPage`). Movement ids are the chain record's (`<tx hash>:<log index>`), priced by a feed round per day.
 */
export const seedStoredLedger = (accountId: string, wallet: string, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* settledBuild(accountId)
    const builder = new PageBuilder("events", 0)
    // One price round per day, shared by its rows as `storedPrice` shares one (the page's dictionary holds it once).
    const rounds = new Map<number, readonly [string, string, number, string]>()
    const roundOf = (day: number) => {
      let round = rounds.get(day)
      if (round === undefined) {
        round = [SYNTHETIC_FEED, String(1000 + day), 1767225600 + day * 86_400 - 60, "21244000000"]
        rounds.set(day, round)
      }
      return round
    }
    for (let g = 0; g < count; g++) {
      const logIndex = g % 7
      const timestamp = 1767225600 + g * 17
      builder.addEvent({
        id: `${hex64(g)}:${logIndex}`,
        type: "transfer.in",
        token: "AAPL",
        day: utcDate(timestamp),
        needsReview: false,
        row: {
          wallet,
          counterparty: SYNTHETIC_COUNTERPARTY,
          tokenAddress: SYNTHETIC_TOKEN,
          v: [
            `${hex64(g)}:${logIndex}`,
            "transfer.in",
            "exchange",
            "rule",
            1,
            0,
            0,
            "acquisition",
            "in",
            "AAPL",
            "1500000000000000000",
            "1000566080061092436",
            timestamp,
            "USD",
            "318660000000000000000",
            0,
            roundOf(Math.floor((timestamp - 1767225600) / 86_400)),
            null,
            0,
            [],
            null,
            1_000_000 + g,
            logIndex
          ]
        }
      })
      if (builder.size === PAGE_ROWS || g === count - 1) {
        const page = builder.take()
        yield* insertPage(sql, "ledger_event_pages", accountId, page)
        builder.recycle(page)
      }
    }
  })
