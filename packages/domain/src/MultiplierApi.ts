import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { DATE_FORM, DecimalString, IsoDate, IsoDateTime, SAFE_TEXT_PATTERN, TextAccepted } from "./Basic.js"
import { InvalidDateError, NotFoundError } from "./Errors.js"
import { CoverageGap } from "./Wallet.js"

export const MultiplierSource = Schema.Literal("chain_storage", "event_log", "issuer_api").annotations({
  description:
    "`chain_storage`: the value read from the token's storage at `block`; `event_log`: taken from the announcement " +
    "where no state read was possible; `issuer_api`: from the issuer's registry."
})

export const MultiplierChange = Schema.Struct({
  block: Schema.Int.annotations({
    description: "The first block at or after `effectiveAt`: where the change is in force."
  }),
  date: IsoDate,
  from: DecimalString,
  to: DecimalString,
  source: MultiplierSource,
  announcedAt: Schema.NullOr(IsoDateTime).annotations({
    description: "When the change was announced (null if seen only in state)."
  }),
  effectiveAt: IsoDateTime,
  kind: Schema.Literal("dividend", "split")
}).annotations({ identifier: "MultiplierChange" })

export const PendingMultiplierChange = Schema.Struct({
  from: DecimalString,
  to: DecimalString,
  announcedAt: Schema.NullOr(IsoDateTime),
  effectiveAt: IsoDateTime,
  kind: Schema.Literal("dividend", "split")
}).annotations({ identifier: "PendingMultiplierChange" })

export const MultiplierHistory = Schema.Struct({
  token: Schema.String,
  address: Schema.String,
  changes: Schema.Array(MultiplierChange),
  pending: Schema.Array(PendingMultiplierChange).annotations({ description: "Announced changes not yet in force." }),
  coverage: Schema.Struct({
    from: Schema.NullOr(IsoDate).annotations({ description: "The first date from which every change is recorded." }),
    gaps: Schema.Array(CoverageGap)
  }),
  at: Schema.optional(
    Schema.Struct({
      date: IsoDate,
      multiplier: Schema.NullOr(DecimalString).annotations({
        description: "The multiplier in force at the end of that day (UTC); null when the date lies before coverage."
      })
    })
  )
}).annotations({ identifier: "MultiplierHistory" })
export type MultiplierHistory = typeof MultiplierHistory.Type

export class MultiplierGroup extends HttpApiGroup.make("multiplier")
  .add(
    HttpApiEndpoint.get("history", "/multiplier")
      .setUrlParams(Schema.Struct({
        token: Schema.String.pipe(Schema.minLength(1)).annotations({
          description: "Token symbol (case-insensitive) or address.",
          jsonSchema: {
            type: "string",
            description: "Token symbol (case-insensitive) or address.",
            minLength: 1,
            pattern: SAFE_TEXT_PATTERN
          }
        }),
        at: Schema.optional(TextAccepted("A date, YYYY-MM-DD: also answer the value in force on it.", DATE_FORM)),
        from: Schema.optional(TextAccepted("A date, YYYY-MM-DD: list changes from it on.", DATE_FORM))
      }))
      .addSuccess(MultiplierHistory)
      .addError(NotFoundError)
      .addError(InvalidDateError)
      .annotate(OpenApi.Summary, "Get a token's multiplier history")
      .annotate(
        OpenApi.Description,
        "Every recorded change of a token's multiplier, in order, with where each value comes from and the dates " +
          "the record cannot vouch for (`coverage.gaps`)."
      )
  )
  .annotate(OpenApi.Title, "Multiplier")
  .annotate(OpenApi.Description, "Every recorded change of a stock token's multiplier (dividends and splits).")
{}
