/** The ledger views moved to `@scaledger/db/reads/LedgerViews` (shared by REST and MCP through `LedgerQueries`). */
export * from "@scaledger/db/reads/LedgerViews"
