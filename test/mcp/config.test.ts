import { McpConfig } from "@scaledger/mcp/McpConfig"
import { ConfigProvider, Effect, Either } from "effect"
import { describe, expect, it } from "vitest"

const read = (origins: string) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(
    McpConfig(1),
    ConfigProvider.fromMap(new Map([["MCP_ALLOWED_ORIGINS", origins]]))
  )))

describe("MCP_ALLOWED_ORIGINS", () => {
  it("takes each entry as the origin a browser sends", () => {
    const settings = Either.getOrThrow(
      read("https://app.example.com/, http://localhost:3000,HTTPS://Tools.Example.com")
    )
    expect(settings.allowedOrigins).toEqual([
      "https://app.example.com",
      "http://localhost:3000",
      "https://tools.example.com"
    ])
  })

  it("refuses an entry that is not an origin, naming the variable", () => {
    for (const bad of ["notanorigin", "https://app.example.com/path", "ftp://files.example.com", "https://u:p@x.com"]) {
      const result = read(bad)
      expect(Either.isLeft(result), bad).toBe(true)
      expect(String(Either.getLeft(result))).toContain("MCP_ALLOWED_ORIGINS")
    }
  })
})
