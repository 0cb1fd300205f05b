import type { MovementFeatures } from "./ClassifierPort.js"

/**
 * The embedded model's view of a movement: named binary and scaled features, derived from `MovementFeatures` alone.
 * Training (scripts/train-classifier.ts) and inference share this function, so the weights always line up.
 */

const bucket = (n: number): string => n <= 0 ? "0" : n === 1 ? "1" : n <= 5 ? "2-5" : "6+"

/** The method selector as the model knows it: lowercase 0x + 8 hex, or null when absent or malformed. */
export const normaliseSelector = (selector: string | null): string | null => {
  if (selector === null) return null
  const s = selector.toLowerCase()
  return /^0x[0-9a-f]{8}$/.test(s) ? s : null
}

/** The names of the features that fire for this movement (all other features are 0). */
export const activeFeatures = (
  f: MovementFeatures,
  knownSelectors: ReadonlySet<string>
): ReadonlyArray<string> => {
  const out: Array<string> = ["bias"]
  const dir = f.direction
  const wallet = f.wallet.toLowerCase()
  const counterparty = f.counterparty.toLowerCase()
  const txFrom = f.txFrom?.toLowerCase() ?? null
  const txTo = f.txTo?.toLowerCase() ?? null
  out.push(`dir:${dir}`)
  out.push(`cpContract:${f.counterpartyIsContract}`)
  const sender = txFrom === null ? "unknown" : txFrom === wallet ? "wallet" : "other"
  out.push(`sender:${sender}`, `dir:${dir}&sender:${sender}`)
  const target = txTo === null
    ? "unknown"
    : txTo === counterparty
    ? "counterparty"
    : txTo === wallet
    ? "wallet"
    : "other"
  out.push(`target:${target}`, `dir:${dir}&target:${target}`)

  const selector = normaliseSelector(f.methodSelector)
  if (selector === null) out.push("sel:none")
  else if (knownSelectors.has(selector)) out.push(`sel:${selector}`, `dir:${dir}&sel:${selector}`)
  else out.push("sel:unseen", `dir:${dir}&sel:unseen`)

  const flowsIn = f.tokenFlows.filter((t) => t.direction === "in")
  const flowsOut = f.tokenFlows.filter((t) => t.direction === "out")
  const tokensIn = new Set(flowsIn.map((t) => t.token))
  const tokensOut = new Set(flowsOut.map((t) => t.token))
  const otherIn = [...tokensIn].some((t) => !tokensOut.has(t))
  const otherOut = [...tokensOut].some((t) => !tokensIn.has(t))
  const shape = flowsIn.length > 0 && flowsOut.length > 0
    ? (otherIn && otherOut ? "exchange" : "both-same")
    : flowsIn.length > 0
    ? "in-only"
    : flowsOut.length > 0
    ? "out-only"
    : "none"
  out.push(`flows:${shape}`, `dir:${dir}&flows:${shape}`)
  out.push(`flowsIn:${bucket(flowsIn.length)}`, `flowsOut:${bucket(flowsOut.length)}`)
  out.push(`distinctTokens:${bucket(new Set(f.tokenFlows.map((t) => t.token)).size)}`)

  out.push(`priorIn:${bucket(f.priorIn)}`, `priorOut:${bucket(f.priorOut)}`)
  const history = f.priorIn > 0 && f.priorOut > 0
    ? "both"
    : f.priorIn > 0
    ? "in"
    : f.priorOut > 0
    ? "out"
    : "new"
  out.push(`history:${history}`, `dir:${dir}&history:${history}`)
  return out
}
