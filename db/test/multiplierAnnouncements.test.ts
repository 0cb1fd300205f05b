import { describe, expect, layer } from "@effect/vitest"
import type { ChangeRow } from "@scaledger/db/chain/ChainRows"
import { ChainStore } from "@scaledger/db/chain/ChainStore"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { Effect, Layer } from "effect"

const backends = [
  ["PostgreSQL", TestDatabase.postgres],
  ["PGlite", TestDatabase.pglite]
] as const

const CHAIN = 31337
const TOKEN = "0x00000000000000000000000000000000000000a7"
const WAD = 10n ** 18n
const at = (seconds: number) => new Date(1_790_000_000_000 + seconds * 1000)

/** A change announced at block `announcedBlock` (time `announced`), taking effect at `effective`. */
const announced = (
  announcedBlock: number,
  announced: number,
  effective: number,
  to: bigint,
  from = WAD + 1n
): ChangeRow => ({
  token: TOKEN,
  effectiveAt: at(effective),
  oldMultiplier: from,
  newMultiplier: to,
  kind: "dividend",
  status: "pending",
  source: null,
  block: null,
  blockTime: null,
  announcedAt: at(announced),
  announcedBlock
})

const activated = (change: ChangeRow, value: bigint, block: number): ChangeRow => ({
  ...change,
  newMultiplier: value,
  status: "active",
  source: "chain_storage",
  block,
  blockTime: change.effectiveAt
})

for (const [name, database] of backends) {
  describe(name, () => {
    layer(Layer.provideMerge(ChainStore.Default, database), { timeout: 120_000 })((it) => {
      it.effect("an announcement made before the staged one took effect replaces it; a no-op activation is no change", () =>
        Effect.gen(function*() {
          const store = yield* ChainStore
          const pending = () =>
            Effect.map(store.changesOf(CHAIN, TOKEN), (rows) => rows.map((r) => [r.status, r.newMultiplier]))
          // Took effect (t=150) before the next announcement (t=200): it stays.
          const first = announced(5, 100, 150, WAD + 1n, WAD)
          yield* store.writeBatch(CHAIN, { changes: [first] })
          yield* store.writeBatch(CHAIN, { activations: [activated(first, WAD + 1n, 6)] })
          const staged = announced(10, 300, 1000, WAD + 2n)
          yield* store.writeBatch(CHAIN, { changes: [staged] })
          expect(yield* pending()).toEqual([["active", WAD + 1n], ["pending", WAD + 2n]])
          // Re-announced (t=400, before t=1000) for t=2000 with another value: the staged one is gone.
          const replacing = announced(20, 400, 2000, WAD + 3n)
          yield* store.writeBatch(CHAIN, { changes: [replacing] })
          expect(yield* pending()).toEqual([["active", WAD + 1n], ["pending", WAD + 3n]])
          // The same change announced twice (same effectiveAt) is one change.
          yield* store.writeBatch(CHAIN, { changes: [announced(21, 500, 2000, WAD + 3n)] })
          expect(yield* pending()).toEqual([["active", WAD + 1n], ["pending", WAD + 3n]])
          // Due, the chain still answers the value before it (nothing changed): no change is recorded.
          yield* store.writeBatch(CHAIN, { activations: [activated(replacing, WAD + 1n, 30)] })
          expect(yield* pending()).toEqual([["active", WAD + 1n]])
        }))
    })
  })
}
