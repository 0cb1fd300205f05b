/**
 * CSV cells and lines as the exports write them: RFC 4180 (CRLF line ends, a field quoted when it holds a comma, a
 * quote, CR or LF, quotes doubled), UTF-8, booleans `true`/`false`, unknown as an empty cell (never 0). Text cells
 * that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) get a leading `'`;
 * numbers are written plain.
 */

/** A cell: text (guarded), a decimal number (plain), a boolean, or unknown (`null`: an empty cell). */
export type Cell =
  | { readonly _tag: "text"; readonly value: string }
  | { readonly _tag: "number"; readonly value: string }
  | string
  | boolean
  | null
  | undefined

const DECIMAL = /^-?\d+(\.\d+)?$/

/** A decimal number cell, written as it is; anything that is not a plain decimal is treated as text. */
export const num = (value: string | number | bigint | null | undefined): Cell =>
  value === null || value === undefined ? null : { _tag: "number", value: String(value) }

const FORMULA_START = /^[=+\-@\t\r]/

/** The spreadsheet formula-injection guard: a leading `'` on text that starts like a formula. */
export const guardText = (text: string): string => FORMULA_START.test(text) ? `'${text}` : text

const NEEDS_QUOTES = /[",\r\n]/

/** RFC 4180 quoting of one field's text. */
export const quote = (text: string): string => NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text

/** The text of one cell as written in the file. */
export const cellText = (cell: Cell): string => {
  if (cell === null || cell === undefined) return ""
  if (cell === true) return "true"
  if (cell === false) return "false"
  if (typeof cell === "string") return quote(guardText(cell))
  if (cell._tag === "number" && DECIMAL.test(cell.value)) return cell.value
  return quote(guardText(cell.value))
}

export const LINE_END = "\r\n"

/** One record, with its line end. */
export const line = (cells: ReadonlyArray<Cell>): string => {
  let out = ""
  for (let i = 0; i < cells.length; i++) {
    if (i > 0) out += ","
    out += cellText(cells[i])
  }
  return out + LINE_END
}

/** A header row: column names are plain text the service chose, written without the guard. */
export const headerLine = (columns: ReadonlyArray<string>): string => columns.map(quote).join(",") + LINE_END
