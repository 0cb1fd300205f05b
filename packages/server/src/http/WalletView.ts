import type { WalletRow } from "@scaledger/db/Wallets"
import type { Wallet } from "@scaledger/domain/Wallet"

const toInt = (value: string | null): number | null => (value === null ? null : Number(value))

export const walletView = (row: WalletRow, coverageGaps: Wallet["backfill"]["coverageGaps"] = []): Wallet => ({
  address: row.address,
  label: row.label,
  self: row.self,
  watchingFrom: {
    block: toInt(row.watchingFromBlock),
    date: row.watchingFromAt === null ? null : row.watchingFromAt.toISOString().slice(0, 10)
  },
  backfill: {
    status: row.backfillStatus,
    coverageGaps,
    progress: { blocksDone: Number(row.backfillBlocksDone), blocksTotal: toInt(row.backfillBlocksTotal) },
    error: row.backfillError
  },
  createdAt: row.createdAt.toISOString()
})
