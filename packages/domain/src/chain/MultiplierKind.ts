/**
 * Whether a multiplier step is a split or a dividend step (DECISIONS.md, "The multiplier record"): a split when
 * new/old is a simple fraction p/q (p, q ≤ 20) at least 10 % away from 1; otherwise a dividend step. The issuer's
 * corporate actions may also say "split"; that is the caller's to combine.
 */
import { Schema } from "effect"

export const MultiplierKind = Schema.Literal("dividend", "split")
export type MultiplierKind = typeof MultiplierKind.Type

export interface SplitRatio {
  /** New shares per `denominator` old shares: 4/1 for a 4:1 split, 1/10 for a 1:10 reverse split. */
  readonly numerator: number
  readonly denominator: number
}

export type MultiplierStep =
  | { readonly kind: "split"; readonly ratio: SplitRatio }
  | { readonly kind: "dividend" }

export const MAX_SPLIT_TERM = 20

/**
 * Multipliers are 18-decimal fixed point, so 1/3 arrives as 0.333333333333333333: a ratio counts as p/q when
 * |new·q − old·p| ≤ old·p / 10^12.
 */
const TOLERANCE = 10n ** 12n

const abs = (n: bigint): bigint => (n < 0n ? -n : n)

/** The simplest p/q (p, q ≤ 20) equal to new/old within fixed-point rounding, if any. */
export const simpleRatio = (oldMultiplier: bigint, newMultiplier: bigint): SplitRatio | undefined => {
  if (oldMultiplier <= 0n || newMultiplier <= 0n) return undefined
  for (let q = 1n; q <= BigInt(MAX_SPLIT_TERM); q++) {
    const scaled = newMultiplier * q
    const p = (scaled + oldMultiplier / 2n) / oldMultiplier
    if (p < 1n || p > BigInt(MAX_SPLIT_TERM)) continue
    if (abs(scaled - oldMultiplier * p) * TOLERANCE <= oldMultiplier * p) {
      return { numerator: Number(p), denominator: Number(q) }
    }
  }
  return undefined
}

/** |p/q − 1| ≥ 1/10, exactly. */
const farFromOne = ({ numerator, denominator }: SplitRatio): boolean =>
  Math.abs(numerator - denominator) * 10 >= denominator

export const classifyMultiplierStep = (oldMultiplier: bigint, newMultiplier: bigint): MultiplierStep => {
  const ratio = simpleRatio(oldMultiplier, newMultiplier)
  return ratio !== undefined && farFromOne(ratio) ? { kind: "split", ratio } : { kind: "dividend" }
}

export const multiplierKind = (oldMultiplier: bigint, newMultiplier: bigint): MultiplierKind =>
  classifyMultiplierStep(oldMultiplier, newMultiplier).kind
