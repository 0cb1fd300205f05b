import type { Option } from "effect"
import { Context, Effect, Layer, Ref } from "effect"
import type { ReportingCurrency } from "../Currency.js"
import { DayIndex } from "./Quote.js"
import type { FxStoreError } from "./QuoteErrors.js"
import type { DayRates, FxSource, StoredDay } from "./Schemas.js"

/**
 * Where ECB publication days are kept: one row per publication day (`fx_rates`), the raw per-euro numbers and the
 * source. The refresh worker writes through it; quotes read through `latestWith`.
 */
export interface FxStoreShape {
  /** The newest stored publication day, `None` when empty. */
  readonly newestDay: () => Effect.Effect<Option.Option<string>, FxStoreError>
  /**
   * Inserts or replaces whole days (a day's row is replaced by the new one, currencies and source included).
   * Idempotent: providers re-send days already stored.
   */
  readonly upsert: (source: FxSource, days: ReadonlyArray<DayRates>) => Effect.Effect<void, FxStoreError>
  /** The latest day `<= onOrBefore` that has USD and `quote` (USD alone for USD and EUR): `Quote.DayLookup`. */
  readonly latestWith: (
    quote: ReportingCurrency,
    onOrBefore: string
  ) => Effect.Effect<Option.Option<StoredDay>, FxStoreError>
}

export class FxStore extends Context.Tag("@scaledger/domain/fx/FxStore")<FxStore, FxStoreShape>() {
  /** A store in memory (tests, demos, embedders without a database). */
  static readonly inMemory = (initial: ReadonlyArray<StoredDay> = []): Effect.Effect<FxStoreShape> =>
    Effect.map(Ref.make(DayIndex.make(initial)), (ref) => ({
      newestDay: () => Effect.map(Ref.get(ref), (index) => index.newestDay),
      upsert: (source, days) =>
        Ref.update(
          ref,
          (index) => DayIndex.make([...index.all(), ...days.map((day): StoredDay => ({ ...day, source }))])
        ),
      latestWith: (quote, onOrBefore) => Effect.map(Ref.get(ref), (index) => index.latestWith(quote, onOrBefore))
    }))

  static readonly layerInMemory = (initial: ReadonlyArray<StoredDay> = []): Layer.Layer<FxStore> =>
    Layer.effect(FxStore, FxStore.inMemory(initial))
}
