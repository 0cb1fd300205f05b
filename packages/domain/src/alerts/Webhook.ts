import { Schema } from "effect"
import { FreeTextMax, IsoDateTime, maxCharacters, SAFE_TEXT_PATTERN, TextAccepted } from "../Basic.js"
import { PageParams, strict } from "../Common.js"
import { ALERT_KINDS } from "./Alert.js"

const Kinds = Schema.Array(TextAccepted("An alert kind.", { enum: ALERT_KINDS })).annotations({
  description: "Alert kinds to deliver; empty means all kinds. An unknown kind is `400 unknown_alert_kind`."
})

export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  description: Schema.String,
  kinds: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  consecutiveFailures: Schema.Int.annotations({
    description: "Consecutive failed deliveries; at 10 the endpoint is disabled. Any success resets it."
  }),
  createdAt: IsoDateTime
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

/** The creation answer: the only place the signing secret is ever shown. */
export const CreatedWebhookEndpoint = Schema.Struct({
  ...WebhookEndpoint.fields,
  secret: Schema.String.annotations({ description: "`whsec_` + 32 base62 characters. Shown only in this answer." })
}).annotations({ identifier: "CreatedWebhookEndpoint" })

const URL_DESCRIPTION = "An `https` URL of a public host (loopback, private and link-local addresses are refused)."
/** A webhook's URL: `https`, at most 2,048 characters; where it points is checked by the egress guard. */
const WebhookUrl = Schema.String.pipe(maxCharacters(2048)).annotations({
  description: URL_DESCRIPTION,
  jsonSchema: {
    type: "string",
    description: URL_DESCRIPTION,
    maxLength: 2048,
    format: "uri",
    pattern: "^[Hh][Tt][Tt][Pp][Ss]://[^\\u0000-\\u0020\\u007f-\\u009f/?#]+([/?#][^\\u0000-\\u0020\\u007f-\\u009f]*)?$"
  }
})
/** A webhook's description: text a person writes (tab and line breaks kept, no other control character). */
const WebhookDescription = FreeTextMax(500)

export const CreateWebhook = Schema.Struct({
  url: WebhookUrl,
  description: Schema.optional(WebhookDescription),
  kinds: Schema.optional(Kinds)
}).annotations({ identifier: "CreateWebhook", ...strict })

export const UpdateWebhook = Schema.Struct({
  url: Schema.optional(WebhookUrl),
  description: Schema.optional(WebhookDescription),
  kinds: Schema.optional(Kinds),
  enabled: Schema.optional(Schema.Boolean).annotations({
    description: "`false` disables the endpoint; `true` enables it again and resets its failure count."
  })
}).annotations({ identifier: "UpdateWebhook", ...strict })

export const WebhookList = Schema.Struct({
  webhooks: Schema.Array(WebhookEndpoint),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookList" })

export const WebhookListParams = Schema.Struct(PageParams)

export const WebhookPath = Schema.Struct({ id: TextAccepted("The endpoint's id.", { pattern: SAFE_TEXT_PATTERN }) })

export const WebhookDeliveryAttempt = Schema.Struct({
  id: Schema.String,
  endpointId: Schema.String,
  eventId: Schema.String,
  kind: Schema.String,
  attempt: Schema.Int.annotations({ description: "1, 2 or 3." }),
  outcome: Schema.Literal("success", "failure"),
  status: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status; null when none came." }),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Int,
  at: IsoDateTime
}).annotations({ identifier: "WebhookDeliveryAttempt" })

export const WebhookDeliveryList = Schema.Struct({
  deliveries: Schema.Array(WebhookDeliveryAttempt)
}).annotations({ identifier: "WebhookDeliveryList" })
