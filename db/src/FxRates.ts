import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { isCalendarDate, utcDateOf } from "@scaledger/domain/CalendarDates"
import type { ReportingCurrency } from "@scaledger/domain/Currency"
import { usdCrossRate } from "@scaledger/domain/fx/CrossRate"
import { FxStore, type FxStoreShape } from "@scaledger/domain/fx/FxStore"
import { publicationDueDay, staleness } from "@scaledger/domain/fx/Quote"
import { FxStoreError } from "@scaledger/domain/fx/QuoteErrors"
import { type DayRates, type FxSource, StoredDay } from "@scaledger/domain/fx/Schemas"
import type { RateProvenance } from "@scaledger/domain/FxApi"
import { Clock, Effect, Layer, Option, Schema } from "effect"

/** Days sent to the database per statement when writing (each day is about 700 bytes of JSON). */
const WRITE_BATCH_DAYS = 1000

/** The reference data as readers and alerts see it. */
export interface FxStatus {
  /** The UTC date staleness was judged against. */
  readonly today: string
  readonly newestDay: string | null
  /** More than 2 TARGET business days lie after the newest day, up to and including today (or nothing is stored). */
  readonly stale: boolean
  /** TARGET business days after the newest day up to today; null when nothing is stored. */
  readonly businessDaysBehind: number | null
  readonly storedDays: number
  /** When the bundled history was last loaded, and how many days it added then. */
  readonly historyLoadedAt: Date | null
  readonly historyDays: number | null
  readonly refreshAttemptedAt: Date | null
  readonly refreshSucceededAt: Date | null
  readonly refreshSource: string | null
  /** The last refresh's failure, null once a refresh succeeds. */
  readonly refreshError: string | null
}

export type RefreshOutcome =
  | { readonly ok: true; readonly source: FxSource }
  | { readonly ok: false; readonly error: string }

interface DayDbRow {
  readonly day: string
  readonly source: FxSource
  readonly per_eur: unknown
}

interface StatusDbRow {
  readonly newest_day: string | null
  readonly stored_days: string
  readonly history_loaded_at: Date | null
  readonly history_days: number | null
  readonly refresh_attempted_at: Date | null
  readonly refresh_succeeded_at: Date | null
  readonly refresh_source: string | null
  readonly refresh_error: string | null
}

const decodeStoredDay = Schema.decodeUnknown(StoredDay)

/** The ECB code a quote needs besides USD (USD itself for USD and EUR, which need only EUR→USD). */
const otherCode = (quote: ReportingCurrency): string => (quote === "USD" || quote === "EUR" ? "USD" : quote)

/** Later days for the same date replace earlier ones, as in `DayIndex`; oldest first. */
const lastPerDate = (days: ReadonlyArray<DayRates>): Array<DayRates> =>
  [...new Map(days.map((day) => [day.date, day])).values()].sort((a, b) => (a.date < b.date ? -1 : 1))

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * ECB publication days (`fx_rates`: one row per day, the per-euro rates as a jsonb object of decimal strings, and
 * the source) and the refresh status (`fx_status`). Implements the domain's `FxStore` seam (`store`).
 */
export class FxRates extends Effect.Service<FxRates>()("@scaledger/db/FxRates", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const newestDay = Effect.fn("FxRates.newestDay")(() =>
      Effect.map(
        sql<{ day: string | null }>`SELECT max(day) AS day FROM fx_rates`,
        (rows) => Option.fromNullable(rows[0]?.day)
      )
    )

    const write = (source: FxSource, days: ReadonlyArray<DayRates>, onConflict: "replace" | "keep") =>
      sql.withTransaction(Effect.gen(function*() {
        let written = 0
        for (const batch of chunks(lastPerDate(days), WRITE_BATCH_DAYS)) {
          const json = JSON.stringify(batch)
          const conflict = onConflict === "replace"
            ? sql`
              ON CONFLICT (day) DO UPDATE SET source = excluded.source, per_eur = excluded.per_eur, stored_at = now()
              WHERE fx_rates.source IS DISTINCT FROM excluded.source OR fx_rates.per_eur IS DISTINCT FROM excluded.per_eur`
            : sql`ON CONFLICT (day) DO NOTHING`
          const [row] = yield* sql<{ n: string }>`
            WITH written AS (
              INSERT INTO fx_rates (day, source, per_eur)
              SELECT (e->>'date')::date, ${source}::text, e->'perEur'
              FROM jsonb_array_elements(${json}::jsonb) AS e
              ${conflict}
              RETURNING 1
            )
            SELECT count(*) AS n FROM written`
          written += Number(row?.n ?? 0)
        }
        return written
      }))

    /** Inserts or replaces whole days (currencies and source). Returns how many rows changed. */
    const upsert = Effect.fn("FxRates.upsert")((source: FxSource, days: ReadonlyArray<DayRates>) =>
      write(source, days, "replace")
    )

    /** Inserts the days not stored yet and leaves stored days alone. Returns how many were inserted. */
    const insertMissing = Effect.fn("FxRates.insertMissing")((source: FxSource, days: ReadonlyArray<DayRates>) =>
      write(source, days, "keep")
    )

    const latestWith = Effect.fn("FxRates.latestWith")((quote: ReportingCurrency, onOrBefore: string) =>
      Effect.gen(function*() {
        const code = otherCode(quote)
        const rows = yield* sql<DayDbRow>`
          SELECT day, source, per_eur FROM fx_rates
          WHERE day <= ${onOrBefore} AND per_eur ? 'USD' AND per_eur ? ${code}
          ORDER BY day DESC
          LIMIT 1`
        if (rows[0] === undefined) return Option.none<StoredDay>()
        const { day, per_eur, source } = rows[0]
        return Option.some(yield* Effect.orDie(decodeStoredDay({ date: day, source, perEur: per_eur })))
      })
    )

    /** The first stored day that has USD and the quote's currency. */
    const earliestWith = Effect.fn("FxRates.earliestWith")((quote: ReportingCurrency) =>
      Effect.map(
        sql<{ day: string | null }>`
          SELECT min(day) AS day FROM fx_rates WHERE per_eur ? 'USD' AND per_eur ? ${otherCode(quote)}`,
        (rows) => Option.fromNullable(rows[0]?.day)
      )
    )

    /** How many days are stored from `from` to `to`, both included. */
    const countBetween = Effect.fn("FxRates.countBetween")((from: string, to: string) =>
      Effect.map(
        sql<{ n: string }>`SELECT count(*) AS n FROM fx_rates WHERE day BETWEEN ${from} AND ${to}`,
        (rows) => Number(rows[0]?.n ?? 0)
      )
    )

    /**
     * The rate of `quote` per 1 USD for each of `dates` (`YYYY-MM-DD`), in one query: each date gets the latest
     * publication day on or before it that has both USD and the currency, with `carriedForward` when that day is
     * earlier than the date. `None` for a date before the currency's first publication (or an empty store). The
     * map has one entry per distinct date. Dates after the newest stored day are carried forward from it: judge
     * staleness with `status()`.
     */
    const ratesOn = Effect.fn("FxRates.ratesOn")((quote: ReportingCurrency, dates: Iterable<string>) =>
      Effect.gen(function*() {
        const wanted = [...new Set(dates)].sort()
        const result = new Map<string, Option.Option<RateProvenance>>()
        if (wanted.length === 0) return result as ReadonlyMap<string, Option.Option<RateProvenance>>
        const invalid = wanted.find((date) => !isCalendarDate(date))
        if (invalid !== undefined) {
          return yield* Effect.dieMessage(`FxRates.ratesOn: not a date: ${JSON.stringify(invalid)}`)
        }
        const first = wanted[0]!
        const last = wanted[wanted.length - 1]!
        const code = otherCode(quote)
        const rows = yield* sql<{ day: string; source: FxSource; usd: string; other: string }>`
          SELECT day, source, per_eur->>'USD' AS usd, per_eur->>${code} AS other
          FROM fx_rates
          WHERE day <= ${last} AND per_eur ? 'USD' AND per_eur ? ${code}
            AND day >= coalesce(
              (SELECT max(day) FROM fx_rates WHERE day <= ${first} AND per_eur ? 'USD' AND per_eur ? ${code}),
              ${first}::date)
          ORDER BY day`
        const rateOfDay = new Map<string, string>()
        let i = -1
        for (const date of wanted) {
          while (i + 1 < rows.length && rows[i + 1]!.day <= date) i++
          const row = rows[i]
          if (row === undefined) {
            result.set(date, Option.none())
            continue
          }
          let rate = rateOfDay.get(row.day)
          if (rate === undefined) {
            rate = Option.getOrThrow(usdCrossRate(quote, { USD: row.usd, [code]: row.other }))
            rateOfDay.set(row.day, rate)
          }
          result.set(
            date,
            Option.some({ rate, source: row.source, rateDate: row.day, carriedForward: row.day !== date })
          )
        }
        return result as ReadonlyMap<string, Option.Option<RateProvenance>>
      })
    )

    /** Newest day, staleness against today's UTC date (from `Clock`), and the last load and refresh outcomes. */
    const status = Effect.fn("FxRates.status")((): Effect.Effect<FxStatus, SqlError> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const today = utcDateOf(now)
        const [row] = yield* sql<StatusDbRow>`
          SELECT (SELECT max(day) FROM fx_rates) AS newest_day, (SELECT count(*) FROM fx_rates) AS stored_days,
                 history_loaded_at, history_days, refresh_attempted_at, refresh_succeeded_at, refresh_source, refresh_error
          FROM fx_status`
        const newest = Option.fromNullable(row?.newest_day ?? null)
        const judged = staleness(newest, publicationDueDay(now))
        return {
          today,
          newestDay: Option.getOrNull(newest),
          stale: judged.stale,
          businessDaysBehind: Option.isNone(newest) ? null : judged.businessDaysBehind,
          storedDays: Number(row?.stored_days ?? 0),
          historyLoadedAt: row?.history_loaded_at ?? null,
          historyDays: row?.history_days ?? null,
          refreshAttemptedAt: row?.refresh_attempted_at ?? null,
          refreshSucceededAt: row?.refresh_succeeded_at ?? null,
          refreshSource: row?.refresh_source ?? null,
          refreshError: row?.refresh_error ?? null
        }
      })
    )

    const recordHistoryLoad = Effect.fn("FxRates.recordHistoryLoad")((at: Date, days: number) =>
      sql`UPDATE fx_status SET history_loaded_at = ${at}, history_days = ${days}`.pipe(Effect.asVoid)
    )

    const recordRefresh = Effect.fn("FxRates.recordRefresh")((at: Date, outcome: RefreshOutcome) =>
      (outcome.ok
        ? sql`
          UPDATE fx_status SET refresh_attempted_at = ${at}, refresh_succeeded_at = ${at},
                               refresh_source = ${outcome.source}, refresh_error = NULL`
        : sql`UPDATE fx_status SET refresh_attempted_at = ${at}, refresh_error = ${outcome.error}`).pipe(Effect.asVoid)
    )

    const storeError = (operation: string) => (cause: SqlError) => new FxStoreError({ operation, cause })

    /** The domain's `FxStore` seam over this table. */
    const store: FxStoreShape = {
      newestDay: () => Effect.mapError(newestDay(), storeError("newestDay")),
      upsert: (source, days) => upsert(source, days).pipe(Effect.asVoid, Effect.mapError(storeError("upsert"))),
      latestWith: (quote, onOrBefore) => Effect.mapError(latestWith(quote, onOrBefore), storeError("latestWith"))
    }

    return {
      newestDay,
      upsert,
      insertMissing,
      latestWith,
      earliestWith,
      countBetween,
      ratesOn,
      status,
      recordHistoryLoad,
      recordRefresh,
      store
    } as const
  })
}) {}

/** `FxStore` implemented on the database. */
export const FxStoreLive: Layer.Layer<FxStore, never, FxRates> = Layer.effect(
  FxStore,
  Effect.map(FxRates, (rates) => rates.store)
)
