import { utcDateOf } from "@scaledger/domain/CalendarDates"
import { validDate } from "@scaledger/domain/DateInputs"
import { NotFound } from "@scaledger/domain/Errors"
import { formatWad } from "@scaledger/domain/ledger/Fixed"
import type { MultiplierHistory } from "@scaledger/domain/MultiplierApi"
import { shownValue } from "@scaledger/domain/ShownValue"
import { Effect, Option } from "effect"
import { ChainStore, type ChangeRow } from "../chain/ChainStore.js"

const dateOf = (time: Date) => utcDateOf(time.getTime())
const endOfDay = (date: string) => new Date(`${date}T23:59:59.999Z`)

/**
 * When a change is in force: the time of the block it took effect in once recorded (the first block at or after
 * `effectiveAt`, never before its announcement), else `effectiveAt` or, if later, its announcement.
 */
const inForceFrom = (change: ChangeRow): number =>
  change.status === "active" && change.blockTime !== null
    ? change.blockTime.getTime()
    : Math.max(change.effectiveAt.getTime(), change.announcedAt?.getTime() ?? 0)

/**
 * The multiplier in force at the end of `date`. Announcements are complete from `coverage.from` on, so between
 * changes the value is the last change's `to`, before the first one its `from`, and without any change the value
 * read when watching began. Before coverage: unknown (null). A change is in force from the block it took effect in
 * (`inForceFrom`); one the record has not seen take effect yet counts from its `effectiveAt` (a date still to come:
 * the value announced for it).
 */
export const valueAt = (
  date: string,
  changes: ReadonlyArray<ChangeRow>,
  coverage: Option.Option<{ readonly fromTime: Date; readonly startMultiplier: bigint | null }>
): string | null => {
  if (Option.isNone(coverage) || dateOf(coverage.value.fromTime) > date) return null
  const end = endOfDay(date).getTime()
  const inForce = changes.filter((change) => inForceFrom(change) <= end)
  const last = inForce[inForce.length - 1]
  if (last !== undefined) return formatWad(last.newMultiplier)
  const first = changes[0]
  if (first !== undefined) return formatWad(first.oldMultiplier)
  return coverage.value.startMultiplier === null ? null : formatWad(coverage.value.startMultiplier)
}

export interface MultiplierQuery {
  /** A symbol (any case) or an address. */
  readonly token: string
  /** Also answer the value in force at the end of this date. */
  readonly at?: string | undefined
  /** List changes from this date on. */
  readonly from?: string | undefined
}

/**
 * The multiplier history behind `GET /v1/multiplier` and the MCP tool `get_multiplier_history`: every recorded
 * change of a token's multiplier, where each value comes from, and what the record cannot vouch for.
 */
export class MultiplierReads extends Effect.Service<MultiplierReads>()("@scaledger/db/MultiplierReads", {
  effect: Effect.gen(function*() {
    const chain = yield* ChainStore

    const history = Effect.fn("MultiplierReads.history")(function*(chainId: number, query: MultiplierQuery) {
      const at = yield* validDate("at", query.at)
      const from = yield* validDate("from", query.from)
      const token = yield* chain.findToken(chainId, query.token)
      if (Option.isNone(token)) return yield* new NotFound({ message: `Unknown token ${shownValue(query.token)}.` })
      const address = token.value.address
      const [changes, coverage, gaps] = yield* Effect.all([
        chain.changesOf(chainId, address),
        chain.coverageOf(chainId, address),
        chain.gapsOfToken(chainId, address)
      ])
      const answer: MultiplierHistory = {
        token: token.value.symbol ?? address,
        address,
        changes: changes
          .filter((change) => change.status === "active" && change.block !== null && change.blockTime !== null)
          .filter((change) => from === undefined || dateOf(change.blockTime!) >= from)
          .map((change) => ({
            block: change.block!,
            date: dateOf(change.blockTime!),
            from: formatWad(change.oldMultiplier),
            to: formatWad(change.newMultiplier),
            source: change.source ?? "event_log",
            announcedAt: change.announcedAt?.toISOString() ?? null,
            effectiveAt: change.effectiveAt.toISOString(),
            kind: change.kind
          })),
        pending: changes
          .filter((change) => change.status === "pending")
          .map((change) => ({
            from: formatWad(change.oldMultiplier),
            to: formatWad(change.newMultiplier),
            announcedAt: change.announcedAt?.toISOString() ?? null,
            effectiveAt: change.effectiveAt.toISOString(),
            kind: change.kind
          })),
        coverage: {
          from: Option.match(coverage, { onNone: () => null, onSome: (c) => dateOf(c.fromTime) }),
          gaps
        },
        ...(at === undefined ? {} : { at: { date: at, multiplier: valueAt(at, changes, coverage) } })
      }
      return answer
    })

    return { history } as const
  }),
  dependencies: [ChainStore.Default]
}) {}
