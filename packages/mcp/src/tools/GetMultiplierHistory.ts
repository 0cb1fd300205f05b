import { MultiplierReads } from "@scaledger/db/reads/MultiplierReads"
import { Effect, Schema } from "effect"
import { TEXT_MAX, textArgument, tool } from "../McpTool.js"

const Input = Schema.Struct({
  // Not empty, as the REST twin's `token`.
  symbol: textArgument(TEXT_MAX.symbol, "Token symbol (any case), e.g. AAPL, or the token's address.", {
    nonEmpty: true
  }),
  from: Schema.optional(textArgument(TEXT_MAX.date, "List changes from this date on, YYYY-MM-DD."))
})

/** `get_multiplier_history`: the REST twin is `GET /v1/multiplier?token=&from=`. */
export const GetMultiplierHistory = (chainId: number) =>
  Effect.map(MultiplierReads, (multipliers) =>
    tool({
      name: "get_multiplier_history",
      title: "Multiplier history of a token",
      description:
        "Every recorded change of a token's multiplier, from the issuer's UIMultiplierUpdated announcements and the " +
        "value read from chain storage where it took effect: block, date, from, to, kind (dividend or split) and " +
        "source; pending announced changes; and coverage (the first date the record vouches for, and its gaps).",
      input: Input,
      run: ({ from, symbol }) =>
        Effect.map(multipliers.history(chainId, { token: symbol, from }), (history) => ({
          ...history,
          evidence: {
            token: history.address,
            changes: history.changes.map((change) => ({
              block: change.block,
              effectiveAt: change.effectiveAt,
              source: change.source
            })),
            coverage: history.coverage
          }
        }))
    }))
