import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { FreeTextMax, maxCharacters, PageCursor, PageLimitParam, SAFE_TEXT_PATTERN } from "./Basic.js"
import { strict } from "./Common.js"
import { NotFoundError, NotReviewableError, ReplayInProgressError } from "./Errors.js"
import { Relationship } from "./ledger/LedgerInput.js"

export const EventPath = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(1), maxCharacters(200)).annotations({
    description: "The event's id.",
    jsonSchema: {
      type: "string",
      description: "The event's id.",
      minLength: 1,
      maxLength: 200,
      pattern: SAFE_TEXT_PATTERN
    }
  })
})

/** PATCH /v1/events/{id}: the relationship the person confirms for the event's counterparty. */
export const ReviewEvent = Schema.Struct({
  relationship: Relationship.annotations({
    description: "`self` (an own address: a movement, not taxable), `exchange`, `counterparty` or `contract`."
  }),
  label: Schema.optional(Schema.NullOr(FreeTextMax(200))).annotations({
    description: "The counterparty's label. Left out: the label it has is kept; `null`: cleared."
  }),
  note: Schema.optional(Schema.NullOr(FreeTextMax(2000))).annotations({
    description: "A note on the counterparty. Left out: the note it has is kept; `null`: cleared."
  })
}).annotations({ identifier: "ReviewEvent", ...strict })
export type ReviewEvent = typeof ReviewEvent.Type

export const Resolution = Schema.Struct({
  id: Schema.String,
  counterparty: Schema.String,
  relationship: Relationship,
  taxable: Schema.Boolean,
  needsReview: Schema.Boolean,
  alsoSettled: Schema.Int.annotations({
    description: "Other events of the account with the same counterparty that needed review, settled by this one."
  }),
  stillNeedingReview: Schema.Int.annotations({ description: "Events of the account still awaiting review." })
}).annotations({ identifier: "Resolution" })
export type Resolution = typeof Resolution.Type

export const UnlabeledCounterparty = Schema.Struct({
  address: Schema.String,
  movements: Schema.Int.annotations({ description: "How many movements of the account with it need review." }),
  tokens: Schema.Array(Schema.String),
  firstSeen: Schema.String,
  lastSeen: Schema.String,
  suggestion: Schema.NullOr(Schema.Struct({
    type: Schema.String,
    relationship: Schema.NullOr(Relationship),
    model: Schema.String,
    confidence: Schema.Number
  })).annotations({ description: "The model's unconfirmed label of its latest movement, if a model labelled it." })
}).annotations({ identifier: "UnlabeledCounterparty" })
export type UnlabeledCounterparty = typeof UnlabeledCounterparty.Type

export const UnlabeledCounterparties = Schema.Struct({
  counterparties: Schema.Array(UnlabeledCounterparty),
  nextCursor: Schema.NullOr(Schema.String).annotations({ description: "The next page's `cursor`; null at the end." })
}).annotations({ identifier: "UnlabeledCounterparties" })
export type UnlabeledCounterparties = typeof UnlabeledCounterparties.Type

export class ReviewGroup extends HttpApiGroup.make("review")
  .add(
    HttpApiEndpoint.patch("resolve", "/events/:id")
      .setPath(EventPath)
      .setPayload(ReviewEvent)
      .addSuccess(Resolution)
      .addError(NotFoundError)
      .addError(NotReviewableError)
      .annotate(OpenApi.Summary, "Confirm or correct an event's counterparty")
      .annotate(
        OpenApi.Description,
        "Gives the event's counterparty a confirmed relationship (and optional label and note). Every other event " +
          "of the account with that counterparty that needs review is settled with it (`alsoSettled`). `self` makes " +
          "its movements transfers between own addresses (not taxable); `exchange`, `counterparty` and `contract` " +
          "make them disposals or acquisitions, taxable per the country rule. Starts a replay: reads answer 409 " +
          "until it settles."
      )
  )
  .add(
    HttpApiEndpoint.get("unlabeled", "/counterparties/unlabeled")
      .setUrlParams(Schema.Struct({
        limit: Schema.optional(PageLimitParam),
        cursor: Schema.optional(PageCursor)
      }))
      .addSuccess(UnlabeledCounterparties)
      .addError(ReplayInProgressError)
      .annotate(OpenApi.Summary, "List counterparties awaiting a label")
      .annotate(
        OpenApi.Description,
        "Addresses of unknown relationship and how many of the account's movements each keeps in review, most first. " +
          "The cursor follows the page's last address, so labelling what a page shows does not shift the next one. " +
          "The REST twin of the MCP tool `get_unlabeled_counterparties`."
      )
  )
  .annotate(OpenApi.Title, "Review")
  .annotate(OpenApi.Description, "Confirming what the rules and the model could not settle.")
{}
