/**
 * A page of stored event or disposal rows (`StoredRows`) as one JSON document: `{"f":2,"e":[…],"d":[…]}`. What rows
 * repeat (their addresses, names, multipliers, rate quotes and price rounds) is in the page's dictionary `d` once; a
 * compact row's entry in `e` is its positional array with those values replaced by their index in `d`, then the
 * indexes of its wallet, counterparty and token address. A row stored whole (an income or split row) is an entry
 * `{"r": row, "k": keys}`, with the keys its writer gave (what a compact row's figures say of it). A page is read
 * with one `JSON.parse`.
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

/**
 * Writes rows into a page's document as they come: `add` gives the text that follows the page so far (each row's
 * entry is written at once, so rows do not wait in memory for their page), `end` the text that closes it, with the
 * dictionary.
 */
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

  private entry(row: unknown, keys: unknown): unknown {
    if (!isCompact(row, this.kind)) return { r: row, k: keys }
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
    return entry
  }

  /** The text a row adds to the page; `keys` are kept beside a row stored whole. */
  add(row: unknown, keys: unknown): string {
    const json = JSON.stringify(this.entry(row, keys))
    return this.count++ === 0 ? `{"f":${PAGE_FORMAT},"e":[${json}` : `,${json}`
  }

  /** The text that ends the page (a page holds at least one row), and an empty encoder for the rows after it. */
  end(): string {
    const text = `],"d":${JSON.stringify(this.dictionary)}}`
    this.dictionary = []
    this.index.clear()
    this.count = 0
    return text
  }
}

/** A row of a page as `add` was given it, with the keys kept beside it (undefined for a compact row). */
export interface PageRow {
  readonly row: unknown
  readonly keys: unknown
}

/** A page's rows in order (compact rows as `StoredRow`s). */
export const decodePage = (kind: PageKind, text: string): Array<PageRow> => {
  const page = JSON.parse(text) as {
    readonly f: number
    readonly d: ReadonlyArray<unknown>
    readonly e: Array<unknown>
  }
  if (page.f !== PAGE_FORMAT) throw new Error(`a stored page of format ${page.f}, not ${PAGE_FORMAT}`)
  const d = page.d
  return page.e.map((entry): PageRow => {
    if (!Array.isArray(entry)) {
      const whole = entry as { readonly r: unknown; readonly k: unknown }
      return { row: whole.r, keys: whole.k }
    }
    const n = entry.length - 3
    const v = entry.slice(0, n)
    for (const p of kind === "events" ? MOVEMENT_SHARED : DISPOSAL_SHARED) v[p] = d[v[p] as number]
    if (kind === "disposals") {
      v[DISPOSAL_COMPONENTS] = (v[DISPOSAL_COMPONENTS] as Array<Array<unknown>>).map((part) => {
        if (part.length !== COMPONENT_LENGTH) return part
        for (const p of COMPONENT_SHARED) part[p] = d[part[p] as number]
        return part
      })
    }
    const row: StoredRow = {
      wallet: d[entry[n] as number] as string,
      counterparty: d[entry[n + 1] as number] as string,
      tokenAddress: d[entry[n + 2] as number] as string,
      v
    }
    return { row, keys: undefined }
  })
}
