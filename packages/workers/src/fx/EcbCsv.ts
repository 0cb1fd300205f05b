import { isCalendarDate } from "@scaledger/domain/CalendarDates"
import type { DayRates } from "@scaledger/domain/fx/Schemas"
import { Either } from "effect"
import { FxParseError } from "./ProviderErrors.js"
import { canonicalRate } from "./RateText.js"

const fail = (detail: string, line?: number) =>
  Either.left(
    new FxParseError(line === undefined ? { format: "ecb-csv", detail } : { format: "ecb-csv", detail, line })
  )

const currencyCode = /^[A-Z]{3}$/

/**
 * Parses the ECB history CSV (`eurofxref-hist.csv`, the body of `eurofxref-hist.zip`): a header
 * `Date,USD,JPY,...` whose columns are read by name, one row per publication day in any order, `N/A` for a
 * currency not published that day, an optional trailing comma, spaces around cells ignored.
 * Returns the days oldest first, each with only the currencies published that day. Any other cell, a row with a
 * different number of cells, a repeated date or a repeated column fails the whole parse.
 */
export const parseEcbCsv = (text: string): Either.Either<Array<DayRates>, FxParseError> => {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop()
  if (lines.length === 0) return fail("empty body")
  const header = lines[0]!.split(",").map((cell) => cell.trim())
  if (header[0] !== "Date") {
    return fail(`header must start with "Date", got ${JSON.stringify(lines[0]!.slice(0, 40))}`, 1)
  }
  const width = header.length
  const trailingEmpty = header[width - 1] === ""
  const codes = header.slice(1, trailingEmpty ? width - 1 : width)
  const seenCodes = new Set<string>()
  for (const code of codes) {
    if (!currencyCode.test(code)) return fail(`bad currency column ${JSON.stringify(code)}`, 1)
    if (seenCodes.has(code)) return fail(`repeated currency column ${code}`, 1)
    seenCodes.add(code)
  }
  const days: Array<DayRates> = []
  const seenDates = new Set<string>()
  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1
    const cells = lines[i]!.split(",")
    if (cells.length !== width) return fail(`expected ${width} cells, got ${cells.length}`, lineNo)
    const date = cells[0]!.trim()
    if (!isCalendarDate(date)) return fail(`bad date ${JSON.stringify(date)}`, lineNo)
    if (seenDates.has(date)) return fail(`repeated date ${date}`, lineNo)
    seenDates.add(date)
    if (trailingEmpty && cells[width - 1]!.trim() !== "") return fail("value in the trailing empty column", lineNo)
    const perEur: Record<string, string> = {}
    for (let c = 0; c < codes.length; c++) {
      const cell = cells[c + 1]!.trim()
      if (cell === "N/A") continue
      const rate = canonicalRate(cell)
      if (rate === undefined) return fail(`bad rate ${JSON.stringify(cell)} for ${codes[c]} on ${date}`, lineNo)
      perEur[codes[c]!] = rate
    }
    if (Object.keys(perEur).length === 0) return fail(`no rates on ${date}`, lineNo)
    days.push({ date, perEur })
  }
  days.sort((a, b) => (a.date < b.date ? -1 : 1))
  return Either.right(days)
}
