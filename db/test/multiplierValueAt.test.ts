import type { ChangeRow } from "@scaledger/db/chain/ChainRows"
import { valueAt } from "@scaledger/db/reads/MultiplierReads"
import { Option } from "effect"
import { describe, expect, it } from "vitest"

const WAD = 10n ** 18n
const change = (effective: string, from: bigint, to: bigint, status: ChangeRow["status"]): ChangeRow => ({
  token: "0x00000000000000000000000000000000000000aa",
  effectiveAt: new Date(effective),
  oldMultiplier: from,
  newMultiplier: to,
  kind: "dividend",
  status,
  source: status === "active" ? "chain_storage" : null,
  block: status === "active" ? 10 : null,
  blockTime: status === "active" ? new Date(effective) : null,
  announcedAt: new Date("2026-01-01T00:00:00Z"),
  announcedBlock: 5
})

describe("the multiplier in force at the end of a date", () => {
  const coverage = Option.some({ fromTime: new Date("2026-01-01T00:00:00Z"), startMultiplier: WAD })
  const changes = [
    change("2026-03-01T14:00:00Z", WAD, 2n * WAD, "active"),
    // Announced for a later time: the record has not seen it take effect (yet).
    change("2026-07-01T14:00:00Z", 2n * WAD, 3n * WAD, "pending")
  ]

  it("is the last change announced for a time up to the end of that date, seen taking effect or not", () => {
    expect(valueAt("2026-02-28", changes, coverage)).toBe("1")
    expect(valueAt("2026-03-01", changes, coverage)).toBe("2")
    expect(valueAt("2026-06-30", changes, coverage)).toBe("2")
    expect(valueAt("2026-07-01", changes, coverage)).toBe("3")
    expect(valueAt("2027-08-01", changes, coverage)).toBe("3")
  })

  it("is unknown before the record's coverage", () => {
    expect(valueAt("2025-12-31", changes, coverage)).toBeNull()
  })
})

describe("the multiplier in force at the end of a date, by the block a change took effect in", () => {
  const coverage = Option.some({ fromTime: new Date("2026-01-01T00:00:00Z"), startMultiplier: WAD })

  it("is the old value on a date before the first block at or after effectiveAt", () => {
    // Due at 23:59:50 on 1 March; the first block at or after it is mined just after midnight.
    const late: ChangeRow = {
      ...change("2026-03-01T23:59:50Z", WAD, 2n * WAD, "active"),
      blockTime: new Date("2026-03-02T00:00:05Z")
    }
    expect(valueAt("2026-03-01", [late], coverage)).toBe("1")
    expect(valueAt("2026-03-02", [late], coverage)).toBe("2")
  })

  it("is the old value before the announcement of a change whose effectiveAt was already past", () => {
    // Announced on 10 March for 1 March: in force from the announcement's block, not from 1 March.
    const backdated: ChangeRow = {
      ...change("2026-03-01T15:00:00Z", WAD, 2n * WAD, "active"),
      blockTime: new Date("2026-03-10T12:00:00Z"),
      announcedAt: new Date("2026-03-10T12:00:00Z")
    }
    expect(valueAt("2026-03-05", [backdated], coverage)).toBe("1")
    expect(valueAt("2026-03-10", [backdated], coverage)).toBe("2")
    // Still pending in the record (not caught up yet): the same, from the announcement.
    const pending: ChangeRow = { ...backdated, status: "pending", source: null, block: null, blockTime: null }
    expect(valueAt("2026-03-05", [pending], coverage)).toBe("1")
    expect(valueAt("2026-03-10", [pending], coverage)).toBe("2")
  })
})
