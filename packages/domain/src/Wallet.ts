import { Schema } from "effect"
import { ADDRESS_FORM, FreeTextMax, IsoDate, IsoDateTime, TextAccepted } from "./Basic.js"
import { PageParams, strict } from "./Common.js"

export const CoverageGapReason = Schema.Literal("archive_unavailable", "rpc_error", "before_watch")

export const CoverageGap = Schema.Struct({
  from: IsoDate,
  to: IsoDate,
  reason: CoverageGapReason
}).annotations({ identifier: "CoverageGap", description: "Dates for which multiplier values could not be recovered." })

export const BackfillStatus = Schema.Literal("running", "complete", "partial", "failed").annotations({
  description:
    "`running` after creation; `complete` when all history was fetched; `partial` when it finished with coverage " +
    "gaps; `failed` when it stopped on an error (see `error`)."
})
export type BackfillStatus = typeof BackfillStatus.Type

export const Wallet = Schema.Struct({
  address: Schema.String.annotations({ description: "EIP-55 checksummed public address." }),
  label: Schema.String,
  self: Schema.Boolean.annotations({ description: "True for the account's own addresses." }),
  watchingFrom: Schema.Struct({
    block: Schema.NullOr(Schema.Int).annotations({
      description: "First block recorded live; null until the watcher starts."
    }),
    date: Schema.NullOr(IsoDate)
  }),
  backfill: Schema.Struct({
    status: BackfillStatus,
    coverageGaps: Schema.Array(CoverageGap),
    progress: Schema.Struct({
      blocksDone: Schema.Int,
      blocksTotal: Schema.NullOr(Schema.Int)
    }),
    error: Schema.NullOr(Schema.String)
  }),
  createdAt: IsoDateTime
}).annotations({ identifier: "Wallet" })
export type Wallet = typeof Wallet.Type

export const CreateWallet = Schema.Struct({
  address: TextAccepted(
    "Public address (0x + 40 hex digits), not the zero address; mixed case only as a valid EIP-55 checksum.",
    { ...ADDRESS_FORM, not: { const: `0x${"0".repeat(40)}` } }
  ),
  label: Schema.optional(FreeTextMax(200)),
  self: Schema.optional(Schema.Boolean).annotations({ description: "Default true." })
}).annotations({ identifier: "CreateWallet", ...strict })

export const UpdateWallet = Schema.Struct({
  label: Schema.optional(FreeTextMax(200)),
  self: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "UpdateWallet", ...strict })

export const WalletList = Schema.Struct({
  wallets: Schema.Array(Wallet),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WalletList" })

export const WalletListParams = Schema.Struct(PageParams)

export const WalletPath = Schema.Struct({
  address: TextAccepted("A watched address; mixed case only as a valid EIP-55 checksum.", ADDRESS_FORM)
})
