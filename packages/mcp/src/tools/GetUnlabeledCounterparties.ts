import { CounterpartyReads } from "@scaledger/db/reads/CounterpartyReads"
import { Effect, Schema } from "effect"
import { tool } from "../McpTool.js"

/** `get_unlabeled_counterparties`: the REST twin is `GET /v1/counterparties/unlabeled`. */
export const GetUnlabeledCounterparties = Effect.map(CounterpartyReads, (reads) =>
  tool({
    name: "get_unlabeled_counterparties",
    title: "Counterparties awaiting a label",
    description:
      "Addresses of unknown relationship that keep the account's movements in review, most first: how many " +
      "movements each blocks, their tokens, first and last dates, and the model's unconfirmed suggestion if any. " +
      "Labelling one (PATCH /v1/events/{id} over REST) settles all its movements.",
    input: Schema.Struct({}),
    run: (_, account) =>
      Effect.map(reads.unlabeled(account.id), (answer) => ({
        counterparties: answer.counterparties,
        evidence: {
          addresses: answer.counterparties.map((c) => c.address),
          movementsNeedingReview: answer.counterparties.reduce((sum, c) => sum + c.movements, 0)
        }
      }))
  }))
