import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeBase64Url, encodeBase64Url } from "../src/Base64Url.js"

describe("base64url without Buffer", () => {
  it("encodes as Node's Buffer does, and decodes back", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        expect(encodeBase64Url(text)).toBe(Buffer.from(text, "utf8").toString("base64url"))
        expect(decodeBase64Url(encodeBase64Url(text))).toBe(text)
      }),
      { numRuns: 2_000 }
    )
  })

  it("decodes any cursor-shaped string as Buffer does (padding, short last groups, invalid UTF-8)", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,40}={0,2}$/), (cursor) => {
        expect(decodeBase64Url(cursor)).toBe(Buffer.from(cursor, "base64url").toString("utf8"))
      }),
      { numRuns: 5_000 }
    )
  })
})
