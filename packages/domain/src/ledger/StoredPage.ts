/**
 * A page of stored event or disposal rows (`StoredRows`) as text: one line of JSON per row (its entry), then a last
 * line `{"f":2,"d":[…]}`, the page's format and its dictionary. What rows repeat (their addresses, names,
 * multipliers, rate quotes and price rounds) is in the dictionary `d` once; a compact row's entry is its positional
 * array with those values replaced by their index in `d`, then the indexes of its wallet, counterparty and token
 * address. A row stored whole (an income or split row) is an entry `{"r": row, "k": keys}`, with the keys its writer
 * gave (what a compact row's figures say of it). JSON escapes line breaks, so every line is a whole entry: a row is
 * written as it is made and parsed only when read, so neither waits in memory for the rest of its page.
 */
import type { StoredRow } from "./StoredRows.js"

/** The format `f` of a page written by this module. */
export const PAGE_FORMAT = 2

/** The positions of a stored movement's `v` (see `storedMovement`) that rows share: names, multiplier, quote, price. */
const MOVEMENT_SHARED = [1, 2, 3, 7, 8, 9, 11, 13, 15, 16] as const
const MOVEMENT_LENGTH = 23
/** The same of a stored disposal's `v` (see `storedDisposal`); its basis components' quotes and prices too. */
const DISPOSAL_SHARED = [2, 3, 6, 10, 14, 15, 19] as const
const DISPOSAL_LENGTH = 24
const DISPOSAL_COMPONENTS = 16
/** A stored component `[kind, event id, time, USD, quote, price]`; a span of steps is `[from, to]`. */
const COMPONENT_LENGTH = 6
const COMPONENT_SHARED = [4, 5] as const

export type PageKind = "events" | "disposals"

/** Whether a row is stored compactly (a `StoredRow` of the page's kind); any other row is stored whole, with its keys. */
export const isCompact = (row: unknown, kind: PageKind): row is StoredRow => {
  const v = typeof row === "object" && row !== null ? (row as { v?: unknown }).v : undefined
  return Array.isArray(v) && v.length === (kind === "events" ? MOVEMENT_LENGTH : DISPOSAL_LENGTH)
}

/** Writes rows into a page as they come: `compact` and `whole` give a row's line, `end` the page's last line. */
export class PageEncoder {
  private dictionary: Array<unknown> = []
  private readonly index = new Map<unknown, number>()
  private count = 0

  constructor(private readonly kind: PageKind) {}

  get size(): number {
    return this.count
  }

  /** The index of `value` in the dictionary (strings by their text, arrays by identity: `StoredRows` shares them). */
  private ref(value: unknown): number {
    let i = this.index.get(value)
    if (i === undefined) {
      i = this.dictionary.length
      this.dictionary.push(value)
      this.index.set(value, i)
    }
    return i
  }

  /** A compact row's line (`isCompact`), with its line break. */
  compact(row: StoredRow): string {
    const v = row.v
    const entry = new Array<unknown>(v.length + 3)
    for (let i = 0; i < v.length; i++) entry[i] = v[i]
    for (const p of this.kind === "events" ? MOVEMENT_SHARED : DISPOSAL_SHARED) entry[p] = this.ref(v[p])
    if (this.kind === "disposals") {
      entry[DISPOSAL_COMPONENTS] = (v[DISPOSAL_COMPONENTS] as ReadonlyArray<ReadonlyArray<unknown>>).map((part) => {
        if (part.length !== COMPONENT_LENGTH) return part
        const coded = [...part]
        for (const p of COMPONENT_SHARED) coded[p] = this.ref(part[p])
        return coded
      })
    }
    entry[v.length] = this.ref(row.wallet)
    entry[v.length + 1] = this.ref(row.counterparty)
    entry[v.length + 2] = this.ref(row.tokenAddress)
    this.count++
    return `${JSON.stringify(entry)}\n`
  }

  /** The line of a row stored whole, with the keys it is read by. */
  whole(row: unknown, keys: unknown): string {
    this.count++
    return `${JSON.stringify({ r: row, k: keys })}\n`
  }

  /** The page's last line, and an empty encoder for the rows after it. */
  end(): string {
    const text = `{"f":${PAGE_FORMAT},"d":${JSON.stringify(this.dictionary)}}`
    this.dictionary = []
    this.index.clear()
    this.count = 0
    return text
  }
}

/** A row of a page as it was given, with the keys kept beside it (undefined for a compact row). */
export interface PageRow {
  readonly row: unknown
  readonly keys: unknown
}

/** A stored page's rows (compact rows as `StoredRow`s), each parsed when asked for. */
export class PageReader {
  private readonly lines: Array<string>
  private readonly dictionary: ReadonlyArray<unknown>

  constructor(private readonly kind: PageKind, text: string) {
    const last = text.lastIndexOf("\n")
    const trailer = JSON.parse(text.slice(last + 1)) as { readonly f: number; readonly d: ReadonlyArray<unknown> }
    if (trailer.f !== PAGE_FORMAT) throw new Error(`a stored page of format ${trailer.f}, not ${PAGE_FORMAT}`)
    this.dictionary = trailer.d
    this.lines = last <= 0 ? [] : text.slice(0, last).split("\n")
  }

  get length(): number {
    return this.lines.length
  }

  /** The `i`-th row. */
  row(i: number): PageRow {
    const entry = JSON.parse(this.lines[i]!) as unknown
    if (!Array.isArray(entry)) {
      const whole = entry as { readonly r: unknown; readonly k: unknown }
      return { row: whole.r, keys: whole.k }
    }
    const d = this.dictionary
    const n = entry.length - 3
    const v = entry.slice(0, n)
    for (const p of this.kind === "events" ? MOVEMENT_SHARED : DISPOSAL_SHARED) v[p] = d[v[p] as number]
    if (this.kind === "disposals") {
      for (const part of v[DISPOSAL_COMPONENTS] as Array<Array<unknown>>) {
        if (part.length === COMPONENT_LENGTH) { for (const p of COMPONENT_SHARED) part[p] = d[part[p] as number] }
      }
    }
    const row: StoredRow = {
      wallet: d[entry[n] as number] as string,
      counterparty: d[entry[n + 1] as number] as string,
      tokenAddress: d[entry[n + 2] as number] as string,
      v
    }
    return { row, keys: undefined }
  }
}
