import { Ledger } from "@scaledger/domain/ledger/index"
import { isCompact, PageEncoder, type PageKind, PageReader, type PageRow } from "@scaledger/domain/ledger/StoredPage"
import type { StoredRow } from "@scaledger/domain/ledger/StoredRows"
import { Utf8Buffer } from "../Utf8Buffer.js"

/**
 * How a build's event and disposal rows are stored: in pages of up to `PAGE_ROWS` rows in chain order, one table
 * row per page (`ledger_event_pages`, `ledger_disposal_pages`), instead of one table row per record. A page's rows
 * are text in the form of `StoredPage` (a line of JSON per row, then the values its rows share, once). Beside them a
 * page keeps what reads use to skip it: its days, its tokens (upper case), its event types, and the rows in it that need review
 * (with their counterparty, so review counts need no rows).
 *
 * A full build of 100k events writes about 100 pages rather than 130,000 rows with their indexes.
 */

/** Rows per page. */
export const PAGE_ROWS = 1_000

/** An event row as a build gives it to the store, and as reads find it: its filter fields, and the row. */
export interface EventRecord {
  readonly id: string
  readonly type: string
  readonly token: string
  readonly day: string
  readonly needsReview: boolean
  readonly row: unknown
}

/** A disposal row as a build gives it to the store, and as reads find it. */
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

/** An event row as read: a compact movement's filter fields from its figures, a row stored whole's as stored. */
const eventRecordOf = ({ keys, row }: PageRow): EventRecord => {
  if (keys === undefined) {
    const { day, id, needsReview, token, type } = Ledger.storedMovementKeys(row as StoredRow)
    return { id, type, token, day, needsReview, row }
  }
  const [id, type, token, day, needsReview] = keys as readonly [string, string, string, string, 0 | 1]
  return { id, type, token, day, needsReview: needsReview === 1, row }
}

const disposalRecordOf = ({ keys, row }: PageRow): DisposalRecord => {
  if (keys === undefined) return { ...Ledger.storedDisposalKeys(row as StoredRow), row }
  const [token, day] = keys as readonly [string, string]
  return { token, day, row }
}

/** The rows of a stored page in order, each parsed when asked for (`at`, or in turn). */
export class StoredRecords<A> implements Iterable<A> {
  private readonly reader: PageReader

  constructor(kind: PageKind, text: string, private readonly recordOf: (row: PageRow) => A) {
    this.reader = new PageReader(kind, text)
  }

  get length(): number {
    return this.reader.length
  }

  at(i: number): A {
    return this.recordOf(this.reader.row(i))
  }

  *[Symbol.iterator](): Iterator<A> {
    for (let i = 0; i < this.reader.length; i++) yield this.at(i)
  }
}

/** The event rows of a stored page (its `lines`). */
export const eventRecords = (text: string): StoredRecords<EventRecord> =>
  new StoredRecords("events", text, eventRecordOf)

/** The disposal rows of a stored page (its `lines`). */
export const disposalRecords = (text: string): StoredRecords<DisposalRecord> =>
  new StoredRecords("disposals", text, disposalRecordOf)

/** A page to write: its first row's position, its rows and what reads skip it by. */
export interface Page {
  readonly firstOrd: number
  readonly count: number
  readonly firstDay: string
  readonly lastDay: string
  /** Upper case. */
  readonly tokens: ReadonlyArray<string>
  readonly types: ReadonlyArray<string>
  readonly review: ReadonlyArray<ReviewEntry>
  /** Its rows' document (`StoredPage`) as UTF-8. */
  readonly text: Uint8Array
}

/** Gathers rows into a page, with its summary. */
export class PageBuilder {
  private readonly encoder: PageEncoder
  private readonly text = new Utf8Buffer()
  private count = 0
  private firstDay = ""
  private lastDay = ""
  private readonly tokens = new Set<string>()
  private readonly types = new Set<string>()
  private review: Array<ReviewEntry> = []

  constructor(kind: PageKind, private firstOrd: number) {
    this.encoder = new PageEncoder(kind)
  }

  get size(): number {
    return this.count
  }

  private add(line: string, day: string, token: string, type: string | null, review: ReviewEntry | null): void {
    this.text.write(line)
    if (this.count === 0 || day < this.firstDay) this.firstDay = day
    if (this.count === 0 || day > this.lastDay) this.lastDay = day
    this.count++
    this.tokens.add(token.toUpperCase())
    if (type !== null) this.types.add(type)
    if (review !== null) this.review.push(review)
  }

  addEvent(event: EventRecord): void {
    const { day, id, needsReview, row, token, type } = event
    this.add(
      isCompact(row, "events")
        ? this.encoder.compact(row)
        : this.encoder.whole(row, [id, type, token, day, needsReview ? 1 : 0]),
      day,
      token,
      type,
      needsReview ? [id, type, token, day, counterpartyOf(row)] : null
    )
  }

  addDisposal(disposal: DisposalRecord): void {
    const { day, row, token } = disposal
    this.add(
      isCompact(row, "disposals") ? this.encoder.compact(row) : this.encoder.whole(row, [token, day]),
      day,
      token,
      null,
      null
    )
  }

  private finish(): Uint8Array {
    this.text.write(this.encoder.end())
    return this.text.take()
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
      text: this.finish()
    }
    this.firstOrd += this.count
    this.count = 0
    this.tokens.clear()
    this.types.clear()
    this.review = []
    return page
  }
}
