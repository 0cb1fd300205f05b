import { Schema } from "effect"
import { simpleRatio } from "../chain/MultiplierKind.js"
import type { Converted } from "../ledger/Convert.js"
import { formatWad, parseFixed } from "../ledger/Fixed.js"
import type { Disposal, IncomeEvent, Movement, Position, SplitEvent } from "../ledger/LedgerReport.js"
import type { MovementActivity } from "../ledger/StoredRows.js"
import { type Cell, headerLine, line, num } from "./Csv.js"

/** The export formats (`POST /v1/exports { format }`), `positions` when none is given. */
export const ExportFormat = Schema.Literal("positions", "activity", "multipliers", "gains", "taxtool")
export type ExportFormat = typeof ExportFormat.Type
export const EXPORT_FORMATS: ReadonlyArray<ExportFormat> = ExportFormat.literals
export const DEFAULT_EXPORT_FORMAT: ExportFormat = "positions"

export const isExportFormat = (value: string): value is ExportFormat =>
  (EXPORT_FORMATS as ReadonlyArray<string>).includes(value)

/** The provenance columns that follow every converted figure. */
export const PROVENANCE_COLUMNS = ["currency", "rate", "rate_source", "rate_date", "carried_forward"] as const

export const COLUMNS: Record<ExportFormat, ReadonlyArray<string>> = {
  positions: [
    "wallet",
    "wallet_label",
    "token",
    "balance",
    "multiplier",
    "multiplier_at_acquisition",
    "shares_equivalent",
    "cost_basis",
    "unreported_income",
    "encumbered",
    ...PROVENANCE_COLUMNS
  ],
  activity: [
    "date",
    "block",
    "tx_hash",
    "log_index",
    "event_id",
    "wallet",
    "wallet_label",
    "type",
    "token",
    "amount",
    "shares",
    "counterparty",
    "relationship",
    "classified_by",
    "needs_review",
    "taxable",
    "multiplier_from",
    "multiplier_to",
    "income",
    ...PROVENANCE_COLUMNS
  ],
  multipliers: ["token", "block", "date", "effective_at", "announced_at", "from", "to", "kind", "source"],
  gains: [
    "token",
    "wallet",
    "wallet_label",
    "acquired",
    "disposed",
    "shares",
    "proceeds",
    "cost_basis",
    "gain",
    "holding_period",
    "taxable",
    "disposal_event_id",
    ...PROVENANCE_COLUMNS
  ],
  // Koinly's universal format, in the order DECISIONS.md fixes (Koinly matches columns by name).
  taxtool: [
    "Date",
    "Sent Amount",
    "Sent Currency",
    "Received Amount",
    "Received Currency",
    "Label",
    "Fee Amount",
    "Fee Currency",
    "Net Worth Amount",
    "Net Worth Currency",
    "Description",
    "TxHash"
  ]
}

export const header = (format: ExportFormat): string => headerLine(COLUMNS[format])

/** Wallet labels by lowercase address (labels of deleted wallets are gone: an empty cell). */
export type Labels = ReadonlyMap<string, string>

const labelOf = (labels: Labels, address: string | null | undefined): Cell =>
  address === null || address === undefined ? null : labels.get(address.toLowerCase()) ?? null

const provenance = (converted: Converted | null | undefined, currency: string | null | undefined): Array<Cell> =>
  converted === null || converted === undefined
    ? [currency ?? null, null, null, null, null]
    : [converted.currency, num(converted.rate), converted.source, converted.rateDate, converted.carriedForward]

/** `YYYY-MM-DD HH:mm:ss` in UTC (Koinly's date form). */
export const koinlyDate = (unixSeconds: number): string =>
  new Date(unixSeconds * 1000).toISOString().slice(0, 19).replace("T", " ")

/**
 * A position. Its cost basis is the sum of its lots, each converted at the rate of its own acquisition date, so
 * there is no single rate: for USD the rate is the identity (`1`, `identity`), otherwise `rate_source` is
 * `per_lot` and the lots' own rates are in `GET /v1/basis` (and each disposal's in the `gains` export).
 */
export const positionLine = (row: Position, labels: Labels): string =>
  line([
    row.wallet,
    labelOf(labels, row.wallet),
    row.token,
    num(row.balance),
    num(row.multiplier.at),
    num(row.multiplier.from),
    num(row.sharesEquivalent),
    num(row.costBasisConverted),
    num(row.unreportedIncomeConverted),
    num(row.encumbered),
    row.currency,
    row.currency === "USD" ? num("1") : null,
    row.currency === "USD" ? "identity" : "per_lot",
    null,
    row.currency === "USD" ? false : null
  ])

export type EventRow = Movement | IncomeEvent | SplitEvent

/** An event row as the activity file reads it: a movement needs no more than `MovementActivity`. */
export type ActivityRow = MovementActivity | IncomeEvent | SplitEvent

const sub = (a: string, b: string): string => formatWad(parseFixed(a, 18) - parseFixed(b, 18))

/** Shares a multiplier step added (negative for a reverse split). */
const splitShares = (row: SplitEvent): string => sub(row.sharesAfter, row.sharesBefore)

/**
 * One event of the record. Movements: `amount` tokens (raw / 1e18) and `shares` (raw × multiplier at that block).
 * Income and splits (no wallet transaction): `amount` is the balance the step applied to, `shares` the shares it
 * added; they have no classification, so `counterparty`, `relationship` and `classified_by` are empty.
 */
export const activityLine = (row: ActivityRow, labels: Labels): string => {
  switch (row.type) {
    case "income.multiplier_increase":
      return line([
        row.date,
        num(row.block),
        null,
        null,
        row.id,
        row.wallet,
        labelOf(labels, row.wallet),
        row.type,
        row.token,
        num(row.rawBalance),
        num(row.addedShares),
        null,
        null,
        null,
        row.needsReview,
        row.taxable,
        num(row.from),
        num(row.to),
        num(row.income?.amount),
        ...provenance(row.income, row.currency)
      ])
    case "split":
      return line([
        row.date,
        num(row.block),
        null,
        null,
        row.id,
        row.wallet,
        labelOf(labels, row.wallet),
        row.type,
        row.token,
        num(row.rawBalance),
        num(splitShares(row)),
        null,
        null,
        null,
        false,
        row.taxable,
        num(row.from),
        num(row.to),
        null,
        null,
        null,
        null,
        null,
        null
      ])
    default:
      return line([
        row.date,
        num(row.walletTransaction.block),
        row.walletTransaction.txHash,
        num(row.walletTransaction.logIndex),
        row.id,
        row.wallet,
        labelOf(labels, row.wallet),
        row.type,
        row.token,
        num(row.qty),
        num(row.shares),
        row.counterparty,
        row.relationship,
        row.classifiedBy,
        row.needsReview,
        row.taxable,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null
      ])
  }
}

/** A stored multiplier change (chain data): multipliers as raw 18-decimal integers. */
export interface MultiplierChangeRow {
  readonly token: string
  readonly block: string | number | null
  readonly blockTime: Date | null
  readonly effectiveAt: Date
  readonly announcedAt: Date | null
  readonly oldMultiplier: string
  readonly newMultiplier: string
  readonly kind: string
  readonly source: string | null
}

export const multiplierLine = (row: MultiplierChangeRow): string =>
  line([
    row.token,
    num(row.block),
    row.blockTime === null ? null : row.blockTime.toISOString().slice(0, 10),
    row.effectiveAt.toISOString(),
    row.announcedAt?.toISOString() ?? null,
    num(formatWad(BigInt(row.oldMultiplier))),
    num(formatWad(BigInt(row.newMultiplier))),
    row.kind,
    row.source ?? "event_log"
  ])

/** One matched lot slice of a disposal; the provenance is the proceeds' rate (the disposal's date). */
export const gainLine = (row: Disposal, labels: Labels): string =>
  line([
    row.token,
    row.wallet,
    labelOf(labels, row.wallet),
    row.acquired,
    row.date,
    num(row.shares),
    num(row.proceeds?.amount),
    num(row.basis),
    num(row.gain),
    row.holdingPeriod,
    row.taxable,
    row.eventId,
    ...provenance(row.proceeds, row.currency)
  ])

/** Movements that change no ownership: left out of the tax tool's file. */
const NOT_FOR_TAX_TOOL: ReadonlySet<string> = new Set([
  "self_transfer",
  "collateral_post",
  "collateral_withdraw",
  "bridge_out",
  "bridge_in"
])

const splitDescription = (row: SplitEvent): string => {
  const ratio = simpleRatio(parseFixed(row.from, 18), parseFixed(row.to, 18))
  // New shares to old, as a simple ratio is written (`split 4:1` for 1 → 4).
  return ratio === undefined ? `split ${row.to}:${row.from}` : `split ${ratio.numerator}:${ratio.denominator}`
}

const isZero = (amount: string): boolean => parseFixed(amount.startsWith("-") ? amount.slice(1) : amount, 18) === 0n

/** Whether a movement goes in Koinly's file: it changes ownership, and of a count of shares above 0. */
const forTaxTool = (row: Movement): boolean => !NOT_FOR_TAX_TOOL.has(row.treatment) && !isZero(row.shares)

/** A movement's Net Worth: unknown for a label only a model suggested (its value is no tax figure until confirmed). */
const netWorth = (row: Movement): Converted | null =>
  row.nullReasons.some((r) => r.reason === "unconfirmed_label") ? null : row.value

/**
 * One event in Koinly's universal format, or null when it is left out: self-transfers and other movements between
 * own places, and events of no share at all (a transfer of 0, a dividend step on a balance too small to add a
 * share unit: Koinly's amounts are positive). Amounts are shares; the currency is the token's symbol; `currency` is
 * the reporting currency (a split's Net Worth `0`). A swap's two sides are one row when written by `TaxtoolRows`.
 */
export const taxtoolLine = (row: EventRow, currency: string): string | null => {
  switch (row.type) {
    case "income.multiplier_increase":
      if (isZero(row.addedShares)) return null
      return line([
        koinlyDate(row.effectiveAt),
        null,
        null,
        num(row.addedShares),
        row.token,
        "income",
        null,
        null,
        num(row.income?.amount),
        row.income === null || row.income === undefined ? null : row.income.currency,
        row.needsReview ? "needs review" : `multiplier ${row.from} to ${row.to}`,
        null
      ])
    case "split": {
      const added = splitShares(row)
      if (isZero(added)) return null
      const reverse = added.startsWith("-")
      const amount = reverse ? added.slice(1) : added
      return line([
        koinlyDate(row.effectiveAt),
        reverse ? num(amount) : null,
        reverse ? row.token : null,
        reverse ? null : num(amount),
        reverse ? null : row.token,
        null,
        null,
        null,
        num("0"),
        currency,
        splitDescription(row),
        null
      ])
    }
    default: {
      // By what the ledger did with it: a self-transfer only a model suggested is counted as the movement out (in).
      if (!forTaxTool(row)) return null
      const received = row.direction === "in"
      const worth = netWorth(row)
      return line([
        koinlyDate(row.timestamp),
        received ? null : num(row.shares),
        received ? null : row.token,
        received ? num(row.shares) : null,
        received ? row.token : null,
        null,
        null,
        null,
        num(worth?.amount),
        worth?.currency ?? null,
        row.needsReview ? "needs review" : row.type,
        row.walletTransaction.txHash
      ])
    }
  }
}

/** A swap's two sides as one Koinly trade: Sent and Received both filled, worth what was given (else what came). */
const tradeLine = (sent: Movement, received: Movement): string => {
  const worth = netWorth(sent) ?? netWorth(received)
  return line([
    koinlyDate(sent.timestamp),
    num(sent.shares),
    sent.token,
    num(received.shares),
    received.token,
    null,
    null,
    null,
    num(worth?.amount),
    worth?.currency ?? null,
    sent.needsReview || received.needsReview ? "needs review" : "swap",
    sent.walletTransaction.txHash
  ])
}

/**
 * Koinly's rows of events given in chain order (`add`, then `end`): each event's `taxtoolLine`, except that a swap's
 * two sides (one token sent and another received by the same address in one transaction) are one trade row, as
 * Koinly reads a trade (DOMAIN.md: "a trade both"). A transaction's events are consecutive in chain order, so a
 * swap side waits for its other side only until an event of another transaction, then is written alone.
 */
export class TaxtoolRows {
  private tx: string | null = null
  private waiting: Array<Movement> = []

  constructor(private readonly currency: string) {}

  /** The lines that `row` completes (none while a swap side waits for its other side). */
  add(row: EventRow): Array<string> {
    const tx = row.type === "income.multiplier_increase" || row.type === "split" ? null : row.walletTransaction.txHash
    const lines = tx === this.tx ? [] : this.end()
    this.tx = tx
    if (row.type === "swap" && (row.direction === "in" || row.direction === "out") && forTaxTool(row)) {
      const other = this.waiting.findIndex((side) =>
        side.wallet === row.wallet && side.direction !== row.direction && side.tokenAddress !== row.tokenAddress
      )
      if (other === -1) {
        this.waiting.push(row)
        return lines
      }
      const [side] = this.waiting.splice(other, 1)
      lines.push(row.direction === "out" ? tradeLine(row, side!) : tradeLine(side!, row))
      return lines
    }
    const written = taxtoolLine(row, this.currency)
    if (written !== null) lines.push(written)
    return lines
  }

  /** The swap sides still waiting, each written alone. */
  end(): Array<string> {
    const lines = this.waiting.map((side) => taxtoolLine(side, this.currency)!)
    this.waiting = []
    this.tx = null
    return lines
  }
}

/** `scaledger-<format>-<YYYY-MM-DD>.csv`, dated the day the export was made (UTC). */
export const exportFileName = (format: ExportFormat, createdAt: Date): string =>
  `scaledger-${format}-${createdAt.toISOString().slice(0, 10)}.csv`
