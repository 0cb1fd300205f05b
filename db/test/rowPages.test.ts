import { describe, expect, it } from "@effect/vitest"
import { linesOf, PageBuilder, readEventLine } from "@scaledger/db/ledger/RowPages"
import { Utf8Buffer } from "@scaledger/db/Utf8Buffer"

const decode = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(bytes)

describe("PageBuilder", () => {
  it("writes a page's lines as UTF-8, past its first buffer and with characters of every width", () => {
    const builder = new PageBuilder(5)
    const labels = ["plain", "Müller", "株式", "📈 growth", "x".repeat(70_000)]
    const events = labels.map((label, i) => ({
      id: `t:${i}`,
      type: "transfer.in",
      token: i === 2 ? "7203.T" : "AAPL",
      day: `2024-01-0${i + 1}`,
      needsReview: i === 3,
      row: { label, counterparty: `0x${i}` }
    }))
    for (const event of events) builder.addEvent(event)
    const page = builder.take()
    expect(page.firstOrd).toBe(5)
    expect(page.count).toBe(labels.length)
    expect([page.firstDay, page.lastDay]).toEqual(["2024-01-01", "2024-01-05"])
    expect(page.review).toEqual([["t:3", "transfer.in", "AAPL", "2024-01-04", "0x3"]])
    const lines = linesOf(decode(page.text))
    expect(lines.map((line) => JSON.parse(readEventLine(line).json).label)).toEqual(labels)
    // The builder goes on with the next page at the next position, its bytes apart from the page handed over.
    builder.addEvent({ ...events[0]!, id: "t:next" })
    const next = builder.take()
    expect(next.firstOrd).toBe(5 + labels.length)
    expect(linesOf(decode(next.text)).map((line) => readEventLine(line).id)).toEqual(["t:next"])
    expect(linesOf(decode(page.text))).toEqual(lines)
  })

  it("goes on from a stored page kept whole, its text and summary as stored", () => {
    const first = new PageBuilder(0)
    first.addEvent({ id: "a", type: "mint", token: "AAPL", day: "2024-02-01", needsReview: false, row: { n: "é" } })
    const stored = first.take()
    const { text: _text, ...summary } = stored
    const resumed = PageBuilder.resume(summary, decode(stored.text))
    resumed.addEvent({ id: "b", type: "burn", token: "TSLA", day: "2024-01-31", needsReview: false, row: { n: 2 } })
    const page = resumed.take()
    expect(page.count).toBe(2)
    expect(page.firstDay).toBe("2024-01-31")
    expect([...page.tokens].sort()).toEqual(["AAPL", "TSLA"])
    expect(linesOf(decode(page.text)).map((line) => JSON.parse(readEventLine(line).json).n)).toEqual(["é", 2])
  })
})

describe("Utf8Buffer", () => {
  it("reuses the memory of a text given back, and never that of a text still held", () => {
    // Texts of pages' size, each in memory of its own (small buffers share Node's pool and are never reused).
    const text = (label: string) => label.padEnd(20_000, ".")
    const buffer = new Utf8Buffer(16 * 1024)
    buffer.write(text("first"))
    const first = buffer.take()
    buffer.write(text("second"))
    const second = buffer.take()
    expect(second.buffer).not.toBe(first.buffer)
    buffer.recycle(first)
    // The text after the next is written where the first was; the texts still held are untouched.
    buffer.write(text("third"))
    const third = buffer.take()
    buffer.write(text("fourth"))
    const fourth = buffer.take()
    expect(fourth.buffer).toBe(first.buffer)
    expect(new Set([second.buffer, third.buffer, fourth.buffer]).size).toBe(3)
    expect([second, third, fourth].map(decode)).toEqual([text("second"), text("third"), text("fourth")])
  })
})
