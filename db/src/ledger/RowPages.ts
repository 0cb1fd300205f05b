import { Utf8Buffer } from "../Utf8Buffer.js"

/**
 * How a build's event and disposal rows are stored: in pages of up to `PAGE_ROWS` rows in chain order, one table
 * row per page (`ledger_event_pages`, `ledger_disposal_pages`), instead of one table row per record. A page's rows
 * are lines of text; each line starts with the fields reads filter on, separated by `\x1f`, and ends with the row's
 * JSON. Neither separator can occur in a field: JSON escapes control characters, and the text fields are written
 * as JSON strings. Beside its lines a page keeps what reads use to skip it: its days, its tokens (upper case), its
 * event types, and the rows in it that need review (with their counterparty, so review counts need no lines).
 *
 * A full build of 100k events writes about 100 pages rather than 130,000 rows with their indexes.
 */

/** Rows per page. */
export const PAGE_ROWS = 1_000

const FIELD = "\x1f"
const LINE = "\n"
const NEWLINE = 0x0a

/** An event row as a build gives it to the store. */
export interface EventRecord {
  readonly id: string
  readonly type: string
  readonly token: string
  readonly day: string
  readonly needsReview: boolean
  readonly row: unknown
}

/** A disposal row as a build gives it to the store. */
export interface DisposalRecord {
  readonly token: string
  readonly day: string
  readonly row: unknown
}

/** A row of a page needing review, as the page's `review` column lists it: [id, type, token, day, counterparty]. */
export type ReviewEntry = readonly [string, string, string, string, string | null]

const counterpartyOf = (row: unknown): string | null => {
  const counterparty = (row as { counterparty?: unknown } | null)?.counterparty
  return typeof counterparty === "string" ? counterparty : null
}

export const eventLine = (event: EventRecord): string =>
  JSON.stringify(event.id) + FIELD + event.type + FIELD + JSON.stringify(event.token) + FIELD + event.day + FIELD +
  (event.needsReview ? "1" : "0") + FIELD + JSON.stringify(event.row)

export const disposalLine = (disposal: DisposalRecord): string =>
  JSON.stringify(disposal.token) + FIELD + disposal.day + FIELD + JSON.stringify(disposal.row)

/** An event line's filter fields, without parsing its row. */
export interface EventLine {
  readonly id: string
  readonly type: string
  readonly token: string
  readonly day: string
  readonly needsReview: boolean
  /** The row's JSON. */
  readonly json: string
}

export const readEventLine = (line: string): EventLine => {
  const f = line.split(FIELD, 5)
  const rest = f[0]!.length + f[1]!.length + f[2]!.length + f[3]!.length + f[4]!.length + 5
  return {
    id: JSON.parse(f[0]!) as string,
    type: f[1]!,
    token: JSON.parse(f[2]!) as string,
    day: f[3]!,
    needsReview: f[4] === "1",
    json: line.slice(rest)
  }
}

export interface DisposalLine {
  readonly token: string
  readonly day: string
  readonly json: string
}

export const readDisposalLine = (line: string): DisposalLine => {
  const f = line.split(FIELD, 2)
  return { token: JSON.parse(f[0]!) as string, day: f[1]!, json: line.slice(f[0]!.length + f[1]!.length + 2) }
}

/** A page's lines (a page holds at least one). */
export const linesOf = (text: string): Array<string> => text.split(LINE)

/** A page to write: its first row's position, its lines and what reads skip it by. */
export interface Page {
  readonly firstOrd: number
  readonly count: number
  readonly firstDay: string
  readonly lastDay: string
  /** Upper case. */
  readonly tokens: ReadonlyArray<string>
  readonly types: ReadonlyArray<string>
  readonly review: ReadonlyArray<ReviewEntry>
  /** Its lines as UTF-8. */
  readonly text: Uint8Array
}

/** Gathers lines into a page, with its summary. */
export class PageBuilder {
  private readonly text = new Utf8Buffer()
  private count = 0
  private firstDay = ""
  private lastDay = ""
  private readonly tokens = new Set<string>()
  private readonly types = new Set<string>()
  private review: Array<ReviewEntry> = []

  constructor(private firstOrd: number) {}

  /** A builder going on from a stored page, kept whole. */
  static resume(page: Omit<Page, "text">, text: string): PageBuilder {
    const builder = new PageBuilder(page.firstOrd)
    builder.text.write(text)
    builder.count = page.count
    builder.firstDay = page.firstDay
    builder.lastDay = page.lastDay
    for (const token of page.tokens) builder.tokens.add(token)
    for (const type of page.types) builder.types.add(type)
    builder.review = [...page.review]
    return builder
  }

  get size(): number {
    return this.count
  }

  add(line: string, day: string, token: string, type: string | null, review: ReviewEntry | null): void {
    if (this.count > 0) this.text.writeByte(NEWLINE)
    this.text.write(line)
    if (this.count === 0 || day < this.firstDay) this.firstDay = day
    if (this.count === 0 || day > this.lastDay) this.lastDay = day
    this.count++
    this.tokens.add(token.toUpperCase())
    if (type !== null) this.types.add(type)
    if (review !== null) this.review.push(review)
  }

  addEvent(event: EventRecord): void {
    this.add(
      eventLine(event),
      event.day,
      event.token,
      event.type,
      event.needsReview ? [event.id, event.type, event.token, event.day, counterpartyOf(event.row)] : null
    )
  }

  /** A stored event line, kept as it is. */
  addEventLine(line: string): void {
    const e = readEventLine(line)
    this.add(
      line,
      e.day,
      e.token,
      e.type,
      e.needsReview ? [e.id, e.type, e.token, e.day, counterpartyOf(JSON.parse(e.json))] : null
    )
  }

  addDisposal(disposal: DisposalRecord): void {
    this.add(disposalLine(disposal), disposal.day, disposal.token, null, null)
  }

  addDisposalLine(line: string): void {
    const d = readDisposalLine(line)
    this.add(line, d.day, d.token, null, null)
  }

  /** Gives back the memory of a page `take` handed over, once its statement has run (see `Utf8Buffer.recycle`). */
  recycle(page: Page): void {
    this.text.recycle(page.text)
  }

  /** The page made so far, and an empty builder for the rows after it. */
  take(): Page {
    const page: Page = {
      firstOrd: this.firstOrd,
      count: this.count,
      firstDay: this.firstDay,
      lastDay: this.lastDay,
      tokens: [...this.tokens],
      types: [...this.types],
      review: this.review,
      text: this.text.take()
    }
    this.firstOrd += this.count
    this.count = 0
    this.tokens.clear()
    this.types.clear()
    this.review = []
    return page
  }
}
