import type { DayRates } from "@scaledger/domain/fx/Schemas"
import { Either } from "effect"
import { unzipSync } from "fflate"
import { parseEcbCsv } from "./EcbCsv.js"
import { FxParseError } from "./ProviderErrors.js"

/** The CSV text inside `eurofxref-hist.zip` (the entry `eurofxref-hist.csv`, or its only `.csv` entry). */
export const unzipEcbHistory = (bytes: Uint8Array): Either.Either<string, FxParseError> => {
  let entries: Record<string, Uint8Array>
  try {
    entries = unzipSync(bytes, { filter: (file) => file.name.toLowerCase().endsWith(".csv") })
  } catch (e) {
    return Either.left(new FxParseError({ format: "ecb-zip", detail: `not a readable zip: ${String(e)}` }))
  }
  const names = Object.keys(entries)
  const name = names.find((n) => n.split("/").pop() === "eurofxref-hist.csv") ??
    (names.length === 1 ? names[0] : undefined)
  if (name === undefined) {
    return Either.left(
      new FxParseError({
        format: "ecb-zip",
        detail: `expected eurofxref-hist.csv in the zip, found [${names.join(", ")}]`
      })
    )
  }
  try {
    return Either.right(new TextDecoder("utf-8", { fatal: true }).decode(entries[name]!))
  } catch {
    return Either.left(new FxParseError({ format: "ecb-zip", detail: `${name} is not UTF-8 text` }))
  }
}

/** `eurofxref-hist.zip` to publication days, oldest first. */
export const parseEcbZip = (bytes: Uint8Array): Either.Either<Array<DayRates>, FxParseError> =>
  Either.flatMap(unzipEcbHistory(bytes), parseEcbCsv)
