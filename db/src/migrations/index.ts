import type { SqlClient } from "@effect/sql"
import type { Effect } from "effect"
import accounts from "./0001_accounts.js"
import chain from "./0002_chain.js"
import fxRates from "./0003_fx_rates.js"
import ledger from "./0004_ledger.js"
import priceRounds from "./0005_price_rounds.js"
import rateLimits from "./0006_rate_limits.js"
import exportsTables from "./0008_exports.js"
import alerts from "./0009_alerts.js"
import market from "./0010_market.js"
import classification from "./0012_classification.js"
import chainReads from "./0014_chain_reads.js"
import ledgerEventTokens from "./0016_ledger_event_tokens.js"
import transferRecordedXid from "./0017_transfer_recorded_xid.js"
import readNotifications from "./0018_read_notifications.js"
import txFacts from "./0019_tx_facts.js"
import classificationChangedXid from "./0022_classification_changed_xid.js"
import transferRecordedAutosummarize from "./0023_transfer_recorded_autosummarize.js"
import provisionalIndexes from "./0024_provisional_indexes.js"
import walletRecordedXid from "./0025_wallet_recorded_xid.js"
import ledgerMovementVersion from "./0026_ledger_movement_version.js"
import priceRoundsRecordedXid from "./0027_price_rounds_recorded_xid.js"
import ledgerRowPages from "./0028_ledger_row_pages.js"
import classificationChainOrder from "./0029_classification_chain_order.js"
import ledgerSteps from "./0030_ledger_steps.js"
import ledgerPageDocuments from "./0031_ledger_page_documents.js"
import webhookEndpointDue from "./0032_webhook_endpoint_due.js"

/** Every migration, keyed `<id>_<name>`; ids only grow, and a released migration is never edited. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_accounts": accounts,
  "0002_chain": chain,
  "0003_fx_rates": fxRates,
  "0004_ledger": ledger,
  "0005_price_rounds": priceRounds,
  "0006_rate_limits": rateLimits,
  "0008_exports": exportsTables,
  "0009_alerts": alerts,
  "0010_market": market,
  "0012_classification": classification,
  "0014_chain_reads": chainReads,
  "0016_ledger_event_tokens": ledgerEventTokens,
  "0017_transfer_recorded_xid": transferRecordedXid,
  "0018_read_notifications": readNotifications,
  "0019_tx_facts": txFacts,
  "0022_classification_changed_xid": classificationChangedXid,
  "0023_transfer_recorded_autosummarize": transferRecordedAutosummarize,
  "0024_provisional_indexes": provisionalIndexes,
  "0025_wallet_recorded_xid": walletRecordedXid,
  "0026_ledger_movement_version": ledgerMovementVersion,
  "0027_price_rounds_recorded_xid": priceRoundsRecordedXid,
  "0028_ledger_row_pages": ledgerRowPages,
  "0029_classification_chain_order": classificationChainOrder,
  "0030_ledger_steps": ledgerSteps,
  "0031_ledger_page_documents": ledgerPageDocuments,
  "0032_webhook_endpoint_due": webhookEndpointDue
}
