import { decodeIssues } from "@scaledger/domain/Errors"
import { describe, expect, it } from "vitest"

describe("decodeIssues", () => {
  it("keeps the real issue of a value given but wrong, not its absent alternative", () => {
    // An optional field: its "Expected undefined" at the same path.
    expect(decodeIssues([
      { path: ["label"], message: "Expected string, actual 5" },
      { path: ["label"], message: "Expected undefined, actual 5" }
    ])).toEqual([{ path: ["label"], message: "Expected string, actual 5" }])
    // A nullable body (`NullOr(struct)`): its "Expected null" at the top, the real issue inside it.
    expect(decodeIssues([
      { path: ["format"], message: "Expected string, actual 5" },
      { path: [], message: "Expected null, actual {\"format\":5}" }
    ])).toEqual([{ path: ["format"], message: "Expected string, actual 5" }])
  })

  it("keeps an absent alternative that is the only issue, and one beside issues elsewhere", () => {
    const only = [{ path: [], message: "Expected null, actual 5" }]
    expect(decodeIssues(only)).toEqual(only)
    const elsewhere = [
      { path: ["a"], message: "Expected undefined, actual 1" },
      { path: ["b"], message: "Expected string, actual 1" }
    ]
    expect(decodeIssues(elsewhere)).toEqual(elsewhere)
  })
})
