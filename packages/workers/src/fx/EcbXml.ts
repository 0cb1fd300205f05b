import { isCalendarDate } from "@scaledger/domain/CalendarDates"
import type { DayRates } from "@scaledger/domain/fx/Schemas"
import { Either } from "effect"
import { FxParseError } from "./ProviderErrors.js"
import { canonicalRate } from "./RateText.js"

/**
 * Parses the ECB's eurofxref XML (`eurofxref-daily.xml`, `eurofxref-hist-90d.xml`, `eurofxref-hist.xml`):
 *
 * ```xml
 * <gesmes:Envelope ...>
 *   <gesmes:subject>Reference rates</gesmes:subject> <gesmes:Sender>...</gesmes:Sender>
 *   <Cube>
 *     <Cube time='2025-05-09'> <Cube currency='USD' rate='1.1252'/> ... </Cube> ...
 *   </Cube>
 * </gesmes:Envelope>
 * ```
 *
 * A small strict parser for this one shape: either quote style, any whitespace, comments and the XML declaration
 * are accepted; elements outside the outer `Cube` are checked for balance and skipped. Anything else (unbalanced or
 * unclosed tags, text or unknown elements among the Cubes, missing or bad attributes, a repeated day or currency, a
 * day without rates, no `Cube` at all) fails the whole parse. Days are returned oldest first.
 */
export const parseEcbXml = (text: string): Either.Either<Array<DayRates>, FxParseError> => {
  try {
    return Either.right(new Parser(text).parse())
  } catch (e) {
    if (e instanceof XmlError) {
      return Either.left(new FxParseError({ format: "ecb-xml", detail: e.message, line: lineOf(text, e.offset) }))
    }
    throw e
  }
}

class XmlError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message)
  }
}

const lineOf = (text: string, offset: number): number => {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

interface Tag {
  readonly name: string
  readonly attributes: ReadonlyMap<string, string>
  readonly selfClosing: boolean
  readonly offset: number
}

const namePattern = /[A-Za-z_][\w.:-]*/y
const attributePattern = /\s+([A-Za-z_][\w.:-]*)\s*=\s*(?:'([^'<]*)'|"([^"<]*)")/y
const entityPattern = /&(?:(amp|lt|gt|quot|apos)|#(\d+)|#x([0-9A-Fa-f]+));/g
const namedEntities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" }

const localName = (name: string): string => name.slice(name.indexOf(":") + 1)

type Token =
  | { readonly kind: "open"; readonly tag: Tag }
  | { readonly kind: "close"; readonly name: string; readonly offset: number }
  | { readonly kind: "text"; readonly text: string; readonly offset: number }
  | { readonly kind: "end" }

class Parser {
  private pos = 0

  constructor(private readonly src: string) {}

  parse(): Array<DayRates> {
    this.prolog()
    const root = this.next()
    if (root.kind !== "open" || localName(root.tag.name) !== "Envelope") {
      throw new XmlError("expected the root element gesmes:Envelope", this.pos)
    }
    if (root.tag.selfClosing) throw new XmlError("empty Envelope", root.tag.offset)
    let days: Array<DayRates> | undefined
    for (;;) {
      const token = this.next()
      if (token.kind === "end") throw new XmlError(`unclosed element ${root.tag.name}`, this.src.length)
      if (token.kind === "text") {
        if (token.text.trim() !== "") throw new XmlError("text directly inside Envelope", token.offset)
        continue
      }
      if (token.kind === "close") {
        if (token.name !== root.tag.name) throw new XmlError(`unexpected </${token.name}>`, token.offset)
        break
      }
      if (token.tag.name === "Cube") {
        if (days !== undefined) throw new XmlError("more than one outer Cube", token.tag.offset)
        days = this.outerCube(token.tag)
      } else {
        this.skipElement(token.tag)
      }
    }
    this.epilog()
    if (days === undefined) throw new XmlError("no Cube element", this.pos)
    return days.sort((a, b) => (a.date < b.date ? -1 : 1))
  }

  private outerCube(tag: Tag): Array<DayRates> {
    if (tag.attributes.size > 0) throw new XmlError("the outer Cube has attributes", tag.offset)
    const days: Array<DayRates> = []
    if (tag.selfClosing) return days
    const seen = new Set<string>()
    for (;;) {
      const token = this.elementContent("Cube")
      if (token === undefined) return days
      const time = token.attributes.get("time")
      if (time === undefined || token.attributes.size !== 1) {
        throw new XmlError("a day Cube must have exactly the attribute time", token.offset)
      }
      if (!isCalendarDate(time)) throw new XmlError(`bad time ${JSON.stringify(time)}`, token.offset)
      if (seen.has(time)) throw new XmlError(`repeated day ${time}`, token.offset)
      seen.add(time)
      days.push({ date: time, perEur: this.dayCube(token) })
    }
  }

  private dayCube(tag: Tag): Record<string, string> {
    const perEur: Record<string, string> = {}
    let count = 0
    if (!tag.selfClosing) {
      for (;;) {
        const token = this.elementContent("Cube")
        if (token === undefined) break
        const currency = token.attributes.get("currency")
        const rateText = token.attributes.get("rate")
        if (currency === undefined || rateText === undefined || token.attributes.size !== 2) {
          throw new XmlError("a rate Cube must have exactly the attributes currency and rate", token.offset)
        }
        if (!/^[A-Z]{3}$/.test(currency)) throw new XmlError(`bad currency ${JSON.stringify(currency)}`, token.offset)
        if (perEur[currency] !== undefined) throw new XmlError(`repeated currency ${currency}`, token.offset)
        const rate = canonicalRate(rateText.trim())
        if (rate === undefined) throw new XmlError(`bad rate ${JSON.stringify(rateText)} for ${currency}`, token.offset)
        if (!token.selfClosing) {
          const close = this.elementContent("Cube")
          if (close !== undefined) throw new XmlError("a rate Cube cannot contain elements", close.offset)
        }
        perEur[currency] = rate
        count++
      }
    }
    if (count === 0) throw new XmlError(`day ${tag.attributes.get("time")} has no rates`, tag.offset)
    return perEur
  }

  /** The next child element named `name` of the current Cube, or `undefined` at the Cube's closing tag. */
  private elementContent(name: string): Tag | undefined {
    for (;;) {
      const token = this.next()
      switch (token.kind) {
        case "end":
          throw new XmlError(`unclosed ${name}`, this.src.length)
        case "text":
          if (token.text.trim() !== "") throw new XmlError(`text inside ${name}`, token.offset)
          continue
        case "close":
          if (token.name !== name) throw new XmlError(`unexpected </${token.name}>`, token.offset)
          return undefined
        case "open":
          if (token.tag.name !== name) {
            throw new XmlError(`unexpected <${token.tag.name}> inside ${name}`, token.tag.offset)
          }
          return token.tag
      }
    }
  }

  private skipElement(tag: Tag): void {
    if (tag.selfClosing) return
    const stack = [tag.name]
    while (stack.length > 0) {
      const token = this.next()
      if (token.kind === "end") throw new XmlError(`unclosed element ${stack[stack.length - 1]}`, this.src.length)
      if (token.kind === "open") {
        if (!token.tag.selfClosing) stack.push(token.tag.name)
      } else if (token.kind === "close") {
        const expected = stack.pop()
        if (token.name !== expected) throw new XmlError(`expected </${expected}>, got </${token.name}>`, token.offset)
      }
    }
  }

  private prolog(): void {
    this.skipSpace()
    if (this.src.startsWith("\uFEFF", this.pos)) this.pos++
    this.skipSpace()
    if (this.src.startsWith("<?xml", this.pos)) {
      const end = this.src.indexOf("?>", this.pos)
      if (end < 0) throw new XmlError("unterminated XML declaration", this.pos)
      this.pos = end + 2
    }
    this.skipMisc()
  }

  private epilog(): void {
    this.skipMisc()
    if (this.pos < this.src.length) throw new XmlError("content after the root element", this.pos)
  }

  private skipMisc(): void {
    for (;;) {
      this.skipSpace()
      if (!this.src.startsWith("<!--", this.pos)) return
      this.skipComment()
    }
  }

  private skipSpace(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos]!)) this.pos++
  }

  private skipComment(): void {
    const end = this.src.indexOf("-->", this.pos + 4)
    if (end < 0) throw new XmlError("unterminated comment", this.pos)
    this.pos = end + 3
  }

  private next(): Token {
    const src = this.src
    for (;;) {
      if (this.pos >= src.length) return { kind: "end" }
      const start = this.pos
      if (src.charCodeAt(start) !== 60 /* < */) {
        const lt = src.indexOf("<", start)
        const end = lt < 0 ? src.length : lt
        this.pos = end
        return { kind: "text", text: src.slice(start, end), offset: start }
      }
      if (src.startsWith("<!--", start)) {
        this.skipComment()
        continue
      }
      if (src.startsWith("<?", start) || src.startsWith("<!", start)) {
        throw new XmlError("unsupported XML construct (processing instruction, CDATA or DOCTYPE)", start)
      }
      if (src.charCodeAt(start + 1) === 47 /* / */) {
        const name = this.name(start + 2)
        const gt = /\s*>/y
        gt.lastIndex = this.pos
        if (!gt.test(src)) throw new XmlError(`malformed closing tag </${name}`, start)
        this.pos = gt.lastIndex
        return { kind: "close", name, offset: start }
      }
      const name = this.name(start + 1)
      const attributes = new Map<string, string>()
      for (;;) {
        attributePattern.lastIndex = this.pos
        const m = attributePattern.exec(src)
        if (m === null) break
        const attr = m[1]!
        if (attributes.has(attr)) throw new XmlError(`repeated attribute ${attr}`, this.pos)
        attributes.set(attr, decodeEntities(m[2] ?? m[3] ?? "", this.pos))
        this.pos = attributePattern.lastIndex
      }
      const close = /\s*(\/?)>/y
      close.lastIndex = this.pos
      const m = close.exec(src)
      if (m === null) throw new XmlError(`malformed tag <${name}`, start)
      this.pos = close.lastIndex
      return { kind: "open", tag: { name, attributes, selfClosing: m[1] === "/", offset: start } }
    }
  }

  private name(at: number): string {
    namePattern.lastIndex = at
    const m = namePattern.exec(this.src)
    if (m === null) throw new XmlError("malformed tag name", at)
    this.pos = namePattern.lastIndex
    return m[0]
  }
}

const decodeEntities = (value: string, offset: number): string => {
  if (!value.includes("&")) return value
  const decoded = value.replace(
    entityPattern,
    (_, named: string | undefined, dec: string | undefined, hex: string | undefined) =>
      named !== undefined
        ? namedEntities[named]!
        : String.fromCodePoint(dec !== undefined ? Number(dec) : parseInt(hex!, 16))
  )
  if (decoded.includes("&") && value.replace(entityPattern, "").includes("&")) {
    throw new XmlError("bad entity in attribute", offset)
  }
  return decoded
}
