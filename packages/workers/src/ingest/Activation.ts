import type { AnnouncementRow, ChangeRow, GapRow } from "@scaledger/db/chain/ChainRows"
import { utcDateOf } from "@scaledger/domain/CalendarDates"
import { ChainClient, type MultiplierAnnouncement } from "@scaledger/domain/chain/ChainClient"
import { multiplierKind } from "@scaledger/domain/chain/MultiplierKind"
import { Effect, Option } from "effect"

/** Blocks read per round of the search: one batched request a round instead of one round trip per halving. */
const PROBES = 8

/** Up to `PROBES` blocks spread evenly over `[low, high - 1]`, ascending. */
const probesBetween = (low: number, high: number): ReadonlyArray<number> => {
  const probes = new Set<number>()
  for (let i = 1; i <= PROBES; i++) probes.add(low + Math.floor((i * (high - low)) / (PROBES + 1)))
  return [...probes]
}

/**
 * The first block in `[lo, hi]` whose timestamp is at or after `time` (unix seconds), by a search over block
 * timestamps that narrows the range ninefold a round; none when even `hi` is earlier.
 */
export const firstBlockAtOrAfter = (time: number, lo: number, hi: number) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    if (lo > hi) return Option.none<number>()
    let probes = lo < hi ? probesBetween(lo, hi) : []
    let times = yield* chain.blockTimestamps([hi, ...probes])
    if (times.get(hi)! < time) return Option.none<number>()
    let low = lo
    let high = hi
    while (low < high) {
      // The answer lies after every probe earlier than `time`, and at or before the first one that is not.
      for (const probe of probes) {
        if (times.get(probe)! >= time) {
          high = probe
          break
        }
        low = probe + 1
      }
      if (low >= high) break
      probes = probesBetween(low, high)
      times = yield* chain.blockTimestamps(probes)
    }
    return Option.some(low)
  })

export const announcementRow = (event: MultiplierAnnouncement, time: number): AnnouncementRow => ({
  txHash: event.txHash,
  logIndex: event.logIndex,
  block: event.block,
  blockHash: event.blockHash,
  time: new Date(time * 1000),
  token: event.token,
  oldMultiplier: event.oldMultiplier,
  newMultiplier: event.newMultiplier,
  effectiveAt: new Date(event.effectiveAt * 1000),
  variant: event.variant
})

/** A change as its announcement states it, not yet in force. Re-announcements map to the same row. */
export const pendingChange = (announcement: AnnouncementRow): ChangeRow => ({
  token: announcement.token.toLowerCase(),
  effectiveAt: announcement.effectiveAt,
  oldMultiplier: announcement.oldMultiplier,
  newMultiplier: announcement.newMultiplier,
  kind: multiplierKind(announcement.oldMultiplier, announcement.newMultiplier),
  status: "pending",
  source: null,
  block: null,
  blockTime: null,
  announcedAt: announcement.time,
  announcedBlock: announcement.block
})

export interface Activation {
  readonly change: ChangeRow
  readonly gap: Option.Option<GapRow>
}

/**
 * Puts a pending change in force at the first block at or after its `effectiveAt` (never before its announcement),
 * reading `uiMultiplier()` from chain storage at that block. Where the node no longer serves that state, or the
 * read keeps failing, the announced value stands (source `event_log`) and the date is reported as a coverage gap;
 * nothing is guessed. None while no block at or after `effectiveAt` exists up to `head`.
 */
export const activate = (
  change: ChangeRow,
  options: {
    readonly searchFrom: number
    readonly head: number
    readonly walletId: string | null
    readonly readFloor?: number
  }
) =>
  Effect.gen(function*() {
    const chain = yield* ChainClient
    const effectiveAt = Math.floor(change.effectiveAt.getTime() / 1000)
    const lo = change.announcedBlock ?? options.searchFrom
    const found = yield* firstBlockAtOrAfter(effectiveAt, lo, options.head)
    if (Option.isNone(found)) return Option.none<Activation>()
    const block = found.value
    const blockTime = new Date((yield* chain.blockTimestamp(block)) * 1000)
    const fromEvent = (reason: GapRow["reason"]): Activation => ({
      change: { ...change, status: "active", source: "event_log", block, blockTime },
      gap: Option.some({
        token: change.token,
        walletId: options.walletId,
        fromDate: utcDateOf(change.effectiveAt.getTime()),
        toDate: utcDateOf(change.effectiveAt.getTime()),
        reason
      })
    })
    // Below the oldest block the node still serves state for, a read would only fail.
    if (options.readFloor !== undefined && block < options.readFloor) {
      return Option.some(fromEvent("archive_unavailable"))
    }
    return yield* chain.uiMultiplier(change.token, block).pipe(
      Effect.map((value): Activation => ({
        change: {
          ...change,
          status: "active",
          source: "chain_storage",
          newMultiplier: value,
          kind: multiplierKind(change.oldMultiplier, value),
          block,
          blockTime
        },
        gap: Option.none()
      })),
      Effect.catchTag("StateUnavailable", () => Effect.succeed(fromEvent("archive_unavailable"))),
      Effect.catchAll((error) =>
        Effect.as(
          Effect.logWarning(`reading ${change.token} uiMultiplier at block ${block} failed: ${error.message}`),
          fromEvent("rpc_error")
        )
      ),
      Effect.map(Option.some)
    )
  })
