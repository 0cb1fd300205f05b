/**
 * SEC EDGAR: the port the service reads filings and XBRL facts through, and the pure parts (the JSON formats,
 * ticker → CIK, the columnar `filings.recent`, dividend facts deduplicated by period).
 *
 * Formats (DOMAIN.md §6): `company_tickers.json` = `{"0":{"cik_str":320193,"ticker":"AAPL","title":"Apple Inc."},…}`;
 * `submissions/CIK##########.json` has `filings.recent` as parallel arrays; `api/xbrl/companyfacts/CIK##########.json`
 * has `facts["us-gaap"][concept].units["USD/shares"]` = `[{ start, end, val, accn, fy, fp, form, filed, frame? }]`.
 */
import { BigNumber } from "bignumber.js"
import { Context, type Effect, Option, Schema } from "effect"
import { isCalendarDate } from "../CalendarDates.js"

export class EdgarError extends Schema.TaggedError<EdgarError>()("EdgarError", {
  reason: Schema.Literal("network", "http-status", "rate-limited", "parse"),
  url: Schema.String,
  status: Schema.optional(Schema.Number),
  detail: Schema.String
}) {}

/** A document EDGAR does not have (404): a ticker without XBRL facts, an unknown CIK. */
export class EdgarNotFound extends Schema.TaggedError<EdgarNotFound>()("EdgarNotFound", { url: Schema.String }) {}

/** The three EDGAR documents the service reads, as raw JSON (the cache stores them as received). */
export interface EdgarSourceShape {
  readonly companyTickers: () => Effect.Effect<unknown, EdgarError>
  readonly submissions: (cik: number) => Effect.Effect<unknown, EdgarError | EdgarNotFound>
  readonly companyFacts: (cik: number) => Effect.Effect<unknown, EdgarError | EdgarNotFound>
  /** The public URL of a filing's primary document (under the configured base). */
  readonly documentUrl: (cik: number, accessionNumber: string, primaryDocument: string) => string
}

/** Where EDGAR's documents come from: the SEC's hosts, a mirror, or a test server. */
export class EdgarSource extends Context.Tag("@scaledger/domain/market/EdgarSource")<EdgarSource, EdgarSourceShape>() {}

export const padCik = (cik: number): string => String(cik).padStart(10, "0")

/** EDGAR writes class shares with a dash (`BRK-B`); token lists sometimes with a dot. */
export const edgarTicker = (symbol: string): string => symbol.trim().toUpperCase().replace(/\./g, "-")

const TickerEntry = Schema.Struct({ cik_str: Schema.Number, ticker: Schema.String, title: Schema.String })
const CompanyTickers = Schema.Record({ key: Schema.String, value: TickerEntry })

export interface Issuer {
  readonly cik: number
  readonly ticker: string
  readonly name: string
}

/** `company_tickers.json` → ticker (upper case) → issuer. The first entry of a ticker wins. */
export const parseCompanyTickers = (json: unknown): ReadonlyMap<string, Issuer> => {
  const decoded = Schema.decodeUnknownSync(CompanyTickers)(json)
  const out = new Map<string, Issuer>()
  for (const entry of Object.values(decoded)) {
    const ticker = entry.ticker.toUpperCase()
    if (!out.has(ticker)) out.set(ticker, { cik: entry.cik_str, ticker, name: entry.title })
  }
  return out
}

const Column = Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Null))
const Submissions = Schema.Struct({
  name: Schema.optional(Schema.String),
  filings: Schema.Struct({
    recent: Schema.Struct({
      accessionNumber: Schema.Array(Schema.String),
      filingDate: Schema.Array(Schema.String),
      reportDate: Schema.optional(Column),
      acceptanceDateTime: Schema.optional(Column),
      form: Schema.Array(Schema.String),
      primaryDocument: Schema.optional(Column),
      primaryDocDescription: Schema.optional(Column)
    })
  })
})

export interface Filing {
  readonly accessionNumber: string
  readonly form: string
  readonly filingDate: string
  readonly reportDate: string | null
  readonly acceptedAt: string | null
  readonly primaryDocument: string | null
  readonly description: string | null
}

const textAt = (column: ReadonlyArray<string | number | null> | undefined, i: number): string | null => {
  const value = column?.[i]
  return value === undefined || value === null || value === "" ? null : String(value)
}

/** `filings.recent` (parallel arrays) → one record per filing, newest first (EDGAR's order, re-sorted to be sure). */
export const parseRecentFilings = (
  json: unknown
): { readonly name: string | null; readonly filings: Array<Filing> } => {
  const decoded = Schema.decodeUnknownSync(Submissions)(json)
  const recent = decoded.filings.recent
  const all: Array<Filing> = recent.accessionNumber.map((accessionNumber, i) => ({
    accessionNumber,
    form: recent.form[i] ?? "",
    filingDate: recent.filingDate[i] ?? "",
    reportDate: textAt(recent.reportDate, i),
    acceptedAt: textAt(recent.acceptanceDateTime, i),
    primaryDocument: textAt(recent.primaryDocument, i),
    description: textAt(recent.primaryDocDescription, i)
  }))
  // A filing without a YYYY-MM-DD filing date is no filing the API can show: left out, not a failed answer.
  const filings = all.filter((filing) => isCalendarDate(filing.filingDate))
  filings.sort((a, b) =>
    a.filingDate !== b.filingDate
      ? (a.filingDate < b.filingDate ? 1 : -1)
      : (b.acceptedAt ?? "").localeCompare(a.acceptedAt ?? "")
  )
  return { name: decoded.name ?? null, filings }
}

export const DIVIDEND_CONCEPT = "CommonStockDividendsPerShareDeclared"
export const DIVIDEND_FALLBACK_CONCEPT = "CommonStockDividendsPerShareCashPaid"

const FactRow = Schema.Struct({
  start: Schema.optional(Schema.String),
  end: Schema.String,
  val: Schema.Union(Schema.Number, Schema.String),
  accn: Schema.String,
  fy: Schema.optional(Schema.NullOr(Schema.Number)),
  fp: Schema.optional(Schema.NullOr(Schema.String)),
  form: Schema.String,
  filed: Schema.String,
  frame: Schema.optional(Schema.String)
})
type FactRow = typeof FactRow.Type
// Rows are checked one by one, and only for the concept read: a malformed row is left out (see `factRowOf`).
const Concept = Schema.Struct({ units: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown) }) })
const decodeFactRow = Schema.decodeUnknownOption(FactRow)

/** A row the answer can show (dates YYYY-MM-DD, a finite value), else none: one bad row does not fail the rest. */
const factRowOf = (input: unknown): FactRow | undefined => {
  const row = Option.getOrUndefined(decodeFactRow(input))
  if (row === undefined || row.start === undefined) return undefined
  if (!isCalendarDate(row.start) || !isCalendarDate(row.end) || !isCalendarDate(row.filed)) return undefined
  try {
    return new BigNumber(row.val).isFinite() ? row : undefined
  } catch {
    return undefined // BigNumber.DEBUG throws on a text that is no number
  }
}
const CompanyFacts = Schema.Struct({
  entityName: Schema.optional(Schema.String),
  facts: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Record({ key: Schema.String, value: Concept }) })
  )
})

export type PeriodKind = "quarter" | "half_year" | "nine_months" | "annual" | "other"

export interface DeclaredDividend {
  readonly start: string
  readonly end: string
  readonly period: PeriodKind
  /** USD per share, as the filing states it (a decimal string). */
  readonly perShare: string
  readonly form: string
  readonly filed: string
  readonly accessionNumber: string
  readonly fiscalYear: number | null
  readonly fiscalPeriod: string | null
}

const DAY_MS = 86_400_000

export const periodKind = (start: string, end: string): PeriodKind => {
  const days = Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS) + 1
  if (days >= 80 && days <= 100) return "quarter"
  if (days >= 170 && days <= 195) return "half_year"
  if (days >= 260 && days <= 285) return "nine_months"
  if (days >= 350 && days <= 380) return "annual"
  return "other"
}

/** XBRL numbers are JSON numbers: written back as the shortest decimal that round-trips, never via arithmetic. */
const decimalOf = (value: number | string): string => new BigNumber(value).toFixed()

/**
 * The declared dividends per share of a company-facts document: the primary concept, else the fallback; `null`
 * when neither is there (ETFs, foreign issuers). Rows are deduplicated by period (start, end): a 10-K repeats the
 * quarters of its year and of the year before, and adds the annual sum; the most recently filed value of a period
 * wins (an amendment restates). Oldest period first.
 */
export const parseDeclaredDividends = (
  json: unknown
): { readonly concept: string; readonly dividends: Array<DeclaredDividend> } | null => {
  const decoded = Schema.decodeUnknownSync(CompanyFacts)(json)
  const gaap = decoded.facts?.["us-gaap"]
  for (const concept of [DIVIDEND_CONCEPT, DIVIDEND_FALLBACK_CONCEPT]) {
    const rows = gaap?.[concept]?.units["USD/shares"]
    if (rows === undefined || rows.length === 0) continue
    const byPeriod = new Map<string, FactRow>()
    for (const input of rows) {
      const row = factRowOf(input)
      if (row === undefined) continue
      const key = `${row.start}/${row.end}`
      const seen = byPeriod.get(key)
      if (seen === undefined || row.filed > seen.filed || (row.filed === seen.filed && row.accn > seen.accn)) {
        byPeriod.set(key, row)
      }
    }
    const dividends = [...byPeriod.values()].map((row): DeclaredDividend => ({
      start: row.start!,
      end: row.end,
      period: periodKind(row.start!, row.end),
      perShare: decimalOf(row.val),
      form: row.form,
      filed: row.filed,
      accessionNumber: row.accn,
      fiscalYear: typeof row.fy === "number" && Number.isSafeInteger(row.fy) ? row.fy : null,
      fiscalPeriod: row.fp ?? null
    }))
    dividends.sort((a, b) => (a.start !== b.start ? (a.start < b.start ? -1 : 1) : a.end < b.end ? -1 : 1))
    return { concept, dividends }
  }
  return null
}

/**
 * The declared quarterly dividend a multiplier step on `date` reflects: the quarter whose period contains the date
 * (dividends are usually paid within the quarter they are declared in), else the latest quarter that ended in the
 * 200 days before it (the current quarter's figure is filed only after the quarter ends).
 */
export const declaredFor = (
  dividends: ReadonlyArray<DeclaredDividend>,
  date: string
): { readonly dividend: DeclaredDividend; readonly matchedBy: "containing_quarter" | "previous_quarter" } | null => {
  const quarters = dividends.filter((d) => d.period === "quarter")
  const containing = quarters.filter((d) => d.start <= date && date <= d.end)
  if (containing.length > 0) return { dividend: containing[containing.length - 1]!, matchedBy: "containing_quarter" }
  const floor = new Date(Date.parse(`${date}T00:00:00Z`) - 200 * DAY_MS).toISOString().slice(0, 10)
  const before = quarters.filter((d) => d.end < date && d.end >= floor)
  return before.length > 0 ? { dividend: before[before.length - 1]!, matchedBy: "previous_quarter" } : null
}

/**
 * The withholding a multiplier step implies: the step pays `(to / from − 1) × sharePrice` per share (the token
 * reinvests the net dividend), against `declared` per share gross. Rate = 1 − paid / declared, 4 decimals.
 */
export const impliedWithholding = (
  step: { readonly from: string; readonly to: string; readonly sharePriceUsd: string | null },
  declaredPerShare: string | null
): { readonly paidPerShare: string | null; readonly rate: string | null } => {
  if (step.sharePriceUsd === null) return { paidPerShare: null, rate: null }
  const paid = new BigNumber(step.to).div(step.from).minus(1).times(step.sharePriceUsd)
  const paidPerShare = paid.decimalPlaces(8, BigNumber.ROUND_HALF_EVEN).toFixed()
  if (declaredPerShare === null || new BigNumber(declaredPerShare).lte(0)) return { paidPerShare, rate: null }
  const rate = new BigNumber(1).minus(paid.div(declaredPerShare)).decimalPlaces(4, BigNumber.ROUND_HALF_EVEN)
  return { paidPerShare, rate: rate.toFixed() }
}

/** A dividend step's income per share beside the declared dividend it reflects (`null` where either is unknown). */
export interface WithholdingFigures {
  readonly sharePriceUsd: string | null
  readonly paidPerShare: string | null
  readonly declaredPerShare: string | null
  readonly declaredPeriod: { readonly start: string; readonly end: string } | null
  readonly matchedBy: "containing_quarter" | "previous_quarter" | null
  readonly impliedWithholdingRate: string | null
  /** The filing the declared figure comes from. */
  readonly accessionNumber: string | null
}

/**
 * The withholding estimate of one dividend step against the issuer's declared dividends (`null`: none known): the
 * one computation behind `GET /v1/dividends` and the income events.
 */
export const withholdingFor = (
  step: { readonly date: string; readonly from: string; readonly to: string; readonly sharePriceUsd: string | null },
  declared: ReadonlyArray<DeclaredDividend> | null
): WithholdingFigures => {
  const match = declared === null ? null : declaredFor(declared, step.date)
  const declaredPerShare = match?.dividend.perShare ?? null
  const implied = impliedWithholding(step, declaredPerShare)
  return {
    sharePriceUsd: step.sharePriceUsd,
    paidPerShare: implied.paidPerShare,
    declaredPerShare,
    declaredPeriod: match === null ? null : { start: match.dividend.start, end: match.dividend.end },
    matchedBy: match?.matchedBy ?? null,
    impliedWithholdingRate: implied.rate,
    accessionNumber: match?.dividend.accessionNumber ?? null
  }
}
