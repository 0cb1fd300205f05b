import { LedgerQueries } from "@scaledger/db/reads/LedgerQueries"
import { PageCursor } from "@scaledger/domain/Basic"
import { DEFAULT_PAGE_LIMIT } from "@scaledger/domain/Common"
import { MovementType } from "@scaledger/domain/ledger/LedgerInput"
import { decodeRowCursor, encodeRowCursor } from "@scaledger/domain/PageCursors"
import { Effect, Schema } from "effect"
import { limitArgument, TEXT_MAX, textArgument, tool } from "../McpTool.js"

/** The largest page a list answers (DECISIONS.md: max 500). */
const MAX_PAGE = 500
/** As every list, and as its REST twin `GET /v1/events` (DECISIONS.md: default 50). */
const DEFAULT_ACTIVITY = DEFAULT_PAGE_LIMIT

const Day = (description: string) => textArgument(TEXT_MAX.date, `${description}, YYYY-MM-DD (UTC, inclusive).`)

/** `get_positions`: the REST twin is `GET /v1/positions?wallet=`. */
export const GetPositions = Effect.map(LedgerQueries, (queries) =>
  tool({
    name: "get_positions",
    title: "Positions",
    description:
      "Per position (per address and token; per token under account lot scope): balance in tokens, the multiplier " +
      "now and when the oldest open lot was acquired, share equivalence (tokens × multiplier), cost basis, value and " +
      "unrealised gain in the reporting currency, this year's income from multiplier growth, the feed round behind " +
      "the price, `rate` (the rate the value is converted at, with its source, rate date and whether it was carried " +
      "forward), and `paused` while the token is paused. Unknown figures are null with `unknownBecause`.",
    input: Schema.Struct({
      wallet: Schema.optional(textArgument(
        TEXT_MAX.address,
        "Only this watched address (0x…); under account lot scope, its own holding of each position."
      ))
    }),
    run: ({ wallet }, account) =>
      Effect.flatMap(
        queries.positions(account.id, wallet),
        ({ evidence, list }) => Effect.map(evidence, (cited) => ({ ...list, evidence: cited }))
      )
  }))

/**
 * `get_activity`: the REST twin is `GET /v1/events?token=&type=&from=&to=&limit=&cursor=`; the cursors of the two
 * are one.
 */
export const GetActivity = Effect.map(LedgerQueries, (queries) =>
  tool({
    name: "get_activity",
    title: "Activity",
    description: "The account's events in chain order: movements (each with its transaction hash, counterparty and " +
      "relationship), income from multiplier growth (no wallet transaction; the income in USD and the reporting " +
      "currency with the rate's source and ECB date, and the withholding estimate against the issuer's declared " +
      "dividend) and splits. `nextCursor` (null at the end) is the `cursor` of the next page (with the same " +
      "filters).",
    input: Schema.Struct({
      symbol: Schema.optional(textArgument(TEXT_MAX.symbol, "Only this token, e.g. AAPL (any case).")),
      type: Schema.optional(
        Schema.Literal(...MovementType.literals, "income.multiplier_increase", "split").annotations({
          description: "Only events of this type."
        })
      ),
      from: Schema.optional(Day("From this date")),
      to: Schema.optional(Day("Up to this date")),
      limit: limitArgument(
        MAX_PAGE,
        DEFAULT_ACTIVITY,
        `How many events, 1 to ${MAX_PAGE} (default ${DEFAULT_ACTIVITY}), oldest first.`
      ),
      cursor: Schema.optional(PageCursor)
    }),
    run: ({ cursor, from, limit, symbol, to, type }, account) =>
      Effect.gen(function*() {
        const filter = yield* queries.eventFilter({ token: symbol, type, from, to })
        const after = yield* decodeRowCursor("events", cursor)
        const page = yield* queries.events(account.id, filter, {
          afterOrd: after?.ord,
          afterTag: after?.tag,
          limit: limit ?? DEFAULT_ACTIVITY
        })
        return {
          events: page.events,
          nextCursor: page.hasMore && page.lastOrd !== undefined && page.lastId !== undefined
            ? encodeRowCursor("events", page.lastOrd, page.lastId)
            : null,
          evidence: page.evidence
        }
      })
  }))
