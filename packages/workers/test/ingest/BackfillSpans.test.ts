import { describe, expect, it } from "@effect/vitest"
import { nextSpanBlocks } from "@scaledger/workers/ingest/Backfill"

describe("a backfill's next span", () => {
  it("holds about 2,000 of the wallet's transfers at the density of the span before", () => {
    // 1,000 blocks held 1,000 transfers: 2,000 blocks should hold 2,000.
    expect(nextSpanBlocks(1_000, 1_000, 50_000)).toBe(2_000)
    // Denser: fewer blocks.
    expect(nextSpanBlocks(2_000, 8_000, 50_000)).toBe(500)
  })

  it("grows at most fourfold, whatever the span before held, and never past the configured span", () => {
    expect(nextSpanBlocks(1_000, 0, 50_000)).toBe(4_000)
    expect(nextSpanBlocks(1_000, 10, 50_000)).toBe(4_000)
    expect(nextSpanBlocks(16_000, 0, 50_000)).toBe(50_000)
    expect(nextSpanBlocks(100, 0, 100)).toBe(100)
  })

  it("is at least one block, however many transfers one block held", () => {
    expect(nextSpanBlocks(1, 5_000, 50_000)).toBe(1)
    expect(nextSpanBlocks(3, 100_000, 50_000)).toBe(1)
  })
})
