/**
 * The chain history of `bench:scale`: on the seeded test chain (its tokens, feeds and real multiplier steps), a
 * large history over many wallets written a batch at a time with the test `Stock`'s `mintBatch` and `moveBatch`
 * (one transaction per block, up to `perTx` Transfer logs each), spread in time from the seed's last block to two
 * days ago: purchases (mints) and, every tenth transaction, sales (moves to an exchange), a few multiplier changes
 * between them.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from "viem"
import { loadArtifact } from "../chain/artifacts.js"
import type { TestNode } from "../chain/node.js"

const ONE = 10n ** 18n
const DAY = 86_400

export const walletAddress = (i: number) => `0x${(0xb5ca1e00000 + i).toString(16).padStart(40, "0")}` as Hex
export const EXCHANGE = `0x${"e8c4a4e".padStart(40, "0")}` as Hex

export interface ScaleHistory {
  readonly events: number
  readonly transactions: number
  readonly multiplierChanges: number
  /** Raw balance per token address and wallet index, as the chain has it after the history. */
  readonly balances: ReadonlyMap<string, ReadonlyArray<bigint>>
}

export const writeHistory = async (options: {
  readonly node: TestNode
  readonly tokens: ReadonlyArray<Hex>
  readonly wallets: number
  readonly events: number
  readonly perTx: number
  readonly startTime: number
  readonly progress: (done: number) => void
}): Promise<ScaleHistory> => {
  const { node, tokens, wallets, perTx } = options
  const abi = loadArtifact("Stock").abi
  const issuer = node.accounts[0]!.address
  const send = (to: Hex, data: Hex) =>
    node.request<Hex>("eth_sendTransaction", [{ from: issuer, to, data, gas: "0x1c9c380" }])
  const call = async (to: Hex, functionName: string) =>
    decodeFunctionResult({
      abi,
      functionName,
      data: await node.request<Hex>("eth_call", [{ to, data: encodeFunctionData({ abi, functionName }) }, "latest"])
    }) as bigint
  const balances = new Map(tokens.map((token) => [token, Array.from({ length: wallets }, () => 0n)]))
  const transactions = Math.ceil(options.events / perTx)
  const endTime = Math.floor(Date.now() / 1000) - 2 * DAY
  const step = Math.max(1, Math.floor((endTime - options.startTime) / (transactions + 4)))
  let time = options.startTime
  let events = 0
  let cursor = 0
  let saleCursor = 0
  let multiplierChanges = 0
  for (let k = 0; k < transactions; k++) {
    const token = tokens[k % tokens.length]!
    const held = balances.get(token)!
    const size = Math.min(perTx, options.events - events)
    time += step
    if (k > 0 && k % Math.max(1, Math.floor(transactions / 4)) === 0 && multiplierChanges < 3) {
      // A dividend step on this token: its multiplier up 0.25 %, in force at once.
      const now = await call(token, "uiMultiplier")
      await node.setNextBlockTimestamp(time++)
      await send(
        token,
        encodeFunctionData({ abi, functionName: "updateMultiplier", args: [now + now / 400n] })
      )
      multiplierChanges++
    }
    // Every tenth transaction sells one unit per log, from the wallets in turn (a wallet again if there are few).
    const sellers: Array<number> = []
    for (let found = k % 10 === 9; found && sellers.length < size;) {
      found = false
      for (let i = 0; i < wallets && sellers.length < size; i++) {
        const w = saleCursor++ % wallets
        if (held[w]! < ONE) continue
        held[w] = held[w]! - ONE
        sellers.push(w)
        found = true
      }
    }
    await node.setNextBlockTimestamp(time)
    if (sellers.length > 0) {
      await send(
        token,
        encodeFunctionData({
          abi,
          functionName: "moveBatch",
          args: [sellers.map(walletAddress), sellers.map(() => EXCHANGE), ONE]
        })
      )
      events += sellers.length
    } else {
      const buyers = Array.from({ length: size }, () => cursor++ % wallets)
      for (const w of buyers) held[w] = held[w]! + 3n * ONE
      await send(
        token,
        encodeFunctionData({ abi, functionName: "mintBatch", args: [buyers.map(walletAddress), 3n * ONE] })
      )
      events += size
    }
    options.progress(events)
  }
  return { events, transactions, multiplierChanges, balances }
}

/** One purchase of `ONE` unit by a wallet, in a block of its own: a live block. */
export const buyOne = (node: TestNode, token: Hex, wallet: Hex) =>
  node.request<Hex>("eth_sendTransaction", [{
    from: node.accounts[0]!.address,
    to: token,
    data: encodeFunctionData({ abi: loadArtifact("Stock").abi, functionName: "mint", args: [wallet, ONE] })
  }])
