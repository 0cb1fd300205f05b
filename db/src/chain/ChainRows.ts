/** The rows of the chain record, as the repositories read and write them. */
export interface TokenRow {
  readonly chainId: number
  readonly address: string
  readonly symbol: string | null
  readonly name: string | null
  readonly isin: string | null
  readonly decimals: number
  readonly feedAddress: string | null
  readonly feedDecimals: number | null
  readonly listed: boolean
  readonly isStock: boolean
}

export interface BlockRow {
  readonly number: number
  readonly hash: string
  /** Unknown for blocks learnt from a log rather than from their header. */
  readonly parentHash: string | null
  readonly time: Date
}

export interface CursorRow {
  readonly block: number
  readonly hash: string
  readonly startedBlock: number
  readonly startedAt: Date
}

export interface TransferRow {
  readonly txHash: string
  readonly logIndex: number
  readonly block: number
  readonly blockHash: string
  readonly time: Date
  readonly token: string
  readonly from: string
  readonly to: string
  readonly raw: bigint
}

export interface ReceiptRow {
  readonly txHash: string
  readonly block: number
  readonly blockHash: string
  readonly from: string
  readonly to: string | null
  readonly status: string
  readonly logs: ReadonlyArray<unknown>
}

export interface AnnouncementRow {
  readonly txHash: string
  readonly logIndex: number
  readonly block: number
  readonly blockHash: string
  readonly time: Date
  readonly token: string
  readonly oldMultiplier: bigint
  readonly newMultiplier: bigint
  readonly effectiveAt: Date
  readonly variant: string
}

export interface PauseRow {
  readonly txHash: string
  readonly logIndex: number
  readonly block: number
  readonly time: Date
  readonly token: string
  readonly kind: "Paused" | "Unpaused" | "OraclePaused" | "OracleUnpaused"
}

export type ChangeKind = "dividend" | "split"
export type ChangeSource = "chain_storage" | "event_log" | "issuer_api"

export interface ChangeRow {
  readonly token: string
  readonly effectiveAt: Date
  readonly oldMultiplier: bigint
  readonly newMultiplier: bigint
  readonly kind: ChangeKind
  readonly status: "pending" | "active"
  readonly source: ChangeSource | null
  readonly block: number | null
  readonly blockTime: Date | null
  readonly announcedAt: Date | null
  readonly announcedBlock: number | null
}

export interface GapRow {
  readonly token: string
  readonly walletId: string | null
  readonly fromDate: string
  readonly toDate: string
  readonly reason: "archive_unavailable" | "rpc_error" | "before_watch"
}

/** Everything one step of ingestion writes; stored in one transaction so a crash leaves nothing half-written. */
export interface ChainBatch {
  readonly blocks?: ReadonlyArray<BlockRow>
  readonly transfers?: ReadonlyArray<TransferRow>
  readonly receipts?: ReadonlyArray<ReceiptRow>
  readonly announcements?: ReadonlyArray<AnnouncementRow>
  readonly pauses?: ReadonlyArray<PauseRow>
  /** Inserted as new changes, or, for an existing (token, effectiveAt), left as they are (re-announcements). */
  readonly changes?: ReadonlyArray<ChangeRow>
  /** Activations of pending changes: status, block and source. */
  readonly activations?: ReadonlyArray<ChangeRow>
  readonly gaps?: ReadonlyArray<GapRow>
  readonly coverage?: ReadonlyArray<{
    readonly token: string
    readonly fromBlock: number
    readonly fromTime: Date
    /** The multiplier in force at `fromBlock`, when it was read. */
    readonly multiplier?: bigint
  }>
  /** Rows of blocks above this number are provisional; at and below it they become final. */
  readonly finalizedThrough?: number
}

export const key = (address: string) => address.toLowerCase()

export const toTokenRow = (row: any): TokenRow => ({
  chainId: row.chain_id,
  address: row.address,
  symbol: row.symbol,
  name: row.name,
  isin: row.isin,
  decimals: row.decimals,
  feedAddress: row.feed_address,
  feedDecimals: row.feed_decimals,
  listed: row.listed,
  isStock: row.is_stock
})

export const toChangeRow = (row: any): ChangeRow => ({
  token: row.token_key,
  effectiveAt: row.effective_at,
  oldMultiplier: BigInt(row.old_multiplier),
  newMultiplier: BigInt(row.new_multiplier),
  kind: row.kind,
  status: row.status,
  source: row.source,
  block: row.block === null ? null : Number(row.block),
  blockTime: row.block_time,
  announcedAt: row.announced_at,
  announcedBlock: row.announced_block === null ? null : Number(row.announced_block)
})

/** One row per block number, preferring a header (which knows its parent) over a block seen in a log. */
export const dedupeBlocks = (blocks: ReadonlyArray<BlockRow>): ReadonlyArray<BlockRow> => {
  const byNumber = new Map<number, BlockRow>()
  for (const block of blocks) {
    const seen = byNumber.get(block.number)
    if (seen === undefined || (seen.parentHash === null && block.parentHash !== null)) byNumber.set(block.number, block)
  }
  return [...byNumber.values()]
}

/** One row per (token, effectiveAt): a re-announcement in the same batch keeps the first announcement. */
export const dedupeChanges = (changes: ReadonlyArray<ChangeRow>): ReadonlyArray<ChangeRow> => {
  const byKey = new Map<string, ChangeRow>()
  for (const change of changes) {
    const id = `${change.token.toLowerCase()}:${change.effectiveAt.getTime()}`
    const seen = byKey.get(id)
    if (seen === undefined || (change.announcedBlock ?? Infinity) < (seen.announcedBlock ?? Infinity)) {
      byKey.set(id, change)
    }
  }
  return [...byKey.values()]
}

export interface BlockRecord {
  readonly number: string
  readonly hash: string
  readonly parent_hash: string | null
  readonly block_time: Date
}

export const toBlockRow = (row: BlockRecord): BlockRow => ({
  number: Number(row.number),
  hash: row.hash,
  parentHash: row.parent_hash,
  time: row.block_time
})
