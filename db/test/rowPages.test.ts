import { describe, expect, it } from "@effect/vitest"
import { disposalRecords, eventRecords, PageBuilder } from "@scaledger/db/ledger/RowPages"
import { Utf8Buffer } from "@scaledger/db/Utf8Buffer"

const decode = (bytes: Uint8Array) => new TextDecoder("utf-8", { fatal: true }).decode(bytes)

const wallet = "0x00000000000000000000000000000000000000a1"
const exchange = "0x00000000000000000000000000000000000000e1"
const token = "0x00000000000000000000000000000000000000c1"
/** A price round's and a rate quote's stored forms: rows citing the same one share the array (`StoredRows`). */
const price = ["0x00000000000000000000000000000000000000f1", "7", 1_704_153_599, "100"] as const
const quote = ["EUR", "0.9", "2024-01-02", "ecb", 0] as const

/** A movement stored compactly (`storedMovement`'s layout), and the record a build gives the store for it. */
const movement = (n: number, needsReview: boolean) => {
  const timestamp = 1_704_153_600 + n * 86_400
  const row = {
    wallet,
    counterparty: exchange,
    tokenAddress: token,
    v: [
      `0x${"ab".repeat(32)}:${n}`,
      "transfer.in",
      null,
      "rule",
      0,
      needsReview ? 1 : 0,
      0,
      "acquisition",
      "in",
      "AAPL",
      "1000000000000000000",
      null,
      timestamp,
      "EUR",
      "100000000000000000000",
      quote,
      price,
      null,
      0,
      [],
      null,
      10 + n,
      0
    ]
  }
  return {
    id: row.v[0] as string,
    type: "transfer.in",
    token: "AAPL",
    day: new Date(timestamp * 1000).toISOString().slice(0, 10),
    needsReview,
    row
  }
}

const occurrences = (text: string, value: string) => text.split(value).length - 1

describe("PageBuilder", () => {
  it("writes a page's rows as one UTF-8 document, what they share once, and reads them back as they were given", () => {
    const builder = new PageBuilder("events", 5)
    const labels = ["plain", "Müller", "株式", "📈 growth", "x".repeat(70_000)]
    // Rows stored whole (an income row's shape) with their keys as given, between compact movements.
    const whole = labels.map((label, i) => ({
      id: `t:${i}`,
      type: "transfer.in",
      token: i === 2 ? "7203.T" : "AAPL",
      day: `2024-01-0${i + 1}`,
      needsReview: i === 3,
      row: { label, counterparty: `0x${i}` }
    }))
    const records = whole.flatMap((record, i) => [record, movement(i, i === 1)])
    for (const record of records) builder.addEvent(record)
    const page = builder.take()
    expect(page.firstOrd).toBe(5)
    expect(page.count).toBe(records.length)
    expect([page.firstDay, page.lastDay]).toEqual(["2024-01-01", "2024-01-06"])
    expect(page.review).toEqual([
      [movement(1, true).id, "transfer.in", "AAPL", "2024-01-03", exchange],
      ["t:3", "transfer.in", "AAPL", "2024-01-04", "0x3"]
    ])
    expect([...page.tokens].sort()).toEqual(["7203.T", "AAPL"])
    expect([...eventRecords(decode(page.text))]).toEqual(records)
    const stored = eventRecords(decode(page.text))
    expect([stored.length, stored.at(3), stored.at(records.length - 1)]).toEqual([
      records.length,
      records[3],
      records[9]
    ])
    // The five movements' wallet, counterparty, token, price round and quote are in the page once each.
    for (const shared of [wallet, exchange, token, price[0], "ecb"]) {
      expect(occurrences(decode(page.text), shared)).toBe(1)
    }
    // The builder goes on with the next page at the next position, with a dictionary of its own.
    builder.addEvent(movement(9, false))
    const next = builder.take()
    expect(next.firstOrd).toBe(5 + records.length)
    expect([...eventRecords(decode(next.text))]).toEqual([movement(9, false)])
    expect([...eventRecords(decode(page.text))]).toEqual(records)
  })

  it("writes disposal rows with their basis components' quotes and prices shared", () => {
    const component = [0, "t:1", 1_704_153_600, "100000000000000000000", quote, price]
    const disposal = (n: number) => ({
      token: "AAPL",
      day: "2024-02-01",
      row: {
        wallet,
        counterparty: exchange,
        tokenAddress: token,
        v: [
          `t:${n}`,
          0,
          "transfer.out",
          "AAPL",
          1_706_745_600,
          "1000000000000000000",
          null,
          "t:1",
          1_704_153_600,
          0,
          "EUR",
          "120000000000000000000",
          "100000000000000000000",
          "90000000000000000000",
          0,
          price,
          [component, [0, 2]],
          1,
          0,
          "rule",
          [],
          null,
          20 + n,
          0
        ]
      }
    })
    const builder = new PageBuilder("disposals", 0)
    const rows = [disposal(1), disposal(2), disposal(3)]
    for (const row of rows) builder.addDisposal(row)
    const page = builder.take()
    expect([...disposalRecords(decode(page.text))]).toEqual(rows)
    expect(occurrences(decode(page.text), price[0])).toBe(1)
    expect(occurrences(decode(page.text), "ecb")).toBe(1)
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
