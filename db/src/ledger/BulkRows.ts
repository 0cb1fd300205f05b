/** How a build's rows go to the database: in chunks, each chunk one statement with its rows as one text. */
import { Utf8Buffer } from "../Utf8Buffer.js"

/** Rows per insert statement. */
export const INSERT_CHUNK = 5_000

/** Gathers an iterable into chunks, so a build's rows never need to be in memory all at once. */
export function* chunksOf<A>(rows: Iterable<A>, size: number): Generator<Array<A>> {
  let chunk: Array<A> = []
  for (const row of rows) {
    chunk.push(row)
    if (chunk.length === size) {
      yield chunk
      chunk = []
    }
  }
  if (chunk.length > 0) yield chunk
}

/** Rows and fields of a chunk sent as one text: control characters JSON always escapes and no key column holds. */
const ROW_SEPARATOR = "\x1e"
const FIELD_SEPARATOR = "\x1f"
const ROW_BYTE = 0x1e
const FIELD_BYTE = 0x1f

/** A column of a bulk insert: its name, and its value made from the text field `f` (a cast). */
export interface Column {
  readonly name: string
  readonly value: (f: string) => string
}

const column = (name: string, value: (f: string) => string = (f) => f): Column => ({ name, value })

export const POSITION_COLUMNS = [
  column("ord", (f) => `${f}::integer`),
  column("token"),
  column("wallet_key", (f) => `nullif(${f}, '')`),
  column("row", (f) => `${f}::json`)
]
export const LOT_COLUMNS = [column("ord", (f) => `${f}::integer`), column("token"), column("row", (f) => `${f}::json`)]
/**
 * One chunk of rows (each a list of text fields, one per column) as one statement with one parameter: the
 * server splits the text (`string_to_array`) instead of binding and parsing thousands of parameters. Undefined
 * when a field holds a separator (a token symbol is any text): that chunk is inserted with a parameter per value.
 */
export const delimitedInsert = (
  table: string,
  columns: ReadonlyArray<Column>,
  rows: ReadonlyArray<ReadonlyArray<string>>
) => {
  const text = new Utf8Buffer()
  for (let i = 0; i < rows.length; i++) {
    const fields = rows[i]!
    for (let k = 0; k < fields.length; k++) {
      const field = fields[k]!
      if (k < fields.length - 1 && (field.includes(ROW_SEPARATOR) || field.includes(FIELD_SEPARATOR))) return undefined
      if (k > 0) text.writeByte(FIELD_BYTE)
      else if (i > 0) text.writeByte(ROW_BYTE)
      text.write(field)
    }
  }
  return {
    statement: `INSERT INTO ${table} (account_id, ${columns.map((c) => c.name).join(", ")})
      SELECT $1, ${columns.map((c, k) => c.value(`f[${k + 1}]`)).join(", ")}
      FROM unnest(string_to_array($2, chr(30))) AS r(line), LATERAL (SELECT string_to_array(r.line, chr(31)) AS f) x`,
    text: text.take()
  }
}
