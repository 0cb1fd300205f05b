import { BOTH_OWN_RATIONALE } from "@scaledger/domain/classification/Rules"
import type { IncomeEvent, Movement, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import type { EventView } from "@scaledger/domain/LedgerApi"
import type { ClassificationDetail, CounterpartyLabel } from "../classification/EventClassifications.js"

const BOTH_OWN_VIEW = { by: "rule", rule: "both_own", model: null, confidence: null, rationale: BOTH_OWN_RATIONALE }

/**
 * Adds to an event's view who classified it (`classification { by, rule, model, confidence, rationale }`), what the
 * account wrote of its counterparty in review (`counterpartyLabel`, `counterpartyNote`) and, for an
 * arrival taken at market value (not from an own address, nor held unknown by an unconfirmed label),
 * `basisSource: "market_value_at_arrival"`.
 */
export const withClassification = (
  view: EventView,
  row: Movement | IncomeEvent | SplitEvent,
  detail: ClassificationDetail | undefined,
  labels: ReadonlyMap<string, CounterpartyLabel> = new Map()
): EventView => {
  if (row.type === "income.multiplier_increase" || row.type === "split") return view
  const movement = row as Movement
  const byModel = movement.classifiedBy === "ai_labeled"
  // Both ends own (direction `self`): the ledger's own rule decides, whatever the stored classification said before
  // the other end became an own address.
  const classification = movement.direction === "self" ? BOTH_OWN_VIEW : {
    by: movement.classifiedBy,
    rule: movement.classifiedBy === "rule" ? detail?.rule ?? null : null,
    model: byModel || detail?.model != null ? detail?.model ?? null : null,
    confidence: byModel ? detail?.confidence ?? null : null,
    rationale: movement.classifiedBy === "user" ? null : detail?.rationale ?? null
  }
  // Not while an unconfirmed model label (or an unconfirmed `unknown`) keeps the lot's basis unknown: no figure
  // depends on such a label, so the basis was not taken at market value.
  const atMarket = movement.treatment === "acquisition" && movement.relationship !== "self" &&
    (movement.type === "transfer.in" || movement.type === "unknown") &&
    !(movement.nullReasons ?? []).some((reason) => reason.reason === "unconfirmed_label")
  const written = labels.get(movement.counterparty.toLowerCase())
  return {
    ...view,
    classification,
    counterpartyLabel: written?.label ?? null,
    counterpartyNote: written?.note ?? null,
    ...(atMarket ? { basisSource: "market_value_at_arrival" as const } : {})
  }
}
