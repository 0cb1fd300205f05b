import type { IncomeEvent, Movement, SplitEvent } from "@scaledger/domain/ledger/LedgerReport"
import type { EventView } from "@scaledger/domain/LedgerApi"
import type { ClassificationDetail } from "../classification/EventClassifications.js"

/**
 * Adds to an event's view who classified it (`classification { by, rule, model, confidence, rationale }`) and, for an
 * arrival taken at market value (not from an own address), `basisSource: "market_value_at_arrival"`.
 */
export const withClassification = (
  view: EventView,
  row: Movement | IncomeEvent | SplitEvent,
  detail: ClassificationDetail | undefined
): EventView => {
  if (row.type === "income.multiplier_increase" || row.type === "split") return view
  const movement = row as Movement
  const byModel = movement.classifiedBy === "ai_labeled"
  const classification = {
    by: movement.classifiedBy,
    rule: movement.classifiedBy === "rule" ? detail?.rule ?? null : null,
    model: byModel || detail?.model != null ? detail?.model ?? null : null,
    confidence: byModel ? detail?.confidence ?? null : null,
    rationale: movement.classifiedBy === "user" ? null : detail?.rationale ?? null
  }
  const atMarket = movement.treatment === "acquisition" && movement.relationship !== "self" &&
    (movement.type === "transfer.in" || movement.type === "unknown")
  return { ...view, classification, ...(atMarket ? { basisSource: "market_value_at_arrival" as const } : {}) }
}
