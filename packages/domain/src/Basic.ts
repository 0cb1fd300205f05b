import { Either, Schema } from "effect"
import { decodeBase64Url, encodeBase64Url } from "./Base64Url.js"
import { isCalendarDate } from "./CalendarDates.js"

/**
 * Shared basic schemas for request inputs: text without control characters, calendar dates PostgreSQL can store,
 * bounded page cursors. Every group's path, query and body schemas should use these (or build on them) rather than
 * a bare `Schema.String`, so that nothing the database would refuse (a NUL byte, year 0000, an offset past `bigint`)
 * gets past the edge and comes back as a 5xx.
 */

/** C0 controls (NUL included), DEL and C1 controls. Tab, LF and CR are refused too: inputs here are single-line. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/** True when `text` holds a control character (NUL included). */
export const hasControlCharacter = (text: string): boolean => CONTROL.test(text)

/** A UTF-16 surrogate with no partner: JSON can spell one (`"\ud800"`), UTF-8 (what is stored) cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** True when `text` holds a lone surrogate: stored (UTF-8) it would become U+FFFD, changed rather than as sent. */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text)

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g")

/**
 * Text from outside (a model's answer, a receiver's reply, an error) as a database text column can hold it: NUL and
 * each lone surrogate become U+FFFD. Kept as it came, it would fail its row's write, and the work behind it with it.
 */
export const storableText = (text: string): string =>
  text.replaceAll("\u0000", "\uFFFD").replace(LONE_SURROGATES, "\uFFFD")

/** Why text with a lone surrogate is refused: it would be stored as U+FFFD, changed rather than as sent. */
const wellFormed = (text: string): true | string =>
  !hasLoneSurrogate(text) || "must be Unicode text (a lone UTF-16 surrogate cannot be stored as sent)"

/** Text without control characters (no NUL, no C0/C1 controls, no DEL). */
export const SafeText = Schema.String.pipe(
  Schema.filter((text) =>
    !hasControlCharacter(text) || "must not contain control characters (NUL, U+0000–U+001F, U+007F–U+009F)"
  ),
  Schema.filter(wellFormed),
  Schema.annotations({
    identifier: "SafeText",
    description: "Text without control characters.",
    jsonSchema: { type: "string", pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f]*$" }
  })
)

/**
 * At most `max` characters, counted as JSON Schema's `maxLength` and PostgreSQL's `char_length` count them: Unicode
 * code points, not UTF-16 units (an emoji is one character, not two).
 */
export const maxCharacters = (max: number) => <A extends string, I, R>(self: Schema.Schema<A, I, R>) =>
  self.pipe(
    Schema.filter((text) => codePoints(text) <= max || `must be at most ${max} characters`, {
      jsonSchema: { maxLength: max }
    })
  )

const codePoints = (text: string): number => {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    count++
  }
  return count
}

/** `SafeText` of at most `max` characters (labels, notes, descriptions). */
export const SafeTextMax = (max: number) =>
  SafeText.pipe(
    maxCharacters(max),
    Schema.annotations({ description: `Text without control characters, at most ${max} characters.` })
  )

// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/

/**
 * Free text a person writes (wallet labels, review notes) of at most `max` characters: line breaks and tabs are
 * kept (exports quote them), every other control character (NUL included) is refused.
 */
export const FreeTextMax = (max: number) =>
  Schema.String.pipe(
    Schema.filter((text) =>
      !CONTROL_BUT_LINE_BREAKS.test(text) ||
      "must not contain control characters other than tab, line feed and carriage return"
    ),
    Schema.filter(wellFormed),
    maxCharacters(max),
    Schema.annotations({
      description: `Text of at most ${max} characters; tab, LF and CR allowed, no other control characters.`,
      jsonSchema: {
        type: "string",
        maxLength: max,
        pattern: "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"
      }
    })
  )

/** A short token-like word (symbols, codes, types): printable ASCII, 1–100 characters, no spaces. */
export const Word = Schema.String.pipe(
  Schema.pattern(/^[\x21-\x7e]{1,100}$/),
  Schema.annotations({ identifier: "Word", description: "Printable ASCII without spaces, 1 to 100 characters." })
)

/** A calendar date as sent: `YYYY-MM-DD`, year 0001 to 9999 (as `CalendarDate`). */
export const DATE_FORM = {
  format: "date",
  pattern: "^(000[1-9]|00[1-9]\\d|0[1-9]\\d{2}|[1-9]\\d{3})-\\d{2}-\\d{2}$"
} as const

/** A calendar date `YYYY-MM-DD` within 0001-01-01 to 9999-12-31. */
export const CalendarDate = Schema.String.pipe(
  Schema.filter((input) =>
    isCalendarDate(input) || "must be a calendar date YYYY-MM-DD between 0001-01-01 and 9999-12-31"
  ),
  Schema.annotations({
    identifier: "CalendarDate",
    description: "A calendar date, YYYY-MM-DD, between 0001-01-01 and 9999-12-31.",
    examples: ["2026-08-14"],
    jsonSchema: { type: "string", ...DATE_FORM }
  })
)

/**
 * A real calendar day `YYYY-MM-DD` (the UTC day an event happened on chain, an ECB publication day) in answers and
 * stored rows. Requests take `CalendarDate`, whose error message names the range.
 */
export const IsoDate = Schema.String.pipe(
  Schema.filter(isCalendarDate, { message: () => "expected a calendar date YYYY-MM-DD" }),
  Schema.annotations({
    identifier: "IsoDate",
    description: "A calendar date, YYYY-MM-DD.",
    examples: ["2026-08-14"],
    jsonSchema: {
      type: "string",
      description: "A calendar date, YYYY-MM-DD.",
      examples: ["2026-08-14"],
      pattern: "^\\d{4}-\\d{2}-\\d{2}$"
    }
  })
)

/** An instant, ISO 8601 in UTC. */
export const IsoDateTime = Schema.String.annotations({
  identifier: "IsoDateTime",
  description: "An instant, ISO 8601 in UTC.",
  examples: ["2026-08-14T15:12:46.000Z"]
})

/** An amount as a decimal string, signed: never a float. */
export const DecimalString = Schema.String.pipe(
  Schema.pattern(/^-?\d+(\.\d+)?$/),
  Schema.annotations({
    identifier: "DecimalString",
    description: "A decimal number as a string.",
    examples: ["1.000566080061092436"]
  })
)

/** A decimal string, or null where a figure is unknown (never zero in its place). */
export const NullableDecimal = Schema.NullOr(DecimalString)

const positiveDecimalPattern = /^\d+(\.\d+)?$/

/** True for an unsigned decimal string with a non-zero digit (`1.1252`, `0.5`; not `0`, `-1`, `1e3`). */
export const isPositiveDecimal = (s: string): boolean => positiveDecimalPattern.test(s) && /[1-9]/.test(s)

/** A decimal string greater than zero (rates, prices). */
export const PositiveDecimal = Schema.String.pipe(
  Schema.filter(isPositiveDecimal, { message: () => "expected a positive decimal string such as 1.1252" })
).annotations({ identifier: "PositiveDecimal" })

/** The largest position a cursor may carry: PostgreSQL's `bigint` maximum. */
export const MAX_CURSOR_POSITION = 9_223_372_036_854_775_807n

/** An opaque page cursor as sent: base64url, at most 200 characters. Its content is checked by `decodePageCursor`. */
export const PageCursor = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,200}={0,2}$/),
  Schema.annotations({
    identifier: "PageCursor",
    description: "Opaque cursor from a previous page's `nextCursor`."
  })
)

/** Opaque page cursors: base64url of `<kind>:<position>`, so a cursor of one list is refused by another. */
export const encodePageCursor = (kind: string, position: string): string => encodeBase64Url(`${kind}:${position}`)

/**
 * The position inside a cursor of list `kind`: a decimal integer from 0 to `MAX_CURSOR_POSITION` with no leading
 * zeros. Anything else (another list's cursor, garbage, an offset past `bigint`) is `Left` with the reason.
 */
export const decodePageCursor = (kind: string, cursor: string): Either.Either<string, string> => {
  if (!/^[A-Za-z0-9_-]{1,200}={0,2}$/.test(cursor)) return Either.left("not base64url")
  const decoded = decodeBase64Url(cursor)
  const prefix = `${kind}:`
  if (!decoded.startsWith(prefix)) {
    return Either.left(/^[a-z_]+:/.test(decoded) ? "issued by another list" : "not a cursor this service issued")
  }
  const position = decoded.slice(prefix.length)
  if (!/^(0|[1-9]\d{0,18})$/.test(position) || BigInt(position) > MAX_CURSOR_POSITION) {
    return Either.left("position out of range")
  }
  return Either.right(position)
}

/**
 * A whole number sent as a query string, in decimal digits only: `Number` also reads `0x10`, `+5`, ` 5`, `1.` and
 * `5e1`, which an integer parameter does not take.
 */
export const IntegerFromString = Schema.compose(
  Schema.String.pipe(
    Schema.pattern(/^[0-9]{1,15}$/, { message: () => "Expected a whole number written in decimal digits" })
  ),
  Schema.NumberFromString
)

/** `limit` of every list: an integer from 1 to 500, sent as a query string. */
export const PageLimitParam = IntegerFromString.pipe(
  Schema.int(),
  Schema.between(1, 500, { message: (issue) => `Expected a page size from 1 to 500, got ${String(issue.actual)}` }),
  Schema.annotations({
    identifier: "PageLimit",
    description: "Page size, 1 to 500 (default 50).",
    jsonSchema: { type: "integer", minimum: 1, maximum: 500, default: 50 }
  })
)

// ---------------------------------------------------------------------------------------------------------------
// Parameters and fields decoded as plain text, whose handlers check them and answer their own error codes
// (`invalid_address`, `invalid_date`, `unsupported_currency`, …). The OpenAPI document still states the form they
// accept, so a client generated from it, or a fuzzer driven by it, sends what the service takes.

/** Plain text, documented with the form its handler accepts (`jsonSchema` with `type: "string"` added). */
export const TextAccepted = (description: string, jsonSchema: Record<string, unknown>) =>
  Schema.String.annotations({ description, jsonSchema: { type: "string", description, ...jsonSchema } })

/** Single-line text without control characters (what the edge lets through). */
export const SAFE_TEXT_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"

/** A public address: 20 bytes of hex; mixed case only as a valid EIP-55 checksum, which no pattern can state. */
export const ADDRESS_FORM = { pattern: "^0x[0-9a-fA-F]{40}$" } as const

/**
 * Upper-cases ASCII letters only, for codes given in any letter case (`usd`, `Us`): `toUpperCase` also turns `ſ` into
 * S and `ı` into I, so "uſd" would pass for USD, which the document's `anyCaseOf` patterns refuse.
 */
export const upperCaseAscii = (text: string): string => text.replace(/[a-z]+/g, (letters) => letters.toUpperCase())

/** One of `values`, any letter case (`usd`, `Usd`): a pattern, as JSON Schema has no case-insensitive enum. */
export const anyCaseOf = (values: ReadonlyArray<string>) => ({
  pattern: `^(${
    values.map((value) =>
      [...value].map((c) => c.toLowerCase() === c.toUpperCase() ? c : `[${c.toUpperCase()}${c.toLowerCase()}]`)
        .join("")
    ).join("|")
  })$`
})

/**
 * A decimal greater than zero with at most `places` decimals, as a pattern without lookahead: a non-zero whole
 * part, or a zero whole part and a fraction whose first non-zero digit is within `places`.
 */
export const positiveDecimalForm = (places: number) => ({
  pattern: `^([0-9]*[1-9][0-9]*(\\.[0-9]{1,${places}})?|[0-9]+\\.(${
    Array.from({ length: places }, (_, zeros) => `0{${zeros}}[1-9][0-9]{0,${places - 1 - zeros}}`).join("|")
  }))$`
})
