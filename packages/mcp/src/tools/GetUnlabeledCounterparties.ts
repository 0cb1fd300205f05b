import { CounterpartyReads } from "@scaledger/db/reads/CounterpartyReads"
import { PageCursor } from "@scaledger/domain/Basic"
import { Effect, Schema } from "effect"
import { limitArgument, tool } from "../McpTool.js"

const MAX_PAGE = 500
const DEFAULT_PAGE = 50

/** `get_unlabeled_counterparties`: the REST twin is `GET /v1/counterparties/unlabeled?limit=&cursor=`. */
export const GetUnlabeledCounterparties = Effect.map(CounterpartyReads, (reads) =>
  tool({
    name: "get_unlabeled_counterparties",
    title: "Counterparties awaiting a label",
    description:
      "Addresses of unknown relationship that keep the account's movements in review, most first: how many " +
      "movements each blocks, their tokens, first and last dates, and the model's unconfirmed suggestion if any. " +
      "Labelling one (PATCH /v1/events/{id} over REST) settles all its movements. `nextCursor` (null at the end) " +
      "is the `cursor` of the next page.",
    input: Schema.Struct({
      limit: limitArgument(MAX_PAGE, DEFAULT_PAGE, `How many addresses, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE}).`),
      cursor: Schema.optional(PageCursor)
    }),
    run: ({ cursor, limit }, account) =>
      Effect.map(reads.unlabeled(account.id, { limit, cursor }), (answer) => ({
        ...answer,
        evidence: {
          addresses: answer.counterparties.map((c) => c.address),
          movementsNeedingReview: answer.counterparties.reduce((sum, c) => sum + c.movements, 0)
        }
      }))
  }))
