import { Either } from "effect"
import {
  type Classification,
  Ledger,
  type LedgerEvent,
  type LedgerReport,
  type LedgerSettings,
  type MultiplierEvent,
  type PriceRound,
  type TransferEvent
} from "../../src/ledger/index.js"

export const ZERO = "0x0000000000000000000000000000000000000000"

/** A deterministic address from a small number: 0x…00AB. */
export const address = (n: number): string => `0x${n.toString(16).padStart(40, "0")}`

export const txHash = (n: number): string => `0x${n.toString(16).padStart(64, "0")}`

/** Unix seconds of an ISO instant. */
export const at = (iso: string): number => Date.parse(iso) / 1000

/** Token units (decimal string) to raw 18-decimal integer string. */
export const units = (tokens: string): string => {
  const [whole, fraction = ""] = tokens.split(".")
  return (BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, "0") || "0")).toString()
}

/** A USD price to the feed's 8-decimal integer answer. */
export const answer = (usd: string): string => {
  const [whole, fraction = ""] = usd.split(".")
  return (BigInt(whole!) * 10n ** 8n + BigInt(fraction.padEnd(8, "0") || "0")).toString()
}

export const FEED = address(0xfeed)

export const round = (roundId: number, usd: string, iso: string): PriceRound => ({
  roundId: String(roundId),
  answer: answer(usd),
  updatedAt: at(iso),
  feed: FEED
})

export const TOKEN_ADDRESSES: Record<string, string> = {
  AAPL: "0xaF3D76f1834A1d425780943C99Ea8A608f8a93f9",
  CRWD: "0xea72Ecca2d0f6bFA1394DBBCff85b52CD4233931",
  TSLA: address(0x7e51a),
  NVDA: address(0x0d1a)
}

export interface TransferSpec {
  readonly id: string
  readonly token: string
  readonly from: string
  readonly to: string
  readonly qty: string
  readonly time: string
  readonly block: number
  readonly logIndex?: number
  readonly tx?: number
  readonly classification?: Classification
}

export const transfer = (spec: TransferSpec): TransferEvent => ({
  id: spec.id,
  kind: "transfer",
  token: spec.token,
  tokenAddress: TOKEN_ADDRESSES[spec.token] ?? address(0x70c),
  from: spec.from,
  to: spec.to,
  raw: units(spec.qty),
  block: spec.block,
  logIndex: spec.logIndex ?? 0,
  txHash: txHash(spec.tx ?? spec.block * 1000 + (spec.logIndex ?? 0)),
  timestamp: at(spec.time),
  ...(spec.classification === undefined ? {} : { classification: spec.classification })
})

export const multiplier = (spec: {
  readonly id: string
  readonly token: string
  readonly from: string
  readonly to: string
  readonly time: string
  readonly block: number
  readonly stepKind: "dividend" | "split"
}): MultiplierEvent => ({
  id: spec.id,
  kind: "multiplier",
  token: spec.token,
  tokenAddress: TOKEN_ADDRESSES[spec.token] ?? address(0x70c),
  from: units(spec.from),
  to: units(spec.to),
  effectiveAt: at(spec.time),
  block: spec.block,
  logIndex: -1,
  stepKind: spec.stepKind
})

export const user = (type: Classification["type"], relationship: Classification["relationship"]): Classification => ({
  type,
  relationship,
  classifiedBy: "user",
  confirmed: true
})

export const runLedger = (
  settings: LedgerSettings,
  events: ReadonlyArray<LedgerEvent>,
  asOf: string
): LedgerReport => Either.getOrThrow(Ledger.run({ ...settings, events, asOf: at(asOf) }))
