import {
  type DeclaredDividend,
  EdgarError,
  type EdgarNotFound,
  EdgarSource,
  type EdgarSourceShape,
  edgarTicker,
  type Filing,
  type Issuer,
  parseCompanyTickers,
  parseDeclaredDividends,
  parseRecentFilings,
  withholdingFor
} from "@scaledger/domain/market/Edgar"
import type { Dividends, Filings } from "@scaledger/domain/MarketApi"
import { Clock, Context, Duration, Effect, Either, Fiber, FiberMap, Layer, Option } from "effect"
import { LedgerStore } from "../ledger/LedgerStore.js"
import { incomeEventsOf, positionsOf, settledLedger } from "./AccountLedger.js"
import { EdgarCache, type EdgarDocument, type EdgarDocumentKind } from "./EdgarCache.js"

type EdgarSourceOption = Option.Option<EdgarSourceShape>

interface Cached<A> {
  readonly value: A | null
  readonly fetchedAt: Date
  readonly stale: boolean
}

const DEFAULT_FILINGS_LIMIT = 50

/** At most this many filings are kept per issuer in the cache (the newest). */
const FILINGS_KEPT = 200

const oldest = (dates: ReadonlyArray<Date>): Date | null =>
  dates.length === 0 ? null : new Date(Math.min(...dates.map((d) => d.getTime())))

/** What the EDGAR reads are handed by the composition root (from the workers' `EDGAR_REFRESH_HOURS`). */
export interface EdgarReadsOptions {
  /** Cached documents older than this are fetched again. */
  readonly refreshInterval: Duration.DurationInput
  /**
   * How long a read waits for a document EDGAR is asked for (default 5 s): past it the read answers the stale copy
   * or `edgar_unavailable`, and the request goes on for the next read (EDGAR's retries can take minutes).
   */
  readonly readWait?: Duration.DurationInput | undefined
}

const DEFAULT_READ_WAIT = Duration.seconds(5)

/**
 * The EDGAR reads (`GET /v1/filings`, `GET /v1/dividends`, and the MCP tools `get_recent_filings`,
 * `get_dividend_history`): the cache first, EDGAR (the domain's `EdgarSource` port) when the cached document is
 * missing or older than the refresh interval, the stale copy when EDGAR fails. Without an `EdgarSource` in the
 * context (no `EDGAR_USER_AGENT`) nothing is requested and every answer says `edgar_not_configured`.
 */
export type EdgarReadsShape = Effect.Effect.Success<ReturnType<typeof makeEdgarReads>>

export class EdgarReads extends Context.Tag("@scaledger/db/market/EdgarReads")<EdgarReads, EdgarReadsShape>() {
  /** Reads through the `EdgarSource` in the context, if there is one; needs the database. */
  static readonly layer = (options: EdgarReadsOptions) =>
    Layer.scoped(
      EdgarReads,
      Effect.flatMap(
        Effect.serviceOption(EdgarSource),
        (source) => makeEdgarReads(source, options.refreshInterval, options.readWait)
      )
    ).pipe(Layer.provide([EdgarCache.Default, LedgerStore.Default]))

  /** With a given source (tests, embedders); `Option.none()` = not configured. */
  static readonly withSource = (
    source: EdgarSourceOption,
    refreshInterval: Duration.DurationInput = "24 hours",
    readWait?: Duration.DurationInput
  ) =>
    Layer.scoped(EdgarReads, makeEdgarReads(source, refreshInterval, readWait)).pipe(
      Layer.provide([EdgarCache.Default, LedgerStore.Default])
    )
}

/** How long a document EDGAR failed to give is not asked for again. */
const RETRY_AFTER_FAILURE_MS = 60_000
/** The most failed documents remembered (one per issuer and kind; cleared past it). */
const MAX_FAILURES_KEPT = 10_000

export const makeEdgarReads = (
  source: EdgarSourceOption,
  refreshInterval: Duration.DurationInput,
  readWait: Duration.DurationInput = DEFAULT_READ_WAIT
) =>
  Effect.gen(function*() {
    const cache = yield* EdgarCache
    const store = yield* LedgerStore
    const maxAgeMs = Duration.toMillis(refreshInterval)
    /** Requests to EDGAR in flight, one per document: reads that come meanwhile wait on the same one. */
    const inFlight = yield* FiberMap.make<string, Either.Either<EdgarDocument, EdgarError>, never>()

    /**
     * Documents EDGAR failed to give, until when they are not asked for again: a read during an outage answers at
     * once (the stale copy, or `edgar_unavailable`) instead of waiting out the retries of every request.
     */
    const failedUntil = new Map<string, { readonly until: number; readonly error: EdgarError }>()

    /**
     * A cached document, fetched (and stored) when missing or due; the stale copy when EDGAR fails. A read waits
     * `readWait` for EDGAR at most (the refresh, `wait: "all"`, as long as the request takes); the request goes on.
     */
    const document = <A>(
      kind: EdgarDocumentKind,
      cik: number,
      fetch: Effect.Effect<unknown, EdgarError | EdgarNotFound>,
      extract: (json: unknown) => A,
      wait: "read" | "all" = "read"
    ): Effect.Effect<Either.Either<Cached<A>, EdgarError>, never> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const cached = yield* Effect.orElseSucceed(cache.get(kind, cik), () => Option.none<EdgarDocument>())
        const asCached = (doc: EdgarDocument, stale: boolean): Cached<A> => ({
          value: doc.status === "ok" ? (doc.body as A) : null,
          fetchedAt: doc.fetchedAt,
          stale
        })
        if (Option.isSome(cached) && now - cached.value.fetchedAt.getTime() < maxAgeMs) {
          return Either.right(asCached(cached.value, false))
        }
        const key = `${kind}/${cik}`
        const failed = failedUntil.get(key)
        if (failed !== undefined && now < failed.until) {
          return Option.isSome(cached) ? Either.right(asCached(cached.value, true)) : Either.left(failed.error)
        }
        const load = Effect.gen(function*() {
          const fetched = yield* fetch.pipe(
            Effect.flatMap((json) =>
              Effect.try({
                try: () => ({ status: "ok" as const, body: extract(json) as unknown }),
                catch: (e) =>
                  new EdgarError({ reason: "parse", url: `${kind}/${cik}`, detail: String(e).slice(0, 300) })
              })
            ),
            Effect.catchTag("EdgarNotFound", () => Effect.succeed({ status: "not_found" as const, body: null })),
            Effect.either
          )
          if (Either.isLeft(fetched)) {
            yield* Effect.logWarning(`EDGAR ${kind} ${cik}: ${fetched.left.detail}`)
            if (failedUntil.size >= MAX_FAILURES_KEPT) failedUntil.clear()
            failedUntil.set(key, {
              until: (yield* Clock.currentTimeMillis) + RETRY_AFTER_FAILURE_MS,
              error: fetched.left
            })
            return Either.left(fetched.left) as Either.Either<EdgarDocument, EdgarError>
          }
          failedUntil.delete(key)
          const doc: EdgarDocument = {
            kind,
            cik,
            ...fetched.right,
            fetchedAt: new Date(yield* Clock.currentTimeMillis)
          }
          yield* Effect.ignoreLogged(cache.put(doc))
          return Either.right(doc) as Either.Either<EdgarDocument, EdgarError>
        })
        const running = yield* FiberMap.get(inFlight, key).pipe(
          Effect.catchTag("NoSuchElementException", () => FiberMap.run(inFlight, key, load))
        )
        const joined = wait === "all"
          ? Option.some(yield* Fiber.join(running))
          : yield* Effect.timeoutOption(Fiber.join(running), readWait)
        if (Option.isSome(joined) && Either.isRight(joined.value)) {
          return Either.right(asCached(joined.value.right, false))
        }
        const error = Option.isSome(joined) && Either.isLeft(joined.value)
          ? joined.value.left
          : new EdgarError({
            reason: "network",
            url: key,
            detail: `no answer from EDGAR within ${Duration.format(readWait)}; still asking`
          })
        return Option.isSome(cached) ? Either.right(asCached(cached.value, true)) : Either.left(error)
      })

    type TickerMap = Record<string, Issuer>
    const tickers = (edgar: EdgarSourceShape, wait: "read" | "all" = "read") =>
      document(
        "tickers",
        0,
        edgar.companyTickers(),
        (json): TickerMap => Object.fromEntries(parseCompanyTickers(json)),
        wait
      )

    const ageOf = (now: number, dates: ReadonlyArray<Date>) => {
      const at = oldest(dates)
      return {
        dataAsOf: at === null ? null : at.toISOString(),
        dataAgeSeconds: at === null ? null : Math.max(0, Math.floor((now - at.getTime()) / 1000))
      }
    }

    const heldSymbols = (accountId: string) =>
      Effect.gen(function*() {
        const positions = yield* positionsOf(store, accountId)
        const symbols = new Set<string>()
        for (const p of positions) if (p.raw !== "0") symbols.add(p.token.toUpperCase())
        return [...symbols].sort()
      })

    const filings = Effect.fn("EdgarReads.filings")((
      accountId: string,
      params: { readonly symbol?: string | undefined; readonly limit?: number | undefined }
    ) =>
      Effect.gen(function*() {
        yield* settledLedger(store, accountId)
        const symbols = params.symbol === undefined ? yield* heldSymbols(accountId) : [params.symbol.toUpperCase()]
        const limit = params.limit ?? DEFAULT_FILINGS_LIMIT
        const notConfigured = (status: Filings["status"]): Filings => ({
          status,
          dataAsOf: null,
          dataAgeSeconds: null,
          filings: null,
          issuers: symbols.map((symbol) => ({
            symbol,
            cik: null,
            name: null,
            status,
            stale: false,
            dataAsOf: null,
            dataAgeSeconds: null
          })),
          evidence: { accessionNumbers: [] }
        })
        if (Option.isNone(source)) return notConfigured("edgar_not_configured")
        const edgar = source.value
        if (symbols.length === 0) {
          return { ...notConfigured("no_holdings"), filings: [] }
        }
        const map = yield* tickers(edgar)
        if (Either.isLeft(map) || map.right.value === null) return notConfigured("edgar_unavailable")
        const tickerMap = map.right.value
        const now = yield* Clock.currentTimeMillis
        const used: Array<Date> = [map.right.fetchedAt]
        const issuers: Array<Filings["issuers"][number]> = []
        const all: Array<NonNullable<Filings["filings"]>[number]> = []
        for (const symbol of symbols) {
          const issuer = tickerMap[edgarTicker(symbol)]
          if (issuer === undefined) {
            issuers.push({
              symbol,
              cik: null,
              name: null,
              status: "unknown_ticker",
              stale: map.right.stale,
              ...ageOf(now, [map.right.fetchedAt])
            })
            continue
          }
          const doc = yield* document(
            "submissions",
            issuer.cik,
            edgar.submissions(issuer.cik),
            (json) => parseRecentFilings(json).filings.slice(0, FILINGS_KEPT)
          )
          if (Either.isLeft(doc)) {
            issuers.push({
              symbol,
              cik: issuer.cik,
              name: issuer.name,
              status: "edgar_unavailable",
              stale: false,
              dataAsOf: null,
              dataAgeSeconds: null
            })
            continue
          }
          used.push(doc.right.fetchedAt)
          issuers.push({
            symbol,
            cik: issuer.cik,
            name: issuer.name,
            status: "ok",
            stale: doc.right.stale || map.right.stale,
            ...ageOf(now, [doc.right.fetchedAt])
          })
          for (const filing of (doc.right.value ?? []) as ReadonlyArray<Filing>) {
            all.push({
              symbol,
              cik: issuer.cik,
              accessionNumber: filing.accessionNumber,
              form: filing.form,
              filingDate: filing.filingDate,
              reportDate: filing.reportDate,
              acceptedAt: filing.acceptedAt,
              description: filing.description,
              url: filing.primaryDocument === null
                ? null
                : edgar.documentUrl(issuer.cik, filing.accessionNumber, filing.primaryDocument)
            })
          }
        }
        all.sort((a, b) =>
          a.filingDate !== b.filingDate
            ? (a.filingDate < b.filingDate ? 1 : -1)
            : (b.acceptedAt ?? "").localeCompare(a.acceptedAt ?? "")
        )
        const shown = all.slice(0, limit)
        const anyOk = issuers.some((i) => i.status === "ok")
        const status: Filings["status"] = anyOk
          ? "ok"
          : issuers.every((i) => i.status === "unknown_ticker")
          ? "unknown_ticker"
          : "edgar_unavailable"
        return {
          status,
          ...ageOf(now, used),
          filings: anyOk ? shown : null,
          issuers,
          evidence: { accessionNumbers: shown.map((f) => f.accessionNumber) }
        } satisfies Filings
      })
    )

    const dividends = Effect.fn("EdgarReads.dividends")((accountId: string, symbolParam: string) =>
      Effect.gen(function*() {
        yield* settledLedger(store, accountId)
        const symbol = symbolParam.toUpperCase()
        const steps = yield* incomeEventsOf(store, accountId, symbol)
        const now = yield* Clock.currentTimeMillis
        const answer = (fields: {
          readonly status: Dividends["status"]
          readonly cik?: number | null
          readonly name?: string | null
          readonly concept?: string | null
          readonly stale?: boolean
          readonly used?: ReadonlyArray<Date>
          readonly declared?: ReadonlyArray<DeclaredDividend> | null
        }): Dividends => {
          const declared = fields.declared ?? null
          const withholding = steps.map((step) => {
            return {
              eventId: step.eventId,
              wallet: step.wallet,
              date: step.date,
              from: step.from,
              to: step.to,
              ...withholdingFor(step, declared)
            }
          })
          const used = fields.used ?? []
          return {
            symbol,
            status: fields.status,
            cik: fields.cik ?? null,
            name: fields.name ?? null,
            concept: fields.concept ?? null,
            stale: fields.stale ?? false,
            ...ageOf(now, used),
            dividends: declared === null
              ? null
              : declared.filter((d) => d.period === "quarter" || d.period === "annual"),
            withholding,
            evidence: {
              // The multiplier changes behind the steps, once each (a step lists each address it paid).
              eventIds: [...new Set(steps.map((s) => s.eventId))],
              accessionNumbers: declared === null ? [] : [...new Set(declared.map((d) => d.accessionNumber))]
            }
          }
        }
        if (Option.isNone(source)) return answer({ status: "edgar_not_configured" })
        const edgar = source.value
        const map = yield* tickers(edgar)
        if (Either.isLeft(map) || map.right.value === null) return answer({ status: "edgar_unavailable" })
        const issuer = map.right.value[edgarTicker(symbol)]
        if (issuer === undefined) {
          return answer({ status: "unknown_ticker", stale: map.right.stale, used: [map.right.fetchedAt] })
        }
        const doc = yield* document(
          "dividends",
          issuer.cik,
          edgar.companyFacts(issuer.cik),
          (json) => parseDeclaredDividends(json)
        )
        if (Either.isLeft(doc)) {
          return answer({ status: "edgar_unavailable", cik: issuer.cik, name: issuer.name })
        }
        const facts = doc.right.value as ReturnType<typeof parseDeclaredDividends>
        return answer({
          status: facts === null ? "no_dividend_data" : "ok",
          cik: issuer.cik,
          name: issuer.name,
          concept: facts?.concept ?? null,
          stale: doc.right.stale || map.right.stale,
          used: [map.right.fetchedAt, doc.right.fetchedAt],
          declared: facts?.dividends ?? null
        })
      })
    )

    /** Fetches again every cached document older than the refresh interval (the daily refresh). */
    const refreshDue = Effect.withSpan(
      Effect.gen(function*() {
        if (Option.isNone(source)) return 0
        const edgar = source.value
        const now = yield* Clock.currentTimeMillis
        const due = yield* cache.staleBefore(new Date(now - maxAgeMs), 500)
        for (const { cik, kind } of due) {
          if (kind === "tickers") yield* tickers(edgar, "all")
          else if (kind === "submissions") {
            yield* document(
              kind,
              cik,
              edgar.submissions(cik),
              (json) => parseRecentFilings(json).filings.slice(0, FILINGS_KEPT),
              "all"
            )
          } else yield* document(kind, cik, edgar.companyFacts(cik), (json) => parseDeclaredDividends(json), "all")
        }
        return due.length
      }),
      "EdgarReads.refreshDue"
    )

    return { filings, dividends, refreshDue, configured: Option.isSome(source) } as const
  })
