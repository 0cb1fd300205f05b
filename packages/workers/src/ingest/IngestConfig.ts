import { Config, Context, Layer, Option } from "effect"

export interface IngestConfigShape {
  /** Most blocks the recorder stores in one step (catching up after downtime goes in steps of this size). */
  readonly recorderMaxSpan: number
  /** How long new heads are gathered before the recorder takes a step. */
  readonly recorderBatchMs: number
  /** The first block a wallet's backfill looks at. */
  readonly backfillFromBlock: number
  /** Blocks a backfill fetches between two checkpoints. */
  readonly backfillCheckpointBlocks: number
  /** Backfills running at once in this process. */
  readonly backfillConcurrency: number
  /** How often the backfill runner looks for new or abandoned jobs. */
  readonly backfillPollMs: number
  /** How long a job stays with a worker that stops renewing it (a crashed process) before another takes it. */
  readonly backfillLeaseSeconds: number
  /** Attempts before a wallet's backfill is marked `failed`. */
  readonly backfillMaxAttempts: number
  /** First wait before retrying a failed attempt (doubles per attempt, at most 10 minutes). */
  readonly backfillRetryBaseMs: number
  /** How often every price feed's latest round is asked for. */
  readonly pricePollMs: number
  /** Unix seconds: every feed's history is walked back at least to the round in force then; null: no such floor. */
  readonly priceHistoryFrom: number | null
  /** A token's history is also walked back to this many seconds before its earliest stored transfer. */
  readonly priceHistoryMarginSeconds: number
  /** Price feeds worked on at once. */
  readonly priceConcurrency: number
  /** Rounds stored per transaction (the checkpoint of a walk). */
  readonly priceBatchRounds: number
  /** How often every known token's `paused()` is read (besides the reads at start and at each pause event). */
  readonly pauseCheckMinutes: number
}

export const ingestConfigDefaults: IngestConfigShape = {
  recorderMaxSpan: 2_000,
  recorderBatchMs: 250,
  backfillFromBlock: 0,
  backfillCheckpointBlocks: 50_000,
  backfillConcurrency: 2,
  backfillPollMs: 1_000,
  backfillLeaseSeconds: 60,
  backfillMaxAttempts: 8,
  backfillRetryBaseMs: 5_000,
  pricePollMs: 30_000,
  priceHistoryFrom: null,
  priceHistoryMarginSeconds: 86_400,
  priceConcurrency: 4,
  priceBatchRounds: 200,
  pauseCheckMinutes: 5
}

const positive = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )

export const ingestConfig: Config.Config<IngestConfigShape> = Config.all({
  recorderMaxSpan: positive("RECORDER_MAX_SPAN", ingestConfigDefaults.recorderMaxSpan),
  recorderBatchMs: positive("RECORDER_BATCH_MS", ingestConfigDefaults.recorderBatchMs),
  backfillFromBlock: Config.integer("BACKFILL_FROM_BLOCK").pipe(
    Config.withDefault(ingestConfigDefaults.backfillFromBlock),
    Config.validate({ message: "BACKFILL_FROM_BLOCK must be zero or more", validation: (n) => n >= 0 })
  ),
  backfillCheckpointBlocks: positive("BACKFILL_CHECKPOINT_BLOCKS", ingestConfigDefaults.backfillCheckpointBlocks),
  backfillConcurrency: positive("BACKFILL_CONCURRENCY", ingestConfigDefaults.backfillConcurrency),
  backfillPollMs: positive("BACKFILL_POLL_MS", ingestConfigDefaults.backfillPollMs),
  backfillLeaseSeconds: positive("BACKFILL_LEASE_SECONDS", ingestConfigDefaults.backfillLeaseSeconds),
  backfillMaxAttempts: positive("BACKFILL_MAX_ATTEMPTS", ingestConfigDefaults.backfillMaxAttempts),
  backfillRetryBaseMs: positive("BACKFILL_RETRY_BASE_MS", ingestConfigDefaults.backfillRetryBaseMs),
  pricePollMs: positive("PRICE_POLL_MS", ingestConfigDefaults.pricePollMs),
  priceHistoryFrom: Config.option(Config.date("PRICE_HISTORY_FROM")).pipe(
    Config.map(Option.match({ onNone: () => null, onSome: (date) => Math.floor(date.getTime() / 1000) }))
  ),
  priceHistoryMarginSeconds: Config.integer("PRICE_HISTORY_MARGIN_SECONDS").pipe(
    Config.withDefault(ingestConfigDefaults.priceHistoryMarginSeconds),
    Config.validate({ message: "PRICE_HISTORY_MARGIN_SECONDS must be zero or more", validation: (n) => n >= 0 })
  ),
  priceConcurrency: positive("PRICE_CONCURRENCY", ingestConfigDefaults.priceConcurrency),
  priceBatchRounds: positive("PRICE_BATCH_ROUNDS", ingestConfigDefaults.priceBatchRounds),
  pauseCheckMinutes: positive("PAUSE_CHECK_MINUTES", ingestConfigDefaults.pauseCheckMinutes)
})

export class IngestConfig
  extends Context.Tag("@scaledger/workers/ingest/IngestConfig")<IngestConfig, IngestConfigShape>()
{
  static readonly Live = Layer.effect(IngestConfig, ingestConfig)
  static readonly layer = (settings: Partial<IngestConfigShape> = {}) =>
    Layer.succeed(IngestConfig, { ...ingestConfigDefaults, ...settings })
}
