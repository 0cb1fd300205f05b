import { describe, expect, it } from "@effect/vitest"
import { LedgerQueries } from "@scaledger/db/reads/LedgerQueries"
import { inputSchemaOf } from "@scaledger/mcp/McpTool"
import { GetActivity } from "@scaledger/mcp/tools/LedgerTools"
import { Effect, Layer } from "effect"

/** A LedgerQueries that answers an empty page and records the page size each `events` call asked for. */
const recording = (limits: Array<number | undefined>) =>
  Layer.succeed(
    LedgerQueries,
    LedgerQueries.make(
      {
        eventFilter: (query: object) => Effect.succeed(query),
        events: (_account: string, _filter: unknown, page: { readonly limit?: number | undefined }) => {
          limits.push(page.limit)
          return Effect.succeed({ events: [], hasMore: false, lastOrd: undefined, lastId: undefined, evidence: {} })
        }
      } as unknown as ConstructorParameters<typeof LedgerQueries>[0]
    )
  )

describe("get_activity", () => {
  it.effect("pages as its REST twin GET /v1/events: 50 events unless `limit` says otherwise (DECISIONS.md)", () =>
    Effect.gen(function*() {
      const limits: Array<number | undefined> = []
      const tool = yield* Effect.provide(GetActivity, recording(limits))
      const account = { id: "acct_test", name: "test" }
      yield* tool.run({}, account)
      yield* tool.run({ limit: 7 }, account)
      expect(limits).toEqual([50, 7])
      expect((inputSchemaOf(tool.input).properties as any).limit.default).toBe(50)
    }))
})
